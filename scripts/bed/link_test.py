#!/usr/bin/env python3
"""Checks of the host-VM link, run by scripts/hostbed on the host side.

    scripts/hostbed --sessions 1000 -- python3 scripts/bed/link_test.py [N]

Prints TAP lines and exits 1 on any failure. What a user of the test bed
relies on, each from the host's netns to the server's netns in the VM:

1. ping reaches the server's address;
2. TCP 1723 from one client source address: SCCRQ answered by an SCCRP
   with result 1 (our pptpd, or Poptop);
3. N control connections at once (default 1000), each from its own source
   address in BED_SRC: every one gets its SCCRP;
4. raw GRE from N source addresses reaches the server's IP stack: the VM's
   counters (scripts/bed/snap) show N more datagrams delivered and none
   dropped by the reverse-path filter;
5. a few calls (OCRQ from 4 source addresses): each is answered by an OCRP
   "connected", and GRE from the server's pppd (its LCP Configure-Request)
   comes back over the link to that source address and call ID.
"""
import ipaddress
import json
import os
import resource
import selectors
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tests", "attack"))
import pptpwire as w  # noqa: E402

IP_PKTINFO = 8  # Linux <netinet/in.h>; Python's socket module lacks it
IPPROTO_GRE = 47
PPP_LCP = 0xC021

SERVER = os.environ.get("BED_SERVER", "198.18.200.2")
SRC = ipaddress.ip_network(os.environ.get("BED_SRC", "198.18.64.0/18"))
SNAP = os.environ.get("BED_SNAP")

n_ok = n_fail = n_test = 0


def tap(ok, what):
    global n_ok, n_fail, n_test
    n_test += 1
    if ok:
        n_ok += 1
    else:
        n_fail += 1
    print("%s %d - %s" % ("ok" if ok else "not ok", n_test, what), flush=True)


def sources(n, skip=0):
    hosts = SRC.hosts()
    for _ in range(skip):
        next(hosts)
    return [str(next(hosts)) for _ in range(n)]


def snap(name):
    out = subprocess.run([SNAP, name], check=True, stdout=subprocess.PIPE,
                         universal_newlines=True).stdout.strip()
    with open(out) as f:
        return json.load(f)


def recv_msgs(s, want, secs=20):
    buf = b""
    end = time.monotonic() + secs
    while time.monotonic() < end:
        s.settimeout(max(0.1, end - time.monotonic()))
        try:
            data = s.recv(4096)
        except socket.timeout:
            break
        if not data:
            break
        buf += data
        msgs, buf = w.parse(buf)
        for m in msgs:
            if m["type"] == want:
                return m
    return None


def test_ping():
    r = subprocess.run(["ping", "-c", "3", "-i", "0.2", "-W", "3", SERVER],
                       stdout=subprocess.PIPE, universal_newlines=True)
    tap(r.returncode == 0, "ping %s from the host netns" % SERVER)


def test_one_sccrq():
    src = sources(1)[0]
    try:
        s = socket.create_connection((SERVER, w.PORT), 10, (src, 0))
        s.sendall(w.sccrq(host="hostbed"))
        m = recv_msgs(s, w.SCCRP)
        s.close()
    except OSError as e:
        tap(False, "SCCRQ from %s: %s" % (src, e))
        return
    tap(m is not None and m["result"] == 1,
        "SCCRQ from %s to %s:1723 answered by SCCRP result 1 (got %s)" %
        (src, SERVER, m and m["result"]))


def test_many_sccrq(n):
    """n connections in flight at once, one per source address."""
    sel = selectors.DefaultSelector()
    conns = {}
    t0 = time.monotonic()
    for src in sources(n, skip=10):
        s = socket.socket()
        s.setblocking(False)
        s.bind((src, 0))
        s.connect_ex((SERVER, w.PORT))
        conns[s] = {"src": src, "buf": b"", "sent": False, "got": None}
        sel.register(s, selectors.EVENT_WRITE)
    end = time.monotonic() + 120
    pending = n
    while pending and time.monotonic() < end:
        for key, ev in sel.select(1.0):
            s, c = key.fileobj, conns[key.fileobj]
            if ev & selectors.EVENT_WRITE and not c["sent"]:
                if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                    c["got"] = "connect failed"
                    sel.unregister(s)
                    pending -= 1
                    continue
                s.send(w.sccrq(host="hostbed"))
                c["sent"] = True
                sel.modify(s, selectors.EVENT_READ)
                continue
            try:
                data = s.recv(4096)
            except OSError as e:
                data, c["got"] = b"", str(e)
            if not data:
                c["got"] = c["got"] or "closed"
                sel.unregister(s)
                pending -= 1
                continue
            c["buf"] += data
            msgs, c["buf"] = w.parse(c["buf"])
            for m in msgs:
                if m["type"] == w.SCCRP:
                    c["got"] = m["result"]
                    sel.unregister(s)
                    pending -= 1
                    break
    dt = time.monotonic() - t0
    good = sum(1 for c in conns.values() if c["got"] == 1)
    bad = {}
    for c in conns.values():
        if c["got"] != 1:
            bad[str(c["got"])] = bad.get(str(c["got"]), 0) + 1
    tap(good == n, "%d connections at once from %d source addresses: %d "
        "SCCRP result 1 in %.1f s%s" % (n, n, good, dt,
                                         (", others: %s" % bad) if bad else ""))
    return conns


def send_gre(sock, src, payload):
    pkt = struct.pack("@i4s4s", 0, socket.inet_aton(src), b"\0" * 4)
    sock.sendmsg([payload], [(socket.IPPROTO_IP, IP_PKTINFO, pkt)],
                 0, (SERVER, 0))


def test_gre_sources(n):
    if not SNAP:
        tap(False, "GRE from %d sources: no BED_SNAP (run under hostbed)" % n)
        return
    before = snap("gre-before")
    g = socket.socket(socket.AF_INET, socket.SOCK_RAW, IPPROTO_GRE)
    for i, src in enumerate(sources(n, skip=2000)):
        # Call ID 0xFFFF: no call has it; the server drops these, but only
        # after the IP stack has delivered them to its GRE socket.
        send_gre(g, src, w.gre(0xFFFF, b"\xff\x03\xc0\x21", seq=i))
        if i % 100 == 99:
            time.sleep(0.05)  # the tap's queue is 1000 packets
    time.sleep(2)
    after = snap("gre-after")
    d = {k: after["ip"].get(k, 0) - before["ip"].get(k, 0)
         for k in after["ip"]}
    rx = after["link"]["rx_packets"] - before["link"]["rx_packets"]
    tap(rx >= n and d.get("InDelivers", 0) >= n and
        d.get("IPReversePathFilter", 0) == 0 and d.get("InAddrErrors", 0) == 0,
        "GRE from %d source addresses: link rx +%d, IP delivered +%d, "
        "rp_filter drops %d, address errors %d" %
        (n, rx, d.get("InDelivers", 0), d.get("IPReversePathFilter", 0),
         d.get("InAddrErrors", 0)))


def test_calls(k):
    g = socket.socket(socket.AF_INET, socket.SOCK_RAW, IPPROTO_GRE)
    g.settimeout(1.0)
    calls = {}
    for i, src in enumerate(sources(k, skip=5000)):
        try:
            s = socket.create_connection((SERVER, w.PORT), 10, (src, 0))
            s.sendall(w.sccrq(host="hostbed"))
            if not recv_msgs(s, w.SCCRP):
                tap(False, "call from %s: no SCCRP" % src)
                continue
            cid = 100 + i
            s.sendall(w.ocrq(cid, serial=i))
            m = recv_msgs(s, w.OCRP, 60)
        except OSError as e:
            tap(False, "call from %s: %s" % (src, e))
            continue
        calls[(src, cid)] = {"sock": s, "ocrp": m, "gre": False}
        tap(m is not None and m["result"] == 1,
            "OCRQ from %s answered by OCRP connected (result %s)" %
            (src, m and m["result"]))
    end = time.monotonic() + 60
    while time.monotonic() < end and \
            not all(c["gre"] for c in calls.values()):
        try:
            pkt, _ = g.recvfrom(65535)
        except socket.timeout:
            continue
        ihl = (pkt[0] & 0x0F) * 4
        dst = socket.inet_ntoa(pkt[16:20])
        d = w.gre_parse(pkt[ihl:])
        if not d or d["proto"] != w.GRE_PROTO:
            continue
        c = calls.get((dst, d["call_id"]))
        # The PPP frame: address/control (maybe compressed), then LCP.
        if c and PPP_LCP.to_bytes(2, "big") in d["payload"][:4]:
            c["gre"] = True
    for (src, cid), c in sorted(calls.items()):
        tap(c["gre"], "GRE from the server's pppd (LCP) to %s call %d" %
            (src, cid))
        c["sock"].close()


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    # n TCP sockets at once, plus the harness's own.
    resource.setrlimit(resource.RLIMIT_NOFILE, (n + 1024, n + 1024))
    test_ping()
    test_one_sccrq()
    conns = test_many_sccrq(n)
    for s in conns:
        s.close()
    test_gre_sources(n)
    test_calls(4)
    print("1..%d" % n_test)
    print("# %d passed, %d failed" % (n_ok, n_fail))
    return 1 if n_fail else 0


if __name__ == "__main__":
    sys.exit(main())
