#!/usr/bin/env python3
"""mss_probe.py -- the two ends of tests/e2e/test_mss.sh's TCP check.

  mss_probe.py serve ADDR PORT NBYTES LOG
      A host on the server's LAN side: every connection gets NBYTES and is
      closed; LOG gets one line per connection, "peer_mss=N", the MSS this
      host sends with (TCP_MAXSEG: at most what the peer's SYN offered).
  mss_probe.py fetch IFACE HOST PORT NBYTES SECONDS
      The client: connects to HOST:PORT, reads the SYN-ACK's MSS option as
      it arrives on IFACE (a packet socket on the client's ppp interface),
      then reads until NBYTES have come or SECONDS have passed. Prints
      "synack_mss=N bytes=N seconds=S" (synack_mss=0: none seen).
"""
import select
import socket
import struct
import sys
import time

ETH_P_IP = 0x0800
TCP_OPT_END, TCP_OPT_NOP, TCP_OPT_MSS = 0, 1, 2


def serve(addr, port, nbytes, log):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen(8)
    chunk = b"x" * 65536
    while True:
        c, _ = s.accept()
        mss = c.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG)
        with open(log, "a") as f:
            f.write("peer_mss=%d\n" % mss)
        left = nbytes
        try:
            c.settimeout(60)
            while left > 0:
                n = c.send(chunk[:min(left, len(chunk))])
                left -= n
        except OSError:
            pass
        c.close()


def tcp_mss(pkt, sport, dport):
    """The MSS option of a SYN-ACK from sport to dport in IPv4 packet pkt."""
    if len(pkt) < 20 or pkt[0] >> 4 != 4 or pkt[9] != socket.IPPROTO_TCP:
        return None
    ihl = (pkt[0] & 0x0F) * 4
    tcp = pkt[ihl:]
    if len(tcp) < 20:
        return None
    sp, dp = struct.unpack("!HH", tcp[:4])
    flags = tcp[13]
    if sp != sport or dp != dport or (flags & 0x12) != 0x12:
        return None
    off = (tcp[12] >> 4) * 4
    opts = tcp[20:off]
    i = 0
    while i < len(opts):
        kind = opts[i]
        if kind == TCP_OPT_END:
            break
        if kind == TCP_OPT_NOP:
            i += 1
            continue
        if i + 1 >= len(opts) or opts[i + 1] < 2:
            break
        if kind == TCP_OPT_MSS and opts[i + 1] == 4:
            return struct.unpack("!H", opts[i + 2:i + 4])[0]
        i += opts[i + 1]
    return 0


def fetch(iface, host, port, nbytes, seconds):
    sniff = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM,
                          socket.htons(ETH_P_IP))
    sniff.bind((iface, ETH_P_IP))
    c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    c.bind(("0.0.0.0", 0))
    lport = c.getsockname()[1]
    t0 = time.monotonic()
    c.settimeout(seconds)
    c.connect((host, port))
    synack = 0
    # The SYN-ACK is queued on the packet socket by the time connect()
    # returns; what else crossed since is read past.
    while True:
        r, _, _ = select.select([sniff], [], [], 1.0)
        if not r:
            break
        m = tcp_mss(sniff.recv(65535), port, lport)
        if m is not None:
            synack = m
            break
    sniff.close()
    got = 0
    end = t0 + seconds
    c.setblocking(False)
    while got < nbytes:
        left = end - time.monotonic()
        if left <= 0:
            break
        r, _, _ = select.select([c], [], [], left)
        if not r:
            break
        try:
            d = c.recv(65536)
        except BlockingIOError:
            continue
        except OSError:
            break
        if not d:
            break
        got += len(d)
    print("synack_mss=%d bytes=%d seconds=%.2f" % (synack, got,
                                                   time.monotonic() - t0))


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "serve":
        serve(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    elif len(sys.argv) == 7 and sys.argv[1] == "fetch":
        fetch(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]),
              float(sys.argv[6]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
