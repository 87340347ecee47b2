#!/usr/bin/env python3
"""UDP echo service for scripts/hostbed: every datagram to PORT goes back
to its sender unchanged (the far end of pptp-load's echo streams until
client/pptp-echo replaces it).

    echo.py [PORT [ADDRESS]]      default: 7 on every address
"""
import socket
import sys


def main():
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    addr = sys.argv[2] if len(sys.argv) > 2 else "0.0.0.0"
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.bind((addr, port))
    while True:
        data, peer = s.recvfrom(65535)
        try:
            s.sendto(data, peer)
        except OSError:
            pass  # a peer gone (its ppp interface) costs that datagram only


if __name__ == "__main__":
    main()
