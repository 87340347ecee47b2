#!/usr/bin/env python3
"""How long the server takes to acknowledge the client's GRE data packets,
seen on the client's end of the test bed's veth (run in netns `cli`):

    python3 regress/acksniff.py DEV

Prints `ready` once it listens; on SIGTERM prints one JSON line: the
median and 90th percentile (ms) of, for each data packet the client sent,
the time until the first packet from the server whose ack covers it,
and how many were measured. Only the client's egress and the server's
packets are read, so the figure is the server's ack timing plus the
path's delay (the same for every version on one path).

Why: neither client of the test bed (pptp-linux, pptp-load) waits for the
server's acks, so a server that acks late loses no throughput here as it
would with a client that honours the window (Windows): its ack timing
must be measured on the wire.
"""

import json
import signal
import socket
import struct
import sys
import time

ETH_P_IP = 0x0800
# The kernel hands a packet it sends to packet sockets of every protocol
# only (dev_queue_xmit_nit: ptype_all), so the socket takes them all and
# the IPv4 ones are picked here.
ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
IPPROTO_GRE = 47
GRE_PPTP = 0x880B
FLAG_S, FLAG_A = 0x10, 0x80
ETH_HLEN = 14
# Data packets sent and not yet acked that are kept: a server that never
# acks must not grow this without bound.
PENDING_MAX = 100000


def gre_fields(frame):
    """(seq or None, ack or None) of an enhanced GRE packet in an Ethernet
    frame, or None for anything else."""
    if len(frame) < ETH_HLEN + 20 or \
            struct.unpack("!H", frame[12:14])[0] != ETH_P_IP:
        return None
    ip = frame[ETH_HLEN:]
    if ip[0] >> 4 != 4 or ip[9] != IPPROTO_GRE:
        return None
    g = ip[(ip[0] & 0x0F) * 4:]
    if len(g) < 8 or struct.unpack("!H", g[2:4])[0] != GRE_PPTP:
        return None
    off, seq, ack = 8, None, None
    if g[0] & FLAG_S:
        if len(g) < off + 4:
            return None
        seq = struct.unpack("!I", g[off:off + 4])[0]
        off += 4
    if g[1] & FLAG_A:
        if len(g) < off + 4:
            return None
        ack = struct.unpack("!I", g[off:off + 4])[0]
    return seq, ack


def covers(ack, seq):
    """Serial number arithmetic (RFC 1982): ack is at or after seq."""
    return (ack - seq) & 0xFFFFFFFF < 0x80000000


class Acks:
    def __init__(self):
        self.pending = []       # (seq, time sent), in sending order
        self.delays = []        # ms

    def sent(self, seq, t):
        if len(self.pending) < PENDING_MAX:
            self.pending.append((seq, t))

    def acked(self, ack, t):
        n = 0
        while n < len(self.pending) and covers(ack, self.pending[n][0]):
            self.delays.append((t - self.pending[n][1]) * 1000.0)
            n += 1
        del self.pending[:n]

    def summary(self):
        d = sorted(self.delays)
        if not d:
            return {"n": 0, "median_ms": None, "p90_ms": None}
        return {"n": len(d), "median_ms": round(d[len(d) // 2], 3),
                "p90_ms": round(d[min(len(d) - 1, len(d) * 9 // 10)], 3),
                "unacked": len(self.pending)}


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[4], file=sys.stderr)
        return 2
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                      socket.htons(ETH_P_ALL))
    s.bind((argv[1], ETH_P_ALL))
    acks = Acks()
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    s.settimeout(0.2)
    print("ready", flush=True)
    while not stop:
        try:
            frame, addr = s.recvfrom(65535)
        except socket.timeout:
            continue
        except InterruptedError:
            continue
        t = time.monotonic()
        f = gre_fields(frame)
        if f is None:
            continue
        seq, ack = f
        if addr[2] == PACKET_OUTGOING:
            if seq is not None:
                acks.sent(seq, t)
        elif ack is not None:
            acks.acked(ack, t)
    print(json.dumps(acks.summary()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
