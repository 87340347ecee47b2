#!/usr/bin/env python3
"""wire_log.py IFACE OUT READY -- a timestamped log of PPTP on one interface.

Run in the server's network namespace on its bridge: an AF_PACKET socket
sees every frame both ways. Each PPTP control message (TCP port 1723) and
each GRE packet is written to OUT as one line

    EPOCH_SECONDS SRC>DST ctrl OCRP
    EPOCH_SECONDS SRC>DST gre call=ID seq=N ack=N LCP ConfReq id=1

(the PPP part only where the frame is not encrypted: LCP, PAP/CHAP, CCP,
IPCP; MPPE data shows as "ppp 00fd"). The clock is the wall clock, as bash's
EPOCHREALTIME, so a test can put its own events on the same time line.
READY is created once the socket listens. Runs until killed.

Where a dial-in loses its time: an LCP Configure-Request that goes out
before the client has its GRE up is lost, and pppd waits its restart timer
(3 s by default) to send it again.
"""
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
ETH_P_IP = 0x0800
IPPROTO_TCP, IPPROTO_GRE = 6, 47
PPTP_PORT = 1723
PPTP_MAGIC = 0x1A2B3C4D
GRE_PROTO_PPP = 0x880B
GRE_FLAG_S, GRE_FLAG_A = 0x1000, 0x0080
CTRL = {1: "SCCRQ", 2: "SCCRP", 3: "StopCCRQ", 4: "StopCCRP", 5: "EchoRQ",
        6: "EchoRP", 7: "OCRQ", 8: "OCRP", 9: "ICRQ", 10: "ICRP", 11: "ICCN",
        12: "CCRQ", 13: "CDN", 14: "WEN", 15: "SLI"}
PPP = {0xC021: "LCP", 0xC223: "CHAP", 0xC023: "PAP", 0x80FD: "CCP",
       0x8021: "IPCP", 0x00FD: "MPPE"}
CP_CODES = {1: "ConfReq", 2: "ConfAck", 3: "ConfNak", 4: "ConfRej",
            5: "TermReq", 6: "TermAck", 7: "CodeRej", 8: "ProtRej",
            9: "EchoReq", 10: "EchoRep", 11: "DiscReq"}


def ppp_text(p):
    if p[:2] == b"\xff\x03":
        p = p[2:]
    if not p:
        return "ppp empty"
    if p[0] & 1:
        proto, p = p[0], p[1:]
    elif len(p) >= 2:
        proto, p = struct.unpack("!H", p[:2])[0], p[2:]
    else:
        return "ppp short"
    name = PPP.get(proto, "ppp %04x" % proto)
    if proto in (0xC021, 0x80FD, 0x8021) and len(p) >= 2:
        return "%s %s id=%d" % (name, CP_CODES.get(p[0], str(p[0])), p[1])
    if proto == 0xC223 and len(p) >= 2:
        return "CHAP code=%d id=%d" % (p[0], p[1])
    return name


def gre_text(g):
    if len(g) < 8:
        return None
    flags, proto, plen, call = struct.unpack("!HHHH", g[:8])
    if proto != GRE_PROTO_PPP:
        return None
    off, seq, ack = 8, "-", "-"
    if flags & GRE_FLAG_S:
        seq = struct.unpack("!I", g[off:off + 4])[0]
        off += 4
    if flags & GRE_FLAG_A:
        ack = struct.unpack("!I", g[off:off + 4])[0]
        off += 4
    text = "gre call=%d seq=%s ack=%s" % (call, seq, ack)
    if plen:
        text += " " + ppp_text(g[off:off + plen])
    return text


def tcp_texts(t):
    if len(t) < 20:
        return []
    sport, dport = struct.unpack("!HH", t[:4])
    if PPTP_PORT not in (sport, dport):
        return []
    pay = t[(t[12] >> 4) * 4:]
    out = []
    off = 0
    # Segments of the control connection carry whole messages here (each
    # is written at once and the link does not split them).
    while off + 10 <= len(pay):
        length, _, magic, ctype = struct.unpack("!HHIH", pay[off:off + 10])
        if magic != PPTP_MAGIC or length < 12:
            break
        out.append("ctrl " + CTRL.get(ctype, "type-%d" % ctype))
        off += length
    return out


def main():
    iface, out, ready = sys.argv[1:4]
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((iface, 0))
    open(ready, "w").close()
    with open(out, "a", buffering=1) as f:
        while True:
            frame, addr = s.recvfrom(65535)
            now = time.time()
            if addr[1] != ETH_P_IP or len(frame) < 34:
                continue
            ip = frame[14:]
            ihl = (ip[0] & 0x0F) * 4
            src = socket.inet_ntoa(ip[12:16])
            dst = socket.inet_ntoa(ip[16:20])
            body = ip[ihl:]
            if ip[9] == IPPROTO_GRE:
                texts = [gre_text(body)]
            elif ip[9] == IPPROTO_TCP:
                texts = tcp_texts(body)
            else:
                continue
            for t in texts:
                if t:
                    f.write("%.6f %s>%s %s\n" % (now, src, dst, t))


if __name__ == "__main__":
    main()
