"""PPTP wire formats (RFC 2637) for the attack client and the fuzz seeds.

Standard library only. Everything is built by hand with struct so that a test
can produce exactly the malformed bytes it wants.
"""
import struct

MAGIC = 0x1A2B3C4D
PORT = 1723
VERSION = 0x0100

SCCRQ, SCCRP, STOPCCRQ, STOPCCRP, ECHORQ, ECHORP, OCRQ, OCRP, ICRQ, ICRP, \
    ICCN, CCRQ, CDN, WEN, SLI = range(1, 16)

LENGTHS = {SCCRQ: 156, SCCRP: 156, STOPCCRQ: 16, STOPCCRP: 16, ECHORQ: 16,
           ECHORP: 20, OCRQ: 168, OCRP: 32, ICRQ: 220, ICRP: 24, ICCN: 28,
           CCRQ: 16, CDN: 148, WEN: 40, SLI: 24}
NAMES = {SCCRQ: "SCCRQ", SCCRP: "SCCRP", STOPCCRQ: "StopCCRQ",
         STOPCCRP: "StopCCRP", ECHORQ: "Echo-Request", ECHORP: "Echo-Reply",
         OCRQ: "OCRQ", OCRP: "OCRP", ICRQ: "ICRQ", ICRP: "ICRP", ICCN: "ICCN",
         CCRQ: "CCRQ", CDN: "CDN", WEN: "WEN", SLI: "SLI"}


def header(ctype, length=None, msgtype=1, magic=MAGIC, reserved=0):
    if length is None:
        length = LENGTHS[ctype]
    return struct.pack("!HHIHH", length & 0xFFFF, msgtype, magic, ctype,
                       reserved)


def message(ctype, body, **kw):
    """Header + body, padded/truncated to the type's length unless the
    caller overrides `length` (then the body is sent as given)."""
    if "length" in kw:
        return header(ctype, **kw) + body
    want = LENGTHS[ctype] - 12
    body = body[:want].ljust(want, b"\0")
    return header(ctype, **kw) + body


def _s(text, n):
    return text.encode()[:n].ljust(n, b"\0")


def sccrq(version=VERSION, framing=1, bearer=1, max_channels=0, firmware=0,
          host="attack", vendor="pptpd-attack", **kw):
    body = struct.pack("!HHIIHH", version, 0, framing, bearer, max_channels,
                       firmware) + _s(host, 64) + _s(vendor, 64)
    return message(SCCRQ, body, **kw)


def stopccrq(reason=1, **kw):
    return message(STOPCCRQ, struct.pack("!BBH", reason, 0, 0), **kw)


def echorq(ident, **kw):
    return message(ECHORQ, struct.pack("!I", ident), **kw)


def echorp(ident, result=1, **kw):
    return message(ECHORP, struct.pack("!IBBH", ident, result, 0, 0), **kw)


def ocrq(call_id, serial=1, min_bps=300, max_bps=100000000, bearer=3,
         framing=3, window=64, delay=0, phone="", subaddr="", **kw):
    body = struct.pack("!HHIIIIHHHH", call_id, serial, min_bps, max_bps,
                       bearer, framing, window, delay, len(phone), 0) + \
        _s(phone, 64) + _s(subaddr, 64)
    return message(OCRQ, body, **kw)


def icrq(call_id, serial=1, **kw):
    body = struct.pack("!HHIIHH", call_id, serial, 1, 0, 0, 0)
    return message(ICRQ, body, **kw)


def ccrq(call_id, **kw):
    return message(CCRQ, struct.pack("!HH", call_id, 0), **kw)


def wen(peer_call_id, **kw):
    return message(WEN, struct.pack("!HHIIIIII", peer_call_id, 0, 1, 2, 3, 4,
                                    5, 6), **kw)


def sli(peer_call_id, send_accm=0xFFFFFFFF, recv_accm=0xFFFFFFFF, **kw):
    return message(SLI, struct.pack("!HHII", peer_call_id, 0, send_accm,
                                    recv_accm), **kw)


def cdn(call_id, result=4, **kw):
    return message(CDN, struct.pack("!HBBH", call_id, result, 0, 0) +
                   _s("stats", 128), **kw)


def parse(buf):
    """Split a byte stream into complete messages: returns (messages, rest),
    each message a dict with type, name and the fields we look at."""
    out = []
    while len(buf) >= 12:
        length, msgtype, magic, ctype, _ = struct.unpack("!HHIHH", buf[:12])
        if magic != MAGIC or length < 12:
            raise ValueError("bad message from server: %r" % buf[:12])
        if len(buf) < length:
            break
        raw, buf = buf[:length], buf[length:]
        m = {"type": ctype, "name": NAMES.get(ctype, "?%d" % ctype),
             "raw": raw}
        if ctype == SCCRP:
            m["version"], m["result"], m["error"] = struct.unpack(
                "!HBB", raw[12:16])
        elif ctype == OCRP:
            (m["call_id"], m["peer_call_id"], m["result"], m["error"]) = \
                struct.unpack("!HHBB", raw[12:18])
        elif ctype in (ECHORQ, ECHORP):
            m["id"] = struct.unpack("!I", raw[12:16])[0]
            if ctype == ECHORP:
                m["result"] = raw[16]
        elif ctype == CDN:
            m["call_id"], m["result"], m["error"] = struct.unpack(
                "!HBB", raw[12:16])
        elif ctype == ICRP:
            m["call_id"], m["peer_call_id"], m["result"] = struct.unpack(
                "!HHB", raw[12:17])
        elif ctype in (STOPCCRQ, STOPCCRP):
            m["result"] = raw[12]
        out.append(m)
    return out, buf


# --- enhanced GRE (RFC 2637 4.1) ---
GRE_PROTO = 0x880B


def gre(call_id, payload=b"", seq=None, ack=None, length=None, flags=None,
        proto=GRE_PROTO):
    """An enhanced GRE header (+ payload). `call_id` is the receiver's Call
    ID. length overrides the payload length field; flags the first two
    bytes."""
    f = 0x2001  # K, version 1
    if seq is not None:
        f |= 0x1000
    if ack is not None:
        f |= 0x0080
    if flags is not None:
        f = flags
    if length is None:
        length = len(payload)
    h = struct.pack("!HHHH", f, proto, length & 0xFFFF, call_id)
    if seq is not None:
        h += struct.pack("!I", seq & 0xFFFFFFFF)
    if ack is not None:
        h += struct.pack("!I", ack & 0xFFFFFFFF)
    return h + payload


def gre_parse(pkt):
    """Parse an enhanced GRE packet (no IP header): dict or None."""
    if len(pkt) < 8:
        return None
    f, proto, length, call_id = struct.unpack("!HHHH", pkt[:8])
    off = 8
    d = {"flags": f, "proto": proto, "length": length, "call_id": call_id,
         "seq": None, "ack": None}
    if f & 0x1000:
        if len(pkt) < off + 4:
            return None
        d["seq"] = struct.unpack("!I", pkt[off:off + 4])[0]
        off += 4
    if f & 0x0080:
        if len(pkt) < off + 4:
            return None
        d["ack"] = struct.unpack("!I", pkt[off:off + 4])[0]
        off += 4
    d["payload"] = pkt[off:off + length]
    return d
