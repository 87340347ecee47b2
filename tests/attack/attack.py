#!/usr/bin/env python3
"""Hostile-input attacks against a running PPTP server, while a real
session carries a steady ping.

Started by tests/attack/run.sh, which builds the network namespaces, starts
the server and the live session, then runs this as root from the initial
network namespace. Sockets are opened inside the namespaces with setns(2)
(through ctypes), so one process can attack from one namespace, watch GRE
in another and read the server's /proc entries.

Every attack prints one line:
    ok N - ATTACK: sent S, live loss L/P, daemon alive, new client T s[, ...]
or "not ok N - ..." with the reason, and the run ends with exactly
    N passed, M failed
The exit status is 1 when anything failed.

Standard library only.
"""
import argparse
import contextlib
import ctypes
import errno
import os
import random
import re
import select
import socket
import struct
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pptpwire as w  # noqa: E402

CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)
_home_ns = os.open("/proc/self/ns/net", os.O_RDONLY)


@contextlib.contextmanager
def netns(name):
    """Run the block in network namespace `name` (this thread only)."""
    if not name:
        yield
        return
    fd = os.open("/var/run/netns/" + name, os.O_RDONLY)
    try:
        if _libc.setns(fd, CLONE_NEWNET) != 0:
            e = ctypes.get_errno()
            raise OSError(e, "setns %s: %s" % (name, os.strerror(e)))
        yield
    finally:
        _libc.setns(_home_ns, CLONE_NEWNET)
        os.close(fd)


def log(msg):
    print("# " + msg, flush=True)


# ------------------------------------------------------------------ live
class Pinger:
    """A steady ping through the live tunnel (ping -O -i 0.1), kept running
    for the whole suite; loss is counted per window of sequence numbers."""

    def __init__(self, ns, dst, interval=0.1):
        self.replies = set()
        self.sent_max = 0
        self.lock = threading.Lock()
        cmd = ["ip", "netns", "exec", ns, "ping", "-n", "-O", "-i",
               str(interval), "-W", "2", dst]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True,
                                     bufsize=1)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        rx = re.compile(r"icmp_seq=(\d+)")
        for line in self.proc.stdout:
            m = rx.search(line)
            if not m:
                continue
            seq = int(m.group(1))
            with self.lock:
                if "bytes from" in line:
                    self.replies.add(seq)
                self.sent_max = max(self.sent_max, seq)

    def mark(self):
        with self.lock:
            return self.sent_max

    def loss(self, start, end, settle=2.5):
        """(lost, sent) among sequence numbers start+1..end, after waiting
        `settle` seconds for late replies."""
        lost, sent = self.lost_list(start, end, settle)
        return len(lost), sent

    def lost_list(self, start, end, settle=2.5):
        """([lost sequence numbers], sent) among start+1..end."""
        time.sleep(settle)
        with self.lock:
            want = range(start + 1, end + 1)
            lost = [s for s in want if s not in self.replies]
        return lost, len(want)

    def stop(self):
        self.proc.terminate()


ETH_P_IP = 0x0800


class GreWatch:
    """Watch the live call's GRE in one namespace: the Call ID in the key
    of packets from `src` and their latest sequence/ack numbers. With
    `wire`, as they arrive on the interfaces (a packet socket, which sees
    them before tc ingress): on the kernel path the GRE guard there may
    renumber what it passes to the kernel, and a raw GRE socket sees the
    kernel's numbers, not the client's."""

    def __init__(self, ns, src, wire=False):
        with netns(ns):
            if wire:
                self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM,
                                          socket.htons(ETH_P_IP))
            else:
                self.sock = socket.socket(socket.AF_INET, socket.SOCK_RAW,
                                          socket.IPPROTO_GRE)
        self.src = src
        self.call_id = None
        self.seq = None
        self.ack = None
        self.count = 0
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while True:
            try:
                pkt, addr = self.sock.recvfrom(65535)
            except OSError:
                return
            if len(pkt) < 20 or pkt[9] != 47 or \
                    socket.inet_ntoa(pkt[12:16]) != self.src:
                continue
            ihl = (pkt[0] & 15) * 4
            g = w.gre_parse(pkt[ihl:])
            if g is None or g["proto"] != w.GRE_PROTO:
                continue
            self.call_id = g["call_id"]
            if g["seq"] is not None:
                self.seq = g["seq"]
            if g["ack"] is not None:   # also ack-only packets
                self.ack = g["ack"]
            self.count += 1


# ------------------------------------------------------------- control
class Closed(Exception):
    pass


class Conn:
    """A raw PPTP control connection from the attacker namespace."""

    def __init__(self, env, src=None, timeout=3.0):
        self.env = env
        with netns(env.atk_ns):
            self.s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if src:
            self.s.bind((src, 0))
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.s.settimeout(timeout)
        self.s.connect((env.server, w.PORT))
        self.buf = b""
        self.msgs = []

    def send(self, data):
        self.s.sendall(data)

    def _fill(self, timeout):
        r, _, _ = select.select([self.s], [], [], max(0.0, timeout))
        if not r:
            return False
        try:
            d = self.s.recv(65536)
        except ConnectionResetError:
            d = b""
        if not d:
            raise Closed()
        self.buf += d
        msgs, self.buf = w.parse(self.buf)
        self.msgs.extend(msgs)
        return True

    def recv(self, ctype=None, timeout=3.0):
        """Next message (of `ctype` if given; others are kept) or None."""
        end = time.monotonic() + timeout
        while True:
            for i, m in enumerate(self.msgs):
                if ctype is None or m["type"] == ctype:
                    return self.msgs.pop(i)
            left = end - time.monotonic()
            if left <= 0:
                return None
            self._fill(left)

    def closed_within(self, timeout):
        """True if the server closes (FIN or RST) within `timeout`."""
        end = time.monotonic() + timeout
        try:
            while time.monotonic() < end:
                self._fill(end - time.monotonic())
        except Closed:
            return True
        except OSError:
            return True
        return False

    def is_closed_now(self):
        """Has the server closed it? (without waiting)"""
        self.s.setblocking(False)
        try:
            d = self.s.recv(65536, socket.MSG_PEEK)
            return d == b""
        except BlockingIOError:
            return False
        except OSError:
            return True
        finally:
            self.s.settimeout(3.0)

    def closed_now(self):
        """Has the server closed it? Reads (and keeps) what it sent first,
        so a connection answered and then closed counts as closed."""
        try:
            while self._fill(0):
                pass
        except (Closed, OSError):
            return True
        return False

    def close(self):
        try:
            self.s.close()
        except OSError:
            pass


def handshake(env, src=None, hold=False):
    """A well-behaved PNS: SCCRQ/SCCRP then OCRQ/OCRP. Returns (seconds to
    the OCRP, error or None); hangs up cleanly unless `hold`."""
    t0 = time.monotonic()
    try:
        c = Conn(env, src=src or env.legit_src)
        c.send(w.sccrq())
        m = c.recv(w.SCCRP, timeout=5)
        if m is None:
            c.close()
            return None, "no SCCRP"
        if m["result"] != 1:
            c.close()
            return None, "SCCRP result %d" % m["result"]
        cid = random.randint(1, 65535)
        c.send(w.ocrq(cid))
        m = c.recv(w.OCRP, timeout=5)
        if m is None:
            c.close()
            return None, "no OCRP"
        took = time.monotonic() - t0
        if m["result"] != 1:
            c.close()
            return None, "OCRP result %d" % m["result"]
        if hold:
            return took, c
        c.send(w.ccrq(cid))
        c.recv(w.CDN, timeout=2)
        c.send(w.stopccrq())
        c.recv(w.STOPCCRP, timeout=2)
        c.close()
        return took, None
    except Closed:
        return None, "connection closed by the server"
    except OSError as e:
        return None, "socket: %s" % e


# ------------------------------------------------------------ raw sends
def ip_header(src, dst, proto, payload_len):
    return struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + payload_len,
                       random.randint(0, 65535), 0, 64, proto, 0,
                       socket.inet_aton(src), socket.inet_aton(dst))


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


class Raw:
    """Raw sockets in the attacker namespace: GRE from our own address, and
    IP_HDRINCL for spoofed sources."""

    def __init__(self, env):
        with netns(env.atk_ns):
            self.gre = socket.socket(socket.AF_INET, socket.SOCK_RAW,
                                     socket.IPPROTO_GRE)
            self.hdr = socket.socket(socket.AF_INET, socket.SOCK_RAW,
                                     socket.IPPROTO_RAW)
        self.env = env

    def gre_from(self, src, pkt):
        if src is None:
            self.gre.sendto(pkt, (self.env.server, 0))
        else:
            self.hdr.sendto(ip_header(src, self.env.server, 47, len(pkt)) +
                            pkt, (self.env.server, 0))

    def icmp_unreach(self, src, code, quoted_src, quoted_dst, quoted_gre):
        inner = ip_header(quoted_src, quoted_dst, 47, len(quoted_gre)) + \
            quoted_gre[:8]
        icmp = struct.pack("!BBHI", 3, code, 0, 0) + inner
        icmp = icmp[:2] + struct.pack("!H", checksum(icmp)) + icmp[4:]
        self.hdr.sendto(ip_header(src, self.env.server, 1, len(icmp)) + icmp,
                        (self.env.server, 0))


# PPP LCP Terminate-Request: if any forged packet reached the server's pppd
# the live session would end, which the ping would show.
LCP_TERMREQ = bytes.fromhex("ff03c021050100086b696c6c")
# PPP LCP Discard-Request (magic 0): pppd ignores it. For forged packets that
# the server is expected to deliver (in-window numbers from the client's own
# address, which PPTP cannot tell from the real ones): what is measured is
# what they do to the real stream's numbering, not the payload.
LCP_DISCARD = bytes.fromhex("ff03c0210b01000800000000")
# The live ping's rate (Pinger's default interval 0.1 s).
PINGS_PER_SECOND = 10


# -------------------------------------------------------------- the run
class Env:
    pass


def worker_of(pid):
    """The pid of `pid`'s child named pptpd-worker (privsep yes, our
    server's default: the process that parses what the attacks send),
    or None (privsep no, Poptop)."""
    try:
        tasks = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return None
    for t in tasks:
        try:
            with open("/proc/%d/task/%s/children" % (pid, t)) as f:
                kids = f.read().split()
        except OSError:
            continue
        for k in kids:
            try:
                with open("/proc/%s/comm" % k) as f:
                    if f.read().strip() == "pptpd-worker":
                        return int(k)
            except OSError:
                continue
    return None


class Suite:
    def __init__(self, env):
        self.env = env
        self.n = 0
        self.passed = 0
        self.failed = 0
        self.not_picked = 0
        self.pick = [p for p in env.pick.split(",") if p]
        # Under privsep both the monitor and its worker must live on, and
        # neither may leak a descriptor; the worker is the one attacked.
        self.worker = worker_of(env.pid)
        log("server pid %d%s" % (env.pid, ", its worker %d" % self.worker
                                 if self.worker else ""))

    def pids(self):
        return [self.env.pid] + ([self.worker] if self.worker else [])

    def alive(self):
        try:
            for pid in self.pids():
                os.kill(pid, 0)
            return True
        except OSError:
            return False

    def fds(self):
        """Descriptors of the server's processes, together."""
        try:
            return sum(len(os.listdir("/proc/%d/fd" % pid))
                       for pid in self.pids())
        except OSError:
            return -1

    def settled_fds(self, quiet_s=1.0, limit_s=10.0):
        """The daemon's descriptor count once it has not changed for
        quiet_s: what the test before left may still be closing (a
        connection whose end the daemon has not read yet; under the
        sanitizers that took longer than the next test's first look)."""
        last, since = self.fds(), time.monotonic()
        end = since + limit_s
        while time.monotonic() < end:
            time.sleep(0.1)
            now = self.fds()
            if now != last:
                last, since = now, time.monotonic()
            elif time.monotonic() - since >= quiet_s:
                break
        return last

    def server_log(self):
        try:
            with open(self.env.log, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def report(self, name, sent, problems, loss, new_client, extra="",
               max_loss=0):
        self.n += 1
        lost, total = loss
        alive = self.alive()
        if not alive:
            problems.append("daemon died")
        if lost > max_loss:
            problems.append("live session lost %d/%d (at most %d allowed)" %
                            (lost, total, max_loss) if max_loss else
                            "live session lost %d/%d" % (lost, total))
        if total == 0:
            problems.append("no ping in the window")
        took, err = new_client
        if err:
            problems.append("new client: %s" % err)
        elif took is not None and took > 2.0:
            problems.append("new client took %.2f s" % took)
        line = "%s: sent %s, live loss %d/%d, daemon %s, new client %s" % (
            name, sent, lost, total, "alive" if alive else "DEAD",
            ("%.2f s" % took) if took is not None else "-")
        if extra:
            line += ", " + extra
        if problems:
            self.failed += 1
            print("not ok %d - %s: %s" % (self.n, line, "; ".join(problems)),
                  flush=True)
        else:
            self.passed += 1
            print("ok %d - %s" % (self.n, line), flush=True)

    def attack(self, name, fn, new_client=True, min_window=2.0, max_loss=0,
               bursts=None):
        """Run fn() -> (sent, problems, extra) inside a ping window, then
        check a new client is served. With max_loss, that many lost pings
        are tolerated; with `bursts`, a list fn() fills with the ping mark
        at each burst it sends, every lost ping must also have been sent
        within 1 s of a burst (10 pings at 10/s, two more for the mark's
        rounding): the live session is back within a second."""
        if self.pick and not any(p in name for p in self.pick):
            self.not_picked += 1
            log("not run (not picked): %s" % name)
            return
        if not self.alive():
            self.report(name, 0, ["daemon was already dead"], (0, 0),
                        (None, None))
            return
        start = self.env.pinger.mark()
        t0 = time.monotonic()
        try:
            sent, problems, extra = fn()
        except Exception as e:  # an attack that breaks is a failure too
            sent, problems, extra = "?", ["attack raised %r" % e], ""
        left = min_window - (time.monotonic() - t0)
        if left > 0:
            time.sleep(left)
        end = self.env.pinger.mark()
        lost, total = self.env.pinger.lost_list(start, end)
        if bursts is not None:
            late = [p for p in lost
                    if not any(0 < p - b <= PINGS_PER_SECOND + 2
                               for b in bursts)]
            if late:
                problems.append("pings lost more than 1 s after a burst: %s"
                                % ",".join(str(p) for p in late[:20]))
            extra += (", " if extra else "") + "lost %s" % (
                ",".join(str(p) for p in lost) or "none")
        nc = handshake(self.env) if new_client and self.alive() else \
            (None, None)
        self.report(name, sent, problems, (len(lost), total), nc, extra,
                    max_loss)

    # ----------------------------------------------- malformed messages
    def malformed(self, name, data, expect_close=2.0):
        def run():
            c = Conn(self.env, src=self.env.atk_src)
            c.send(data)
            problems = []
            closed = c.closed_within(expect_close)
            got = [m["name"] for m in c.msgs]
            if not closed:
                problems.append("connection not closed within %.0f s" %
                                expect_close)
            if got:
                problems.append("server answered %s" % ",".join(got))
            c.close()
            return "1 msg (%d B)" % len(data), problems, \
                "closed" if closed else "left open"
        self.attack(name, run)

    def control_malformed(self):
        w_ = w
        self.malformed("length 0", w_.header(w_.SCCRQ, length=0) + b"\0" * 4)
        self.malformed("length 1", w_.header(w_.SCCRQ, length=1) + b"\0" * 4)
        self.malformed("length 11", w_.header(w_.SCCRQ, length=11) +
                       b"\0" * 4)
        self.malformed("length 65535", w_.header(w_.SCCRQ, length=65535) +
                       b"\0" * 1000)
        self.malformed("length disagrees with type",
                       w_.header(w_.ECHORQ, length=156) + b"\0" * 144)
        self.malformed("wrong magic", w_.sccrq(magic=0xDEADBEEF))
        self.malformed("unknown control type",
                       w_.header(77, length=16) + b"\0" * 4)
        self.malformed("PPTP message type 2", w_.sccrq(msgtype=2))

        def truncated():
            c = Conn(self.env, src=self.env.atk_src)
            c.send(w_.sccrq()[:100])
            problems = []
            # Another client is served while this one waits mid-message.
            took, err = handshake(self.env)
            if err:
                problems.append("client during the stall: %s" % err)
            closed = c.closed_within(self.env.stimeout + 3)
            if not closed:
                problems.append("half a message held the connection open "
                                "past stimeout")
            c.close()
            return "100 of 156 B", problems, \
                "closed at the deadline" if closed else "left open"
        self.attack("truncated mid-message", truncated)

        def bytewise():
            c = Conn(self.env, src=self.env.atk_src)
            data = w_.sccrq()
            for b in data:
                c.send(bytes([b]))
                time.sleep(0.005)
            m = c.recv(w_.SCCRP, timeout=3)
            problems = [] if m and m["result"] == 1 else [
                "no SCCRP after a byte-at-a-time SCCRQ"]
            c.send(w_.stopccrq())
            c.close()
            return "156 x 1 B", problems, "SCCRP received" if m else ""
        self.attack("one byte at a time", bytewise)

    # ---------------------------------------------------- order abuse
    def order_abuse(self):
        env = self.env

        def ocrq_first():
            c = Conn(env, src=env.atk_src)
            c.send(w.ocrq(4242))
            problems = []
            closed = c.closed_within(2)
            if any(m["type"] == w.OCRP and m["result"] == 1 for m in c.msgs):
                problems.append("a call was connected without SCCRQ")
            if not closed:
                problems.append("connection not closed")
            c.close()
            return "1 msg", problems, "closed" if closed else "open"
        self.attack("OCRQ before SCCRQ", ocrq_first)

        def sccrq_twice():
            c = Conn(env, src=env.atk_src)
            c.send(w.sccrq())
            c.send(w.sccrq())
            time.sleep(1.5)
            try:
                c._fill(0.1)
            except Closed:
                pass
            n = sum(1 for m in c.msgs if m["type"] == w.SCCRP)
            problems = []
            if n != 1:
                problems.append("%d SCCRPs for two SCCRQs" % n)
            c.send(w.stopccrq())
            c.close()
            return "2 msgs", problems, "%d SCCRP" % n
        self.attack("SCCRQ twice", sccrq_twice)

        def foreign(kind):
            def run():
                ours, peers = env.live_ids()
                if ours is None:
                    return "0", ["live call IDs unknown"], ""
                c = Conn(env, src=env.atk_src)
                c.send(w.sccrq())
                c.recv(w.SCCRP, timeout=3)
                if kind == "CCRQ":
                    # CCRQ names the call by the PNS's ID: the live
                    # client's; also try the server's, and our own IDs.
                    msgs = [w.ccrq(peers), w.ccrq(ours)]
                else:
                    msgs = [w.sli(ours, 0, 0), w.sli(peers, 0, 0),
                            w.sli(ours)]
                for m in msgs:
                    c.send(m)
                time.sleep(1)
                try:
                    c._fill(0.1)
                except Closed:
                    pass
                problems = []
                cdn = [m for m in c.msgs if m["type"] == w.CDN]
                if cdn:
                    problems.append("CDN sent for call %d" % cdn[0]["call_id"])
                if not env.live_client_alive():
                    problems.append("live client's pppd is gone")
                c.send(w.stopccrq())
                c.close()
                return "%d msgs (call %d/%d)" % (len(msgs), ours, peers), \
                    problems, ""
            return run
        self.attack("CCRQ for another connection's call", foreign("CCRQ"))
        self.attack("SLI for another connection's call", foreign("SLI"))

        def echo_flood(read):
            def run():
                c = Conn(env, src=env.atk_src)
                c.send(w.sccrq())
                c.recv(w.SCCRP, timeout=3)
                n = 5000 if not read else 2000
                data = b"".join(w.echorq(i) for i in range(n))
                problems = []
                extra = ""
                if read:
                    c.send(data)
                    got = 0
                    end = time.monotonic() + 15
                    while got < n and time.monotonic() < end:
                        m = c.recv(w.ECHORP, timeout=end - time.monotonic())
                        if m is None:
                            break
                        got += 1
                    if got != n:
                        problems.append("%d Echo-Replies for %d requests" %
                                        (got, n))
                    extra = "%d replies" % got
                    c.send(w.stopccrq())
                else:
                    c.s.setblocking(False)
                    sent = 0
                    end = time.monotonic() + 10
                    while sent < len(data) and time.monotonic() < end:
                        try:
                            sent += c.s.send(data[sent:])
                        except BlockingIOError:
                            time.sleep(0.01)
                        except OSError:
                            break
                    c.s.setblocking(True)
                    closed = c.closed_within(5)
                    extra = "%d B accepted, %s" % (
                        sent, "closed by server" if closed else "still open")
                c.close()
                return "%d Echo-Requests" % n, problems, extra
            return run
        self.attack("Echo-Request flood, replies read", echo_flood(True))
        self.attack("Echo-Request flood, replies never read",
                    echo_flood(False))

        def many_ocrq():
            c = Conn(env, src=env.atk_src)
            c.send(w.sccrq())
            c.recv(w.SCCRP, timeout=3)
            n = 64
            for i in range(n):
                c.send(w.ocrq(1000 + i))
            ok = 0
            end = time.monotonic() + 10
            for i in range(n):
                m = c.recv(w.OCRP, timeout=max(0.1, end - time.monotonic()))
                if m is None:
                    break
                ok += m["result"] == 1
            c.send(w.stopccrq())
            c.close()
            problems = []
            if ok > 16:
                problems.append("%d calls accepted on one connection" % ok)
            return "%d OCRQ" % n, problems, "%d connected" % ok
        self.attack("OCRQ flood on one connection", many_ocrq)

        def ocrq_ccrq_loop():
            # The review's loop: every OCRQ started a root pppd (1000 in
            # 0.85 s), each CCRQ let the next one start. The starts must
            # be bounded by call-rate-per-client (10/s, bursts of 10), the
            # refusals must not flood the log.
            log0 = len(self.server_log())
            c = Conn(env, src=env.atk_src)
            c.send(w.sccrq())
            c.recv(w.SCCRP, timeout=3)
            n, ok = 300, 0
            t0 = time.monotonic()
            for i in range(n):
                c.send(w.ocrq(2000 + i))
                m = c.recv(w.OCRP, timeout=3)
                if m is None:
                    break
                if m["result"] == 1:
                    ok += 1
                    c.send(w.ccrq(2000 + i))
            took = time.monotonic() - t0
            c.send(w.stopccrq())
            time.sleep(0.5)
            c.close()
            newlog = self.server_log()[log0:]
            started = newlog.count("started pppd")
            lines = sum(1 for l in newlog.splitlines() if " debug: " not in l)
            problems = []
            bound = 10 + 10 * (int(took) + 1)
            if started > bound:
                problems.append("%d pppd started in %.1f s (bound %d)" %
                                (started, took, bound))
            if lines > 60 * (int(took) + 2):
                problems.append("%d log lines in %.1f s" % (lines, took))
            return "%d OCRQ+CCRQ" % n, problems, \
                "%d connected, %d pppd started in %.1f s, %d log lines" % (
                    ok, started, took, lines)
        self.attack("OCRQ/CCRQ loop on one connection", ocrq_ccrq_loop)

    # ------------------------------------------------------------ GRE
    def gre_attacks(self):
        env = self.env
        raw = Raw(env)

        def need_ids():
            ours, peers = env.live_ids()
            seq = env.watch_srv.seq
            if ours is None or seq is None:
                raise RuntimeError("live call IDs/sequence unknown")
            return ours, peers, seq

        def wrong_source():
            ours, _, seq = need_ids()
            n = 0
            for i in range(200):
                s = env.watch_srv.seq
                raw.gre_from(None, w.gre(ours, LCP_TERMREQ, seq=s + 1 + i % 3,
                                         ack=0))
                n += 1
                if i % 20 == 0:
                    time.sleep(0.05)
            return "%d GRE from %s for call %d" % (n, env.atk_src, ours), \
                [], ""
        self.attack("GRE for the live call from another address",
                    wrong_source)

        def spoofed(kind):
            def run():
                ours, _, seq = need_ids()
                n = 0
                for i in range(100):
                    cur = env.watch_srv.seq
                    if kind == "replay":
                        s = cur - 1 - (i % 20)
                    elif kind == "far":
                        s = cur + random.choice([10 ** 5, 10 ** 6, 2 ** 31,
                                                 -10 ** 5]) + \
                            random.randint(0, 10 ** 4) * 100
                    else:  # jump within 4096, never twice in a row nearby
                        s = cur + 200 + (i * 997) % 3800
                    raw.gre_from(env.client, w.gre(ours, LCP_TERMREQ,
                                                   seq=s & 0xFFFFFFFF))
                    n += 1
                    time.sleep(0.02)
                return "%d spoofed GRE (%s seq) for call %d" % (n, kind, ours), \
                    [], ""
            return run
        self.attack("GRE replayed sequence numbers (spoofed source)",
                    spoofed("replay"))
        self.attack("GRE far-away sequence numbers (spoofed source)",
                    spoofed("far"))
        self.attack("GRE isolated forward jumps (spoofed source)",
                    spoofed("jump"))

        def bad_length():
            ours, _, _ = need_ids()
            n = 0
            for i in range(50):
                s = env.watch_srv.seq + 1
                # Each of these must be refused by the parser; sent with
                # the next expected sequence number, one that got through
                # would take the place of the real packet. (A well-formed
                # packet from a forged source with an in-window number
                # always does: PPTP has no defence against that.)
                for pkt in (w.gre(ours, LCP_TERMREQ, seq=s, length=4000),
                            w.gre(ours, LCP_TERMREQ, seq=s, length=65535),
                            w.gre(ours, LCP_TERMREQ[:4], seq=s, length=12),
                            w.gre(ours, b"", seq=s),
                            w.gre(ours, LCP_TERMREQ, seq=s)[:10],
                            w.gre(ours, LCP_TERMREQ, seq=s, flags=0xB081),
                            w.gre(ours, LCP_TERMREQ, seq=s, proto=0x0800)):
                    raw.gre_from(env.client, pkt)
                    raw.gre_from(None, pkt)
                    n += 2
                time.sleep(0.02)
            return "%d malformed GRE" % n, [], ""
        self.attack("GRE with bad lengths and flags", bad_length)

        def length_mismatch():
            # The payload length field shorter than what the datagram
            # carries, with the next expected number, from the client's own
            # address. Accepted, the truncated payload would be delivered
            # and the number consumed, so the real packet carrying it would
            # be dropped as a duplicate: every one must be refused before
            # any sequence state is touched.
            ours, _, _ = need_ids()
            n = 0
            for i in range(40):
                s = env.watch_srv.seq + 1
                for pkt in (w.gre(ours, LCP_TERMREQ, seq=s,
                                  length=len(LCP_TERMREQ) - 1),
                            w.gre(ours, LCP_TERMREQ, seq=s, length=4),
                            w.gre(ours, LCP_TERMREQ, seq=s, length=1),
                            w.gre(ours, LCP_TERMREQ, seq=s + 1, length=2,
                                  ack=0),
                            w.gre(ours, LCP_TERMREQ + b"\0" * 40, seq=s,
                                  length=len(LCP_TERMREQ)),
                            w.gre(ours, LCP_TERMREQ, seq=s, length=4000)):
                    raw.gre_from(env.client, pkt)
                    n += 1
                time.sleep(0.05)
            return "%d GRE with a short payload length" % n, [], ""
        self.attack("GRE payload length shorter than the datagram "
                    "(spoofed source, next number)", length_mismatch)

        # A burst of well-formed packets from the client's own address with
        # the numbers just ahead of the real stream's: PPTP cannot tell them
        # from the real ones, so they are delivered (harmless LCP
        # Discard-Requests) and take the real stream's next numbers. The
        # expectation: the live session is back within 1 s of each burst
        # (the server believes the real stream again once it has been
        # getting only old numbers for a while), so at most 10 pings per
        # burst lost, all within a second of it.
        FORGED_BURST = 32
        FORGED_ROUNDS = 3
        marks = []

        def forged_window():
            ours, _, _ = need_ids()
            n = 0
            for r in range(FORGED_ROUNDS):
                s = env.watch_srv.seq
                marks.append(env.pinger.mark())
                for k in range(1, FORGED_BURST + 1):
                    raw.gre_from(env.client, w.gre(ours, LCP_DISCARD,
                                                   seq=s + k))
                    n += 1
                time.sleep(2.5)
            return "%d forged in-window GRE in %d bursts of %d" % (
                n, FORGED_ROUNDS, FORGED_BURST), [], ""
        self.attack("GRE forged in-window burst (spoofed source): "
                    "live stream back within 1 s", forged_window,
                    max_loss=FORGED_ROUNDS * (PINGS_PER_SECOND + 2),
                    bursts=marks)

        def far_run():
            # Off path: the right Call ID and the client's address, but no
            # idea of the numbers, so a run of consecutive far-off numbers,
            # longer than the 8 that once resynchronised the receiver, sent
            # between two real packets while the real stream flows.
            ours, _, _ = need_ids()
            n = 0
            base = (env.watch_srv.seq + random.randint(10 ** 6, 2 ** 31)) \
                & 0xFFFFFFFF
            for r in range(10):
                for k in range(16):
                    raw.gre_from(env.client, w.gre(ours, LCP_DISCARD,
                                                   seq=base + n))
                    n += 1
                time.sleep(0.3)
            return "%d forged GRE in 10 runs of 16 consecutive far-off " \
                "numbers" % n, [], ""
        self.attack("GRE far-off consecutive run (spoofed source) while the "
                    "live stream flows", far_run)

        def unknown_calls():
            ours, _, _ = need_ids()
            n = 0
            for i in range(2000):
                cid = random.randint(0, 65535)
                if cid == ours:
                    continue
                pkt = w.gre(cid, LCP_TERMREQ, seq=random.randint(0, 2 ** 32 - 1))
                raw.gre_from(env.client if i % 2 else None, pkt)
                n += 1
                if i % 100 == 0:
                    time.sleep(0.02)
            return "%d GRE for unknown calls" % n, [], ""
        self.attack("GRE for unknown call IDs", unknown_calls)

        def icmp():
            ours, peers, _ = need_ids()
            n = 0
            for i in range(20):
                for code in (1, 2, 3, 13):
                    g = w.gre(peers, b"\0" * 8, seq=i)
                    # "from" the client about the server's GRE toward it
                    raw.icmp_unreach(env.client, code, env.server, env.client, g)
                    n += 1
                time.sleep(0.05)
            problems = []
            if not env.live_client_alive():
                problems.append("live client's pppd is gone")
            return "%d ICMP unreachable" % n, problems, ""
        self.attack("ICMP unreachable for the live call's GRE", icmp)

    # ----------------------------------------------------------- floods
    def open_many(self, n, sources, timeout=3.0, speak=False):
        """Open n connections at once (non-blocking connects, so the whole
        burst lands well within stimeout). With `speak`, each sends its
        SCCRQ as soon as it is connected, so that no deadline of the
        server's closes it while the burst is still going on. Returns
        (conns, failed)."""
        pending = []
        for i in range(n):
            c = Conn.__new__(Conn)
            c.env, c.buf, c.msgs = self.env, b"", []
            with netns(self.env.atk_ns):
                c.s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            c.s.bind((sources[i % len(sources)], 0))
            c.s.setblocking(False)
            c.s.connect_ex((self.env.server, w.PORT))
            pending.append(c)
        conns, failed = [], 0
        end = time.monotonic() + timeout
        waiting = list(pending)
        while waiting and time.monotonic() < end:
            _, wr, _ = select.select([], [c.s for c in waiting], [],
                                     end - time.monotonic())
            done = {s for s in wr}
            for c in [c for c in waiting if c.s in done]:
                waiting.remove(c)
                if c.s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                    failed += 1
                    c.close()
                else:
                    c.s.settimeout(3.0)
                    if speak:
                        try:
                            c.s.send(w.sccrq())
                        except OSError:
                            pass
                    conns.append(c)
        for c in waiting:
            failed += 1
            c.close()
        return conns, failed

    def refusals(self, text):
        """Refusal reasons in a piece of server log (rate-limited lines
        count for what they say they suppressed)."""
        counts = {}
        last = None
        for line in text.splitlines():
            m = re.search(r"refused: (.*)$", line)
            if m:
                last = m.group(1).strip()
                counts[last] = counts.get(last, 0) + 1
                continue
            m = re.search(r"(\d+) similar (?:lines|messages) suppressed", line)
            if m and last and "gre:" not in line and "ctrl" not in line:
                counts[last] = counts.get(last, 0) + int(m.group(1))
        return ", ".join("%d '%s'" % (v, k) for k, v in counts.items()) \
            or "none logged"

    def classify(self, conns, timeout=10.0):
        """For connections that sent an SCCRQ: (accepted, refused) where
        accepted got an SCCRP and refused were closed without one."""
        acc, ref = 0, 0
        end = time.monotonic() + timeout
        for c in conns:
            try:
                m = c.recv(w.SCCRP, timeout=max(0.05, end - time.monotonic()))
                if m is not None:
                    acc += 1
            except (Closed, OSError):
                ref += 1
        return acc, ref

    def count_open(self, conns):
        return sum(1 for c in conns if not c.is_closed_now())

    def floods(self):
        env = self.env
        base_fds = self.settled_fds()

        def silent():
            n = 200
            conns, failed = self.open_many(n, env.flood_srcs)
            problems = []
            took, err = handshake(env)
            if err:
                problems.append("client during 200 silent: %s" % err)
            elif took > 2.0:
                problems.append("client during 200 silent took %.2f s" % took)
            open_now = self.count_open(conns)
            time.sleep(env.stimeout + 3)
            still = self.count_open(conns)
            if failed:
                problems.append("%d connects failed" % failed)
            if still:
                problems.append("%d of %d silent connections still open "
                                "%d s after stimeout" % (still, n, 3))
            for c in conns:
                c.close()
            time.sleep(1)
            fds = self.fds()
            if fds != base_fds:
                problems.append("descriptors %d before, %d after" %
                                (base_fds, fds))
            return "%d connections" % n, problems, \
                "client served in %s, %d open then %d after stimeout, fds " \
                "%d->%d" % ("%.2f s" % took if took else "-", open_now, still,
                            base_fds, fds)
        self.attack("200 silent TCP connections", silent)

        def over_limit():
            # Every connection sends its SCCRQ and places no call: once
            # every slot is taken, a newcomer is refused or takes the place
            # of the oldest of them (answered, then closed: "replaced").
            log0 = len(self.server_log())
            n = env.connections + 30
            conns, failed = self.open_many(n, env.flood_srcs, speak=True)
            answered, refused = self.classify(conns)
            time.sleep(1.0)
            open_now = sum(1 for c in conns if not c.closed_now())
            replaced = answered - open_now
            fds_full = self.fds()
            problems = []
            # The live connection counts too.
            if open_now > env.connections - 1:
                problems.append("%d connections held, limit %d" %
                                (open_now + 1, env.connections))
            if refused + replaced <= 0:
                problems.append("nothing refused or replaced")
            if failed:
                problems.append("%d connects failed" % failed)
            newlog = self.server_log()[log0:]
            if not re.search(r"refus|limit|replaced", newlog, re.I):
                problems.append("no log line about refused connections")
            for c in conns:
                c.close()
            time.sleep(1.5)
            fds = self.fds()
            if fds != base_fds:
                problems.append("descriptors %d before, %d after" %
                                (base_fds, fds))
            return "%d connections" % n, problems, \
                "%d held, %d refused, %d replaced (log: %s), fds %d->%d->%d" % (
                    open_now, refused, replaced, self.refusals(newlog),
                    base_fds, fds_full, fds)
        self.attack("connections beyond 'connections'", over_limit)

        def per_address():
            log0 = len(self.server_log())
            n = 60
            conns, failed = self.open_many(n, [env.atk_src], speak=True)
            open_now, refused = self.classify(conns)
            problems = []
            took, err = handshake(env)   # from another address
            if err:
                problems.append("client from another address: %s" % err)
            if env.per_client <= 0:
                problems.append("the daemon has no per-address limit "
                                "(%d of %d held from one address)" %
                                (open_now, n))
            elif open_now > env.per_client:
                problems.append("%d held from one address, limit %d" %
                                (open_now, env.per_client))
            newlog = self.server_log()[log0:]
            if env.per_client > 0 and not re.search(r"refus|limit", newlog,
                                                    re.I):
                problems.append("no log line about refused connections")
            for c in conns:
                c.close()
            time.sleep(1.5)
            fds = self.fds()
            if fds != base_fds:
                problems.append("descriptors %d before, %d after" %
                                (base_fds, fds))
            return "%d connections from %s" % (n, env.atk_src), problems, \
                "%d held, %d refused (log: %s), fds %d->%d" % (
                    open_now, refused, self.refusals(newlog), base_fds, fds)
        self.attack("connections beyond the per-address limit", per_address)

        def pool_exhaustion():
            # One address, as many connections as it may hold, each with as
            # many calls as the server accepts: every call holds a pool
            # address and a pppd before anybody has authenticated.
            nconn = env.per_client if env.per_client > 0 else 8
            conns, _ = self.open_many(nconn, [env.atk_src], speak=True)
            calls = refused = 0
            cid = 20000
            live = []
            for c in conns:
                try:
                    if c.recv(w.SCCRP, timeout=3) is None:
                        continue
                    for _ in range(20):
                        cid += 1
                        c.send(w.ocrq(cid))
                    live.append([c, 20])
                except (Closed, OSError):
                    pass
            # Every call forks a pppd: give the server time to answer all.
            t0 = time.monotonic()
            end = t0 + 90
            while any(n for _, n in live) and time.monotonic() < end:
                for entry in live:
                    c, n = entry
                    if not n:
                        continue
                    try:
                        m = c.recv(w.OCRP, timeout=0.05)
                    except (Closed, OSError):
                        entry[1] = 0
                        continue
                    if m is not None:
                        entry[1] -= 1
                        if m["result"] == 1:
                            calls += 1
                        else:
                            refused += 1
            problems = []
            took, err = handshake(env)   # another address wants a call
            if err:
                problems.append("client from another address refused while "
                                "one address holds %d calls: %s" % (calls, err))
            for c in conns:
                try:
                    c.send(w.stopccrq())
                except OSError:
                    pass
                c.close()
            time.sleep(2)
            return "%d connections x 20 OCRQ from %s" % (len(conns), env.atk_src), \
                problems, "%d calls held by one address, %d refused, %d unanswered " \
                "after %.0f s" % (calls, refused, sum(n for _, n in live),
                                  time.monotonic() - t0)
        self.attack("address pool exhaustion from one address", pool_exhaustion)

    # ------------------------------------------------------ final check
    def new_real_client(self):
        env = self.env

        def run():
            if not env.real_client_cmd:
                return "0", ["no real client command given"], ""
            proc = subprocess.Popen(env.real_client_cmd, shell=True,
                                    stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, text=True)
            out, _ = proc.communicate(timeout=180)
            problems = [] if proc.returncode == 0 else [
                "second real session failed: " +
                " | ".join(out.strip().splitlines()[-3:])]
            return "1 session", problems, out.strip().splitlines()[-1] \
                if out.strip() else ""
        self.attack("a second real pptp-linux session after all attacks",
                    run, new_client=False)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--server", default="198.18.0.1")
    ap.add_argument("--client", default="198.18.0.2",
                    help="address of the live session's client")
    ap.add_argument("--tunnel-ip", required=True,
                    help="server's tunnel address, pinged by the client")
    ap.add_argument("--srv-ns", required=True)
    ap.add_argument("--cli-ns", required=True)
    ap.add_argument("--atk-ns", required=True)
    ap.add_argument("--atk-src", default="198.18.0.3")
    ap.add_argument("--legit-src", default="198.18.0.4")
    ap.add_argument("--flood-srcs", default="198.18.1.1-100")
    ap.add_argument("--pid", type=int, required=True, help="server pid")
    ap.add_argument("--live-pid", type=int, required=True,
                    help="pid of the live client's pppd")
    ap.add_argument("--log", required=True, help="server log file")
    ap.add_argument("--stimeout", type=int, default=5)
    ap.add_argument("--connections", type=int, default=250)
    ap.add_argument("--per-client", type=int, default=0,
                    help="per-address limit configured (0: none)")
    ap.add_argument("--real-client-cmd", default="",
                    help="shell command bringing up and testing a second "
                    "real session (exit 0 = good)")
    ap.add_argument("--only", default="",
                    help="comma-separated groups: control,order,gre,flood,final")
    ap.add_argument("--pick", default="",
                    help="comma-separated parts of attack names: only the "
                    "attacks whose name has one are run (the others are "
                    "listed as not run, and counted neither way)")
    a = ap.parse_args()

    env = Env()
    env.__dict__.update(vars(a))
    pfx, rng = a.flood_srcs.rsplit(".", 1)
    lo, hi = (int(x) for x in rng.split("-"))
    env.flood_srcs = ["%s.%d" % (pfx, i) for i in range(lo, hi + 1)]

    env.pinger = Pinger(a.cli_ns, a.tunnel_ip)
    env.watch_srv = GreWatch(a.srv_ns, a.client, wire=True)  # key = server's ID
    env.watch_cli = GreWatch(a.cli_ns, a.server)     # key = client's ID

    def live_ids():
        return env.watch_srv.call_id, env.watch_cli.call_id
    env.live_ids = live_ids

    def live_client_alive():
        try:
            os.kill(a.live_pid, 0)
            return True
        except OSError:
            return False
    env.live_client_alive = live_client_alive

    # Wait for the ping to flow and the IDs to be seen.
    for _ in range(100):
        if env.pinger.replies and env.watch_srv.seq is not None and \
                env.watch_cli.call_id is not None:
            break
        time.sleep(0.1)
    ours, peers = live_ids()
    log("live call: server Call ID %s, client Call ID %s, %d replies so far"
        % (ours, peers, len(env.pinger.replies)))

    s = Suite(env)
    groups = set(a.only.split(",")) if a.only else \
        {"control", "order", "gre", "flood", "final"}
    if "control" in groups:
        s.control_malformed()
    if "order" in groups:
        s.order_abuse()
    if "gre" in groups:
        s.gre_attacks()
    if "flood" in groups:
        s.floods()
    if "final" in groups:
        s.new_real_client()
    env.pinger.stop()
    if s.not_picked:
        log("%d attacks not run (--pick %s)" % (s.not_picked, a.pick))
    print("%d passed, %d failed" % (s.passed, s.failed), flush=True)
    return 1 if s.failed else 0


if __name__ == "__main__":
    sys.exit(main())
