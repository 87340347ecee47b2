#!/usr/bin/env python3
"""ctrl_sniff.py SECONDS [READY] -- the PPTP control messages the server sent here.

Run in a client's network namespace: a raw TCP socket receives a copy of
every TCP segment that reaches this host. Segments from port 1723 are put
back in order by sequence number (retransmissions counted once), framed as
PPTP control messages, and their names printed one per line, in order, when
SECONDS are over or the connection is closed (FIN or RST from the server).
READY, if given, is a file created once the socket listens (Python starts
slowly in the emulated VM: a test waits for it).
"""
import socket
import struct
import sys
import time

PPTP_PORT = 1723
PPTP_MAGIC = 0x1A2B3C4D
NAMES = {1: "SCCRQ", 2: "SCCRP", 3: "StopCCRQ", 4: "StopCCRP", 5: "EchoRQ",
         6: "EchoRP", 7: "OCRQ", 8: "OCRP", 9: "ICRQ", 10: "ICRP",
         11: "ICCN", 12: "CCRQ", 13: "CDN", 14: "WEN", 15: "SLI"}
TCP_FIN, TCP_RST = 0x01, 0x04


def main():
    end = time.monotonic() + float(sys.argv[1])
    sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP)
    sock.settimeout(0.5)
    if len(sys.argv) > 2:
        open(sys.argv[2], "w").close()
    segs = {}
    while time.monotonic() < end:
        try:
            pkt = sock.recv(65535)
        except socket.timeout:
            continue
        tcp = pkt[(pkt[0] & 0x0F) * 4:]
        if len(tcp) < 20 or struct.unpack("!H", tcp[0:2])[0] != PPTP_PORT:
            continue
        seq = struct.unpack("!I", tcp[4:8])[0]
        payload = tcp[(tcp[12] >> 4) * 4:]
        if payload:
            segs.setdefault(seq, payload)
        if tcp[13] & (TCP_FIN | TCP_RST):
            break
    stream = b"".join(segs[s] for s in sorted(segs))
    off = 0
    while off + 12 <= len(stream):
        length, _, magic, ctype = struct.unpack("!HHIH", stream[off:off + 10])
        if magic != PPTP_MAGIC or length < 12:
            print("garbage")
            break
        print(NAMES.get(ctype, "type-%d" % ctype))
        off += length


if __name__ == "__main__":
    main()
