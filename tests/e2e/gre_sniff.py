#!/usr/bin/env python3
"""gre_sniff.py SECONDS -- which GRE data sequence numbers reached this host.

Run in the server's network namespace while a client sends: a raw GRE
socket receives a copy of every GRE packet. For the call that sent the most
packets it prints one line:

    call CALL_ID packets N first F last L missing M [seq ...]

"missing" counts the sequence numbers between the first and the last seen
that never arrived: packets the client (or the link) lost before our server
could see them. A test compares it with what the server reports it lost.
"""
import socket
import struct
import sys
import time

GRE_PROTO_PPTP = 0x880B
GRE_FLAG_S = 0x10


def main():
    duration = float(sys.argv[1])
    sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_GRE)
    sock.settimeout(0.5)
    seen = {}
    end = time.monotonic() + duration
    while time.monotonic() < end:
        try:
            pkt = sock.recv(65535)
        except socket.timeout:
            continue
        gre = pkt[(pkt[0] & 0x0F) * 4:]
        if len(gre) < 12 or struct.unpack("!H", gre[2:4])[0] != GRE_PROTO_PPTP:
            continue
        if not gre[0] & GRE_FLAG_S:
            continue
        call_id = struct.unpack("!H", gre[6:8])[0]
        seq = struct.unpack("!I", gre[8:12])[0]
        seen.setdefault(call_id, []).append(seq)
    if not seen:
        print("call - packets 0 first - last - missing 0")
        return
    call_id, seqs = max(seen.items(), key=lambda kv: len(kv[1]))
    first, last = seqs[0], seqs[-1]
    span = (last - first) % 2**32 + 1
    got = {(s - first) % 2**32 for s in seqs}
    missing = [(first + d) % 2**32 for d in range(span) if d not in got]
    print("call %d packets %d first %d last %d missing %d %s" % (
        call_id, len(seqs), first, last, len(missing),
        " ".join(str(m) for m in missing[:20])))


if __name__ == "__main__":
    main()
