#!/usr/bin/env python3
"""Write the seed corpora of the control-message harnesses (fuzz_msg,
fuzz_ctrl) from the message builders of the attack client. Run from anywhere:
    python3 fuzz/gen_corpus.py
Regression inputs from crashes are added by hand next to these and must not
be named seed-*."""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tests", "attack"))
import pptpwire as w  # noqa: E402

FIRST_CALL_ID = 0x100   # what fuzz_ctrl's stand-in call_new hands out

sessions = {
    # A pptp-linux style session, start to end.
    "linux": w.sccrq(host="local", vendor="cananian") + w.ocrq(0x1234) +
    w.sli(FIRST_CALL_ID) + w.echorq(7) + w.echorp(1) + w.ccrq(0x1234) +
    w.stopccrq(),
    # Windows: vendor Microsoft, two SLIs, a GUID-like subaddress.
    "windows": w.sccrq(host="", vendor="Microsoft", firmware=0) +
    w.ocrq(0xbeef, window=64, subaddr="{6a2c5a42-0d56-4c1c-9b7e-8f0f3c5d1e11}")
    + w.sli(FIRST_CALL_ID) + w.sli(FIRST_CALL_ID, 0, 0) + w.wen(0xbeef),
    # Several calls on one connection, one incoming-call attempt.
    "calls": w.sccrq() + w.ocrq(1) + w.ocrq(2) + w.ocrq(3, serial=0x8001) +
    w.icrq(9) + w.ccrq(2) + w.sli(FIRST_CALL_ID + 1) + w.ccrq(77),
    # Order abuse.
    "order": w.ocrq(5) + w.sccrq() + w.sccrq(),
    "stop": w.sccrq() + w.stopccrq(),
    "badver": w.sccrq(version=0x0200),
    # What a PAC sends, not a PNS.
    "pacmsgs": w.sccrq() + w.cdn(1) + w.message(w.OCRP, b"") +
    w.message(w.ICRP, b"") + w.message(w.ICCN, b"") + w.message(w.SCCRP, b""),
    # Malformed headers.
    "len0": w.header(w.SCCRQ, length=0) + b"\0" * 8,
    "len1": w.header(w.SCCRQ, length=1),
    "len65535": w.header(w.SCCRQ, length=65535) + b"\0" * 200,
    "badmagic": w.sccrq(magic=0xdeadbeef),
    "badtype": w.header(99, length=16) + b"\0" * 4,
    "mismatch": w.header(w.ECHORQ, length=156) + b"\0" * 144,
    "truncated": w.sccrq()[:100],
    # Echo-Requests from a peer that never reads the replies.
    "echo-noread": w.sccrq() + b"".join(w.echorq(i) for i in range(40)),
}

# fuzz_ctrl: flags byte (1: do not read replies, 2: echo timer, 4: setup
# timer, 8: calls end, 16: peer hangs up), 2 seed bytes, stream.
ctrl_variants = [(0x00, 0x0001), (0x1e, 0x0102), (0x01, 0x4242)]
# (32: the stream 64 times over, 64: replies never read)

written = 0
ctrl_extra = {"echo-noread": [(0x60, 0x0007)]}
for name, stream in sessions.items():
    for d, pre in (("msg", [b"\x00\x01", b"\x7a\x13"]),
                   ("ctrl", [bytes([f, s >> 8, s & 255])
                             for f, s in ctrl_variants +
                             ctrl_extra.get(name, [])])):
        os.makedirs(os.path.join(here, "corpus", d), exist_ok=True)
        for i, p in enumerate(pre):
            path = os.path.join(here, "corpus", d, "seed-%s-%d" % (name, i))
            with open(path, "wb") as f:
                f.write(p + stream)
            written += 1
print("wrote %d seed files" % written)

# fuzz_gre: records (see fuzz_gre.c).
import struct  # noqa: E402


def rec_struct(delta, unit, ms=0):
    return bytes([ms & 0x3f]) + struct.pack("!hB", delta, unit)


def rec_raw(pkt, ip=True, ms=0):
    if ip:
        total = 20 + len(pkt)
        iph = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, 1, 0, 64, 47, 0,
                          bytes([198, 18, 0, 2]), bytes([198, 18, 0, 1]))
        pkt = iph + pkt
    return bytes([0x80 | (0x40 if ip else 0) | (ms & 0x3f)]) + \
        struct.pack("!H", len(pkt)) + pkt


CID = 0x4242
lcp = bytes.fromhex("ff03c021010100140104057801040578050601020304")
gre_seeds = {
    "inorder": b"".join(rec_struct(1, 10) for _ in range(20)),
    "reorder": rec_struct(1, 5) + rec_struct(2, 5) + rec_struct(-1, 5) +
    rec_struct(3, 5) + rec_struct(-2, 5) + rec_struct(1, 5, 30),
    "dups": rec_struct(1, 3) + rec_struct(0, 3) + rec_struct(1, 3) +
    rec_struct(-1, 3) + rec_struct(5, 3) + rec_struct(0, 3),
    # A jump or far-off run is believed only once the stream has been
    # quiet for SEQ_QUIET_MS (500): the clock moves 126 ms per record at
    # most, so 4 quiet records; a run while the stream flows is not.
    "jump": rec_struct(1, 4) + rec_struct(1000, 4) + rec_struct(1, 4) +
    rec_struct(1, 4),
    "jump-quiet": rec_struct(1, 4) + rec_struct(1000, 4, 63) +
    rec_struct(1, 4, 63) + rec_struct(1, 4, 63) + rec_struct(1, 4, 63) +
    rec_struct(1, 4),
    "far": rec_struct(1, 4) + b"".join(rec_struct(30000 if i == 0 else 1, 4)
                                       for i in range(9)),
    "far-quiet": rec_struct(1, 4) + b"".join(
        rec_struct(30000 if i == 0 else 1, 4, 63 if i < 4 else 0)
        for i in range(10)),
    # forged in-window numbers take the stream's place; the real stream,
    # now behind, is believed again once quiet (backward resync), and a
    # replay below the floor afterwards is not
    "back-resync": rec_struct(1, 4) + rec_struct(1, 4) +
    b"".join(rec_struct(1, 3) for _ in range(20)) + rec_struct(-19, 4, 50) +
    b"".join(rec_struct(1, 4, 50) for _ in range(12)) +
    rec_struct(-8, 4, 63) + b"".join(rec_struct(1, 4, 63) for _ in range(6)),
    "gap-timeout": rec_struct(1, 2) + rec_struct(3, 2) + rec_struct(1, 2) +
    rec_struct(0, 0, 63) + rec_struct(1, 2),
    "big": rec_struct(1, 255) + rec_struct(2, 230) + rec_struct(-1, 1),
    "raw-data": rec_raw(w.gre(CID, lcp, seq=1)) +
    rec_raw(w.gre(CID, lcp, seq=2, ack=7)) +
    rec_raw(w.gre(CID, ack=9)) + rec_raw(w.gre(CID, lcp, seq=2)),
    "raw-noip": rec_raw(w.gre(CID, lcp, seq=1), ip=False) +
    rec_raw(w.gre(CID, lcp, seq=3, ack=1), ip=False),
    "raw-bad": rec_raw(w.gre(CID, lcp, seq=1, length=4000)) +
    rec_raw(w.gre(CID, lcp, seq=1, flags=0x3081 | 0x8000)) +
    rec_raw(w.gre(CID, lcp, seq=1, proto=0x0800)) +
    rec_raw(w.gre(0x1111, lcp, seq=1)) + rec_raw(w.gre(CID)[:6]),
    # payload length short of the datagram (once taken as padding), then
    # the real packet with that number
    "raw-short-length": rec_raw(w.gre(CID, lcp, seq=1)) +
    rec_raw(w.gre(CID, lcp, seq=2, length=4)) +
    rec_raw(w.gre(CID, lcp + b"\0" * 3, seq=2, length=len(lcp))) +
    rec_raw(w.gre(CID, lcp, seq=2, length=4), ip=False) +
    rec_raw(w.gre(CID, b"\0", ack=3, length=0)) +
    rec_raw(w.gre(CID, lcp, seq=2)),
}
os.makedirs(os.path.join(here, "corpus", "gre"), exist_ok=True)
for name, data in gre_seeds.items():
    with open(os.path.join(here, "corpus", "gre", "seed-" + name), "wb") as f:
        f.write(data)
print("wrote %d gre seeds" % len(gre_seeds))

# fuzz_engine: operations (see fuzz_engine.c).


def e_data(call, delta=1, unit=10, ack=False, wrong=False, ackd=0):
    return bytes([0x40 | call | (2 if ack else 0) | (4 if wrong else 0)]) + \
        struct.pack("!hBB", delta, unit, ackd)


def e_ack(call, d=0):
    return bytes([0x60 | call, d])


def e_pty(call, frame, encode=True):
    n = max(0, (len(frame) - 1) // 8)
    frame = frame[:1 + n * 8].ljust(1 + n * 8, b"\0")
    return bytes([0x80 | call | (2 if encode else 0), n]) + frame


def e_time(ms):
    return bytes([0xA0 | min(31, ms // 4)])


def e_drain(call):
    return bytes([0xC0 | call])


def e_misc(call, sub, arg=b""):
    return bytes([0xE0 | (sub << 1) | call]) + (arg or b"\0")


def e_raw(src, gre_bytes):
    return bytes([(src & 3) << 1]) + struct.pack("!H", len(gre_bytes)) + \
        gre_bytes


lcp = bytes.fromhex("ff03c021010100140104057801040578050601020304")
engine_seeds = {
    "inorder": b"".join(e_data(0) + e_drain(0) for _ in range(10)),
    "both-ways": e_data(0) + e_pty(0, lcp) + e_data(0, ack=True) +
    e_pty(0, lcp + b"x") + e_ack(0) + e_time(120) + e_drain(0) +
    e_data(1) + e_pty(1, lcp) + e_drain(1),
    "reorder-gap": e_data(0) + e_data(0, 2) + e_data(0, -1) + e_data(0, 3) +
    e_time(60) + e_time(60) + e_drain(0),
    "backpressure": b"".join(e_data(0, unit=200) for _ in range(40)) +
    e_time(10) + e_drain(0) + b"".join(e_data(0, unit=200) for _ in range(10))
    + e_drain(0) + e_drain(0),
    "wrong-source": e_data(0) + e_data(0, wrong=True) + e_data(1, 0) +
    e_raw(2, w.gre(0x4242, lcp, seq=5)) + e_raw(1, w.gre(0x4242, lcp, seq=2))
    + e_drain(0),
    "pty-close": e_data(0) + e_pty(0, lcp) + e_misc(0, 2) + e_data(0) +
    e_time(200) + e_misc(0, 5) + e_data(1),
    "txfail": e_misc(0, 4, b"\x01") + e_pty(0, lcp) + e_pty(0, lcp) +
    e_misc(0, 4, b"\x03") + e_pty(0, lcp * 3) + e_misc(0, 4, b"\x02") +
    e_data(0, ack=True) + e_time(150) + e_misc(0, 4, b"\x00") + e_pty(0, lcp),
    "accm-window": e_misc(0, 0, b"\0" * 8) + e_misc(0, 1, b"\x00\x03") +
    e_data(0) + e_pty(0, bytes(range(40))) + e_drain(0),
    "raw-malformed": e_raw(0, w.gre(0x4242, lcp, seq=1, length=4000)) +
    e_raw(0, w.gre(0x4242, lcp, seq=1, flags=0xB081)) +
    e_raw(0, w.gre(0x4242)[:7]) + e_raw(0, w.gre(0x0001, lcp, seq=9)) +
    e_drain(0),
    "raw-short-length": e_data(0) + e_raw(0, w.gre(0x4242, lcp, seq=2,
                                                   length=4)) +
    e_raw(0, w.gre(0x4242, lcp + b"\0" * 8, seq=2, length=len(lcp))) +
    e_data(0) + e_drain(0),
    "free-busy": e_data(0, unit=100) + e_data(0, 3) + e_pty(0, lcp) +
    e_misc(0, 5) + e_time(200) + e_data(1),
}
os.makedirs(os.path.join(here, "corpus", "engine"), exist_ok=True)
for name, data in engine_seeds.items():
    with open(os.path.join(here, "corpus", "engine", "seed-" + name),
              "wb") as f:
        f.write(data)
print("wrote %d engine seeds" % len(engine_seeds))

# Reach the bounds: a backlog filled past 256 KiB while pppd does not read
# (frames dropped, not queued forever), and a datagram longer than the
# receive buffer (reported truncated by the kernel).
engine_bounds = {
    "backlog-full": b"".join(e_data(0, unit=255) for _ in range(160)) +
    e_drain(0) + e_time(10) + e_drain(0),
    "stage-full": b"".join(e_data(i & 1, unit=255) for i in range(300)) +
    e_time(10) + e_drain(0) + e_drain(1),
    "truncated-datagram": e_raw(0, w.gre(0x4242, b"\xff\x03" + b"A" * 2198,
                                         seq=1)) + e_drain(0),
}
for name, data in engine_bounds.items():
    with open(os.path.join(here, "corpus", "engine", "seed-" + name),
              "wb") as f:
        f.write(data)
print("wrote %d engine bound seeds" % len(engine_bounds))

# fuzz_dae: flags byte (bit 0: the harness signs the packet), then one
# RADIUS datagram as radclient would send it to UDP 3799, or broken.


def radius(code, ident, attrs, length=None, auth=b"\0" * 16, pad=b""):
    body = b"".join(bytes([t, len(v) + 2]) + v for t, v in attrs)
    n = 20 + len(body) if length is None else length
    return struct.pack("!BBH", code, ident, n) + auth + body + pad


USER, FRAMED_IP, SID, NAS_IP, NAS_ID = 1, 8, 44, 4, 32
PROXY, TS, MSGAUTH, ERRC = 33, 55, 80, 101
alice = (USER, b"alice")
dae_seeds = {
    "user": (1, radius(40, 1, [alice])),
    "all-ids": (1, radius(40, 2, [alice, (FRAMED_IP, bytes([198, 19, 0, 10])),
                                  (SID, b"6571A3F0123400"),
                                  (NAS_IP, bytes([198, 18, 0, 1])),
                                  (NAS_ID, b"pptp1"), (TS, b"\x65\0\0\1")])),
    "msgauth": (1, radius(40, 3, [alice, (MSGAUTH, b"\0" * 16)])),
    "proxy-states": (1, radius(40, 4, [alice, (PROXY, b"\1\2"),
                                       (PROXY, b"x" * 253)])),
    "coa": (1, radius(43, 5, [alice])),
    # WISPr (vendor 14122) Bandwidth-Max-Down (8) and -Up (7), bits/s
    "coa-rate": (1, radius(43, 20, [alice, (26, struct.pack(
        "!IBBIBBI", 14122, 8, 6, 2000000, 7, 6, 512000))])),
    "coa-rate-bad": (1, radius(43, 21, [alice, (26, struct.pack(
        "!IBBH", 14122, 8, 9, 7))])),
    "unsupported": (1, radius(40, 6, [alice, (5, b"\0\0\0\1"), (26, b"\0" * 8)])),
    "missing": (1, radius(40, 7, [(NAS_ID, b"pptp1")])),
    "twice": (1, radius(40, 8, [alice, (USER, b"bob")])),
    "bad-values": (1, radius(40, 9, [(FRAMED_IP, b"\1\2\3"), (USER, b""),
                                     (TS, b"\1")])),
    "unsigned": (0, radius(40, 10, [alice])),
    "padding": (1, radius(40, 11, [alice], pad=b"\xee" * 7)),
    "len-short": (0, radius(40, 12, [alice], length=19)),
    "len-long": (0, radius(40, 13, [alice], length=4097)),
    "len-past": (0, radius(40, 14, [alice], length=40)),
    "attr-len0": (0, radius(40, 15, []) + b"\x01\x00"),
    "attr-len1": (0, radius(40, 16, [], length=22) + b"\x01\x01"),
    "attr-past": (0, radius(40, 17, [], length=25) + b"\x01\x09abc"),
    "two-msgauth": (1, radius(40, 18, [(MSGAUTH, b"\0" * 16),
                                       (MSGAUTH, b"\0" * 16)])),
    "header-only": (0, b"\x28\x01\x00"),
    "largest": (1, radius(40, 19, [(PROXY, b"p" * 253)] * 15 +
                          [(PROXY, b"q" * 249)])),
}
os.makedirs(os.path.join(here, "corpus", "dae"), exist_ok=True)
for name, (flags, pkt) in dae_seeds.items():
    with open(os.path.join(here, "corpus", "dae", "seed-" + name), "wb") as f:
        f.write(bytes([flags]) + pkt)
print("wrote %d dae seeds" % len(dae_seeds))
