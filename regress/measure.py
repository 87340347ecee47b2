#!/usr/bin/env python3
"""Measurement phase of the regression suite: runs as root on a kernel with
PPP (inside the test VM, or directly on a host that has PPP).

    python3 regress/measure.py PLAN.json

PLAN.json (written by regress/regress) names the versions (how to start each
server), the streams, the rounds and the results folder. For every round and
every version in turn (A B, then B A, A B ...), one session:

  1. the version's server starts in netns `srv` (198.18.0.1) with the same
     pptpd.conf and pppd options for every version;
  2. the real client dials in from netns `cli` (198.18.0.2): pppd with
     pptp-linux as its pty, MS-CHAPv2 (+ MPPE-128 unless MPPE=0);
  3. ping through the tunnel (RTT), then each stream with iperf3, bracketed
     by snapshots of the CPU time of every server-side process (pptpd,
     Poptop's pptpctrl, the pppd it runs); a stream with a `path` runs
     over netem on both ends of the veth, with pings and the server's
     ack timing (acksniff.py) taken on that path;
  4. hang up, stop the server, kill anything left in the namespaces.

Each measured stream is marked in RESULTS/load/ for the host, which reads
its own load beside the bed between the marks (hostbusy.py).

Results go to RESULTS/raw.json (rewritten after each session, so a run cut
short still leaves its data) and each iperf3 report to RESULTS/iperf/.
Exit status: 0 done, 2 a server or tunnel failed (message on stdout and in
raw.json "error"), 3 bad plan or environment.
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import streams as streamlib  # noqa: E402
import hostbusy  # noqa: E402
import hostload  # noqa: E402
import procstat  # noqa: E402
import perfprobe  # noqa: E402
from procstat import GUEST_BUSY, STAT_FIELDS, parse_stat_cpu  # noqa: E402,F401

SRV_NS, CLI_NS = "srv", "cli"
SRV_IP, CLI_IP = "198.18.0.1", "198.18.0.2"
TUN_LOCAL, TUN_POOL, TUN_PEER = "198.19.0.1", "198.19.0.10-40", "198.19.0.10"
USER, SERVER_NAME, SECRET = "regress", "pptpd", "regress-secret-1"
IPERF_PORT = 5201
LINKNAME = "regress"
# Processes of the server side that are not the server: the load generators
# (iperf3, and pptp-echo, the `sessions` streams' echo service beside the
# server) and our own probes. Everything else in netns srv is the server.
NOT_SERVER = {"iperf3", "pptp-echo", "ping", "ip", "ss", "sleep"}
CLK_TCK = os.sysconf("SC_CLK_TCK")
# A `path` stream's links: (direction, netns, the device whose egress
# carries that direction).
PATH_DEVS = (("up", CLI_NS, "rg-cli"), ("down", SRV_NS, "rg-srv"))
# Pings on a stream's path: its RTT (the idle tunnel's 10, as the session's).
PATH_PINGS = 10
ACKSNIFF = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "acksniff.py")
# Fewer acked data packets than this (a down stream's client sends few)
# make no ack-delay figure: a median of a handful is one timer's phase.
ACK_SAMPLES_MIN = 20


class SessionError(Exception):
    """A server or tunnel failure: the run ends with exit status 2."""


def log(msg):
    print(msg, flush=True)


def run(argv, timeout=30, check=True, ns=None):
    if ns:
        argv = ["ip", "netns", "exec", ns] + argv
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(argv), p.returncode,
                                                p.stdout.strip()[-500:]))
    return p


def tail(path, n=25):
    try:
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return "(no %s)" % path
    return "\n".join("    " + x for x in lines[-n:]) or "    (empty)"


# ----------------------------------------------------------------- syslog
class SyslogCatcher:
    """Inside the VM nothing listens on /dev/log, so Poptop's and pppd's
    messages would vanish; keep them in a file for failure reports."""

    def __init__(self, path, out):
        self.sock = None
        if os.path.exists(path):
            return
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            s.bind(path)
        except OSError:
            return
        self.sock, self.path, self.out = s, path, out
        threading.Thread(target=self._loop, daemon=True).start()

    def _loop(self):
        with open(self.out, "a", buffering=1, errors="replace") as f:
            while True:
                try:
                    data = self.sock.recv(8192)
                except OSError:
                    return
                msg = data.decode(errors="replace").rstrip("\n\0")
                f.write("%.3f %s\n" % (time.monotonic(), msg))

    def close(self):
        if self.sock:
            self.sock.close()
            try:
                os.unlink(self.path)
            except OSError:
                pass


# ----------------------------------------------------------------- processes
def netns_inode(name):
    return os.stat("/run/netns/%s" % name).st_ino


def pids_in_netns(ino):
    want = "net:[%d]" % ino
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            if os.readlink("/proc/%s/ns/net" % d) == want:
                out.append(int(d))
        except OSError:
            pass
    return out


def thread_ns(pid, proc="/proc"):
    """{tid: on-CPU ns} of every thread of a process (each thread's
    /proc/PID/task/TID/schedstat; /proc/PID/schedstat alone is the main
    thread's, so work moved into a thread would vanish), or None."""
    out = {}
    try:
        tids = os.listdir("%s/%d/task" % (proc, pid))
    except OSError:
        return None
    for tid in tids:
        try:
            with open("%s/%d/task/%s/schedstat" % (proc, pid, tid)) as f:
                out[int(tid)] = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue    # a thread that just ended
    return out or None


def proc_stat(pid, proc="/proc"):
    """(comm, ppid, utime+stime in ticks, {tid: on-CPU ns}) of a process,
    or None. The ticks are the whole process's, ended threads included;
    the ns are those of its live threads (thread_ns)."""
    st = procstat.pid_stat(pid, proc)
    if st is None:
        return None
    comm, rest = st
    ppid = int(rest[procstat.PID_PPID])
    ticks = int(rest[procstat.PID_UTIME]) + int(rest[procstat.PID_STIME])
    return comm, ppid, ticks, thread_ns(pid, proc)


def _ns_delta(n0, n1):
    """On-CPU ns between two readings of one process: per thread when the
    readings are {tid: ns} (a thread born in between counts from zero; one
    that ended is lost, and listed), else plain numbers. Returns (ns,
    threads that ended)."""
    if isinstance(n1, dict):
        n0 = n0 if isinstance(n0, dict) else {}
        ended = [t for t in n0 if t not in n1]
        return sum(v - n0.get(t, 0) for t, v in n1.items()), ended
    return n1 - (n0 or 0), []


def sessions_rtt(st):
    """The median echo round trip over every session of a `sessions`
    stream (pptp-load's histogram), in ms; None without one."""
    return (st.get("rtt") or {}).get("p50_ms")


def server_snapshot(ino):
    """{pid: (comm, ticks, ns)} of every server-side process."""
    snap = {}
    for pid in pids_in_netns(ino):
        st = proc_stat(pid)
        if st and st[0] not in NOT_SERVER:
            snap[pid] = (st[0], st[2], st[3])
    return snap


def cpu_delta(before, after):
    """CPU seconds used between two snapshots: (by ticks, by ns, per comm).

    The ns are summed over every thread of every process. A process or
    thread that appears in between counts from zero; one that is gone at
    the end is lost (listed in `vanished`).
    """
    ticks = 0
    ns = 0
    have_ns = True
    per = {}
    vanished = []
    for pid, (comm, t1, n1) in after.items():
        _, t0, n0 = before.get(pid, (comm, 0, 0))
        ticks += t1 - t0
        if n1 is None or n0 is None:
            have_ns = False
        else:
            d, ended = _ns_delta(n0, n1)
            ns += d
            vanished += ["%s thread %d" % (comm, t) for t in ended]
        per[comm] = per.get(comm, 0.0) + (t1 - t0) / CLK_TCK
    vanished = [before[p][0] for p in before if p not in after] + vanished
    return (ticks / CLK_TCK, ns / 1e9 if have_ns else None, per, vanished)


guest_cpu = procstat.read_stat_cpu


def guest_cpu_delta(before, after, clk_tck=CLK_TCK):
    """Seconds of each /proc/stat field between two guest_cpu() readings,
    and `busy`: all the system's own work (GUEST_BUSY), whichever context
    it ran in -- processes, softirq, NAPI or kworker threads alike."""
    d = {k: (after[k] - before[k]) / clk_tck for k in STAT_FIELDS}
    d["busy"] = sum(d[k] for k in GUEST_BUSY)
    return d


def per_mb(seconds, nbytes):
    """ms of CPU per MB (10^6 bytes), or None with nothing carried."""
    if seconds is None or not nbytes or nbytes <= 0:
        return None
    return seconds * 1000.0 / (nbytes / 1e6)


def ppp_counters(pid, first):
    """(bytes, packets) summed over the ppp interfaces of the netns of
    `pid`, from /proc/PID/net/dev columns `first` and `first`+1 (0: the
    receive side, 8: the transmit side); (0, 0) when there is none."""
    b = n = 0
    try:
        with open("/proc/%d/net/dev" % pid) as f:
            for line in f:
                name, sep, rest = line.partition(":")
                if sep and name.strip().startswith("ppp"):
                    v = rest.split()
                    b += int(v[first])
                    n += int(v[first + 1])
    except (OSError, TypeError, ValueError, IndexError):
        pass
    return b, n


def ppp_rx(pid):
    """(bytes, packets) received by the ppp interfaces of `pid`'s netns."""
    return ppp_counters(pid, 0)


def ppp_tx(pid):
    """(bytes, packets) sent by the ppp interfaces of `pid`'s netns."""
    return ppp_counters(pid, 8)


def ppp_count(pid):
    """ppp interfaces in the netns of `pid` (sessions up on the server)."""
    try:
        with open("/proc/%d/net/dev" % pid) as f:
            return sum(1 for line in f
                       if line.partition(":")[0].strip().startswith("ppp"))
    except OSError:
        return 0


def wait_quiet(pid, quiet, limit):
    """Wait until the ppp interfaces of `pid`'s netns received nothing for
    `quiet` seconds (at most `limit`); returns the seconds waited."""
    t0 = time.monotonic()
    last = ppp_rx(pid)
    still = time.monotonic()
    while time.monotonic() - t0 < limit:
        time.sleep(0.1)
        cur = ppp_rx(pid)
        now = time.monotonic()
        if cur != last:
            last, still = cur, now
        elif now - still >= quiet:
            break
    return time.monotonic() - t0


def kill_netns(ino, sig=signal.SIGKILL):
    for pid in pids_in_netns(ino):
        try:
            os.kill(pid, sig)
        except OSError:
            pass


def wait_gone(pids_fn, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if not pids_fn():
            return True
        time.sleep(0.1)
    return not pids_fn()


def tcp_listening(pid, port):
    """True when the netns of `pid` has a TCP socket listening on `port`
    (IPv4, or IPv6 as a server bound to no address listens: [::])."""
    for table in ("tcp", "tcp6"):
        try:
            with open("/proc/%d/net/%s" % (pid, table)) as f:
                next(f)
                for line in f:
                    p = line.split()
                    if p[3] == "0A" and int(p[1].rsplit(":", 1)[1],
                                            16) == port:
                        return True
        except (OSError, StopIteration):
            pass
    return False


# ----------------------------------------------------------------- the bed
class Bed:
    """Network namespaces, secrets and config files, for the whole run."""

    def __init__(self, work, mppe, napi=True, sessions=1, host=False):
        self.work = work
        self.mppe = mppe
        self.napi = napi
        # The largest `sessions N` of the plan's streams: beyond 1, the
        # server's netns also gets the VM's tap link and a pool for them.
        self.sessions = sessions
        self.host = host or sessions > 1
        self.made_ns = []

    def setup(self):
        for ns in (SRV_NS, CLI_NS):
            if os.path.exists("/run/netns/%s" % ns):
                raise RuntimeError(
                    "netns %s already exists (another test running? "
                    "remove it with `ip netns del %s`)" % (ns, ns))
        for ns in (SRV_NS, CLI_NS):
            run(["ip", "netns", "add", ns])
            self.made_ns.append(ns)
            run(["ip", "link", "set", "lo", "up"], ns=ns)
        run(["ip", "link", "add", "rg-srv", "netns", SRV_NS, "type", "veth",
             "peer", "name", "rg-cli", "netns", CLI_NS])
        for ns, dev, ip in ((SRV_NS, "rg-srv", SRV_IP),
                            (CLI_NS, "rg-cli", CLI_IP)):
            run(["ip", "addr", "add", ip + "/24", "dev", dev], ns=ns)
            run(["ip", "link", "set", dev, "up"], ns=ns)
            if self.napi:
                self._threaded_napi(ns, dev)
        for ns, dev, peer_ns, peer_dev, peer_ip in (
                (SRV_NS, "rg-srv", CLI_NS, "rg-cli", CLI_IP),
                (CLI_NS, "rg-cli", SRV_NS, "rg-srv", SRV_IP)):
            # Sessions must start alike: no TCP state carried over from the
            # previous session's connections (cached ssthresh/RTT change
            # how a TCP stream starts), no ARP aging in the middle of one.
            run(["sysctl", "-q", "-w", "net.ipv4.tcp_no_metrics_save=1"],
                ns=ns)
            mac = run(["cat", "/sys/class/net/%s/address" % peer_dev],
                      ns=peer_ns).stdout.strip()
            run(["ip", "neigh", "replace", peer_ip, "lladdr", mac, "dev", dev,
                 "nud", "permanent"], ns=ns)
        if self.host:
            self._tap_link()
        self.srv_ino = netns_inode(SRV_NS)
        self.cli_ino = netns_inode(CLI_NS)
        self._secrets()
        self._configs()
        self._worker_user()

    def _worker_user(self):
        """The user of pptpd's worker (`privsep yes`, pptpd's default:
        scripts/privsep-user). Versions from before privsep never look
        it up."""
        run([os.path.join(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__))), "scripts", "privsep-user")])

    def _tap_link(self):
        """The VM's link to the host (scripts/vm/run --tap) into netns srv,
        the clients' source range routed to the host side: pptp-load on
        the host reaches the server there (scripts/vm/README)."""
        dev = os.environ.get("PPTPD_VM_TAP_IF")
        if not dev:
            raise RuntimeError("a `sessions` stream needs the VM's tap link "
                               "(scripts/vm/run --tap)")
        run(["ip", "link", "set", dev, "netns", SRV_NS])
        run(["ip", "addr", "add", os.environ["PPTPD_VM_TAP_ADDR"], "dev",
             dev], ns=SRV_NS)
        run(["ip", "link", "set", dev, "up"], ns=SRV_NS)
        run(["ip", "route", "add", hostload.SRC, "via",
             os.environ["PPTPD_VM_TAP_HOST"], "dev", dev], ns=SRV_NS)
        for key in ("all", "default", dev):
            run(["sysctl", "-q", "-w", "net.ipv4.conf.%s.rp_filter=0" % key],
                ns=SRV_NS)
        run(["sysctl", "-q", "-w", "net.core.somaxconn=4096"], ns=SRV_NS)
        run(["sh", "-c", "echo 1 > /sys/class/net/%s/threaded" % dev],
            ns=SRV_NS, check=False)

    def pool(self):
        """remoteip: the single session's range, and room for the largest
        `sessions` stream (one last-octet range per /24, as Poptop reads)."""
        ranges, left, o3 = [TUN_POOL], self.sessions + self.host, 1
        while self.host and left > 0:
            ranges.append("198.19.%d.1-%d" % (o3, min(left, 250)))
            left -= 250
            o3 += 1
        return ",".join(ranges)

    @staticmethod
    def _threaded_napi(ns, dev):
        """Receive on `dev` in a NAPI kernel thread of its own. Otherwise a
        packet crossing the veth pair is processed in softirq context on
        top of whichever process sent it, and the receiving side's work
        (the client's GRE, IP, TCP) is charged to the sender -- to the
        server when it sends, in bursts that vary from run to run. GRO on
        gives the veth a NAPI instance; `threaded` moves its poll loop into
        a kthread, which is counted for neither side."""
        run(["ethtool", "-K", dev, "gro", "on"], ns=ns)
        run(["sh", "-c", "echo 1 > /sys/class/net/%s/threaded" % dev], ns=ns)

    def _secrets(self):
        """Our CHAP secret in /etc/ppp/chap-secrets. In the VM the root is a
        throw-away overlay: write it there. On a host, this process runs in
        a private mount namespace (see main): /etc/ppp is replaced there by
        a copy, so the host's files are never touched."""
        if not os.environ.get("PPTPD_IN_VM"):
            if os.environ.get("REGRESS_MNTNS") != "1":
                raise RuntimeError("refusing to edit the host's /etc/ppp "
                                   "outside a private mount namespace")
            copy = os.path.join(self.work, "etc-ppp")
            if os.path.isdir("/etc/ppp"):
                shutil.copytree("/etc/ppp", copy, symlinks=True)
            else:
                os.makedirs(copy)
                os.makedirs("/etc/ppp", exist_ok=True)
            run(["mount", "--bind", copy, "/etc/ppp"])
        path = "/etc/ppp/chap-secrets"
        old = ""
        if os.path.exists(path):
            with open(path) as f:
                old = f.read()
        os.makedirs("/etc/ppp", exist_ok=True)
        with open(path, "w") as f:
            f.write(old + '\n%s %s "%s" *\n' % (USER, SERVER_NAME, SECRET))
        os.chmod(path, 0o600)

    def _configs(self):
        w = self.work
        enc = ["require-mppe-128"] if self.mppe else ["nomppe"]
        common = ["nodefaultroute", "nobsdcomp", "nodeflate", "novj",
                  "novjccomp", "ip-up-script /bin/true",
                  "ip-down-script /bin/true", "lcp-echo-interval 0"]
        srv_opts = ["name " + SERVER_NAME, "refuse-pap", "refuse-chap",
                    "refuse-mschap", "require-mschap-v2"] + enc + common + \
            ["logfile %s/pppd-srv.log" % w]
        cli_opts = ["name " + USER, "remotename " + SERVER_NAME, "noauth",
                    "refuse-pap", "refuse-eap", "refuse-chap",
                    "refuse-mschap"] + enc + common + \
            ["linkname " + LINKNAME, "maxfail 1",
             "logfile %s/pppd-cli.log" % w]
        with open(w + "/options.pptpd", "w") as f:
            f.write("\n".join(srv_opts) + "\n")
        with open(w + "/options.client", "w") as f:
            f.write("\n".join(cli_opts) + "\n")
        # The same Poptop-format file for every version.
        with open(w + "/pptpd.conf", "w") as f:
            f.write("option %s/options.pptpd\nlocalip %s\nremoteip %s\n"
                    "connections %d\n" % (w, TUN_LOCAL, self.pool(),
                                           max(10, self.sessions + 10)))

    def path_on(self, path):
        """netem on each end's egress: `up` (client -> server) on rg-cli,
        `down` on rg-srv; a direction the path does not name stays clean."""
        for d, ns, dev in PATH_DEVS:
            if d in path:
                run(["tc", "qdisc", "replace", "dev", dev, "root"] +
                    streamlib.netem_args(path[d]), ns=ns)

    def path_off(self):
        """Back to the clean link (the veth's default qdisc). Both ends,
        whatever the path named, so a run cut short leaves no netem."""
        for _, ns, dev in PATH_DEVS:
            out = run(["tc", "qdisc", "show", "dev", dev, "root"], ns=ns,
                      check=False).stdout
            if "netem" in out:
                run(["tc", "qdisc", "del", "dev", dev, "root"], ns=ns)

    def teardown(self):
        for ns in self.made_ns:
            try:
                kill_netns(netns_inode(ns))
            except OSError:
                pass
        time.sleep(0.2)
        for ns in self.made_ns:
            run(["ip", "netns", "del", ns], check=False)
        self.made_ns = []


# ----------------------------------------------------------------- iperf3
def _udp_side(j, sender):
    """The UDP stream dict of the sender or receiver of an iperf3 report."""
    for doc in (j, j.get("server_output_json") or {}):
        for st in doc.get("end", {}).get("streams", []):
            u = st.get("udp")
            if u is not None and bool(u.get("sender")) == sender:
                return u
    return None


# A stream both of whose ends counted less than this share of the
# planned seconds was cut short (iperf3 stopped, a side died): no figure.
# Both, for a `client host` stream has two clocks: its end in the VM
# counts guest seconds, fewer than the host's real ones when the host is
# loaded (seen: 5.35 of 6), while the host's end counts them all.
CUT_SHORT = 0.95


# iperf3 sets a UDP stream up with one datagram each way and no
# retransmission (esnet/iperf issue 862): on a lossy path (lossy-wifi's 2 %
# each way) that handshake is lost now and then, and iperf3 ends before any
# interval with this error. Not a measurement: a `path` stream is run again
# once, and the tries are in raw.json.
IPERF_SETUP_LOST = "unable to read from stream socket"


def iperf_setup_lost(text):
    """True when iperf3's JSON report says its UDP stream setup was lost
    (IPERF_SETUP_LOST before any interval)."""
    try:
        j = json.loads(text)
    except ValueError:
        return False
    return (isinstance(j, dict) and not j.get("intervals") and
            IPERF_SETUP_LOST in str(j.get("error") or ""))


def iperf_result(status, text, stream):
    """parse_iperf() of iperf3's output, given its exit status: a run that
    failed is an error (ValueError) even when its report has figures, for
    they are those of a stream cut short."""
    try:
        j = json.loads(text)
    except ValueError:
        j = None
    if status != 0:
        why = j.get("error") if isinstance(j, dict) else None
        raise ValueError("iperf3 exited with status %s: %s" % (
            status, why or (text or "").strip()[-200:] or "no output"))
    if not isinstance(j, dict):
        raise ValueError("iperf3: no JSON report")
    return parse_iperf(j, stream)


def parse_iperf(j, stream):
    """Metrics of one stream from the client's iperf3 -J report (made with
    --get-server-output, so both ends' views are in it). A report with an
    `error`, or whose two ends both counted fewer seconds than planned, is
    a stream cut short: ValueError, never a figure."""
    if j.get("error"):
        raise ValueError("iperf3: %s" % j["error"])
    end = j["end"]
    planned = (j.get("start", {}).get("test_start", {}).get("duration") or
               stream.get("duration"))
    ends = [end.get(k, {}).get("seconds") for k in ("sum_received",
                                                     "sum_sent")]
    ends = [x for x in ends if x is not None]
    if planned and ends and max(ends) < planned * CUT_SHORT:
        raise ValueError("iperf3: the stream was cut short (%.2f of %g s)"
                         % (max(ends), planned))
    m = {}
    d = {}
    if stream["kind"] == "udp":
        # sum_received / sum_sent merge both ends' counters (the client
        # gets the server's through --get-server-output); the per-stream
        # dicts only serve the receiver's out-of-order count.
        rx = end["sum_received"]
        tx = end["sum_sent"]
        recv_side = _udp_side(j, sender=False)
        size = stream["size"]
        received = rx["bytes"] / size
        sent = tx["packets"]
        d.update(bytes=rx["bytes"], sent_packets=sent,
                 received_packets=received, seconds=rx["seconds"],
                 iperf_lost_percent=rx.get("lost_percent"))
        m["throughput"] = rx["bits_per_second"] / 1e6
        # Loss from what was sent versus what arrived, so packets dropped
        # at the tail (never followed by a later one) count too.
        m["loss"] = max(0.0, 1.0 - received / sent) * 100.0 if sent else None
        m["ooo"] = float((recv_side or {}).get("out_of_order", 0))
        m["jitter"] = rx.get("jitter_ms")
    else:
        rx = end["sum_received"]
        d.update(bytes=rx["bytes"], seconds=rx["seconds"])
        m["throughput"] = rx["bits_per_second"] / 1e6
        retr = None
        for doc in (j, j.get("server_output_json") or {}):
            s = doc.get("end", {}).get("sum_sent", {})
            if doc.get("end", {}).get("streams") and \
                    s.get("retransmits") is not None and \
                    any(st.get("sender", {}).get("sender")
                        for st in doc["end"]["streams"]):
                retr = s["retransmits"]
                break
        m["retrans"] = float(retr) if retr is not None else None
    cpu = end.get("cpu_utilization_percent") or {}
    d["iperf_cpu_client"] = cpu.get("host_total")
    d["iperf_cpu_server"] = cpu.get("remote_total")
    return m, d


def parse_ping(out):
    times = [float(x) for x in re.findall(r"time=([0-9.]+) ms", out)]
    m = re.search(r"(\d+) packets transmitted, (\d+) received", out)
    sent, got = (int(m.group(1)), int(m.group(2))) if m else (0, len(times))
    return times, sent, got


def median(xs):
    xs = sorted(xs)
    if not xs:
        return None
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


# ----------------------------------------------------------------- sessions
def merge_conf(base, extra):
    """pptpd.conf text: the common lines, then a version's own (its plugin,
    the +KEY=VALUE of its spec). A version's line replaces a common line
    with the same keyword (+connections=5), rather than repeating it."""
    keys = {line.split()[0] for line in extra if line.split()}
    kept = [line for line in base
            if not line.split() or line.split()[0] not in keys]
    return "".join(line + "\n" for line in kept + list(extra))


class AckSniff:
    """acksniff.py in netns cli for the length of a stream."""

    def __init__(self, work):
        self.err = open(os.path.join(work, "acksniff.log"), "w")
        self.p = subprocess.Popen(
            ["ip", "netns", "exec", CLI_NS, sys.executable, ACKSNIFF,
             "rg-cli"], stdout=subprocess.PIPE, stderr=self.err,
            stdin=subprocess.DEVNULL, text=True)
        if self.p.stdout.readline().strip() != "ready":
            self.p.kill()
            self.p.wait()
            self.err.close()
            raise RuntimeError("acksniff.py did not start (see %s)"
                               % self.err.name)

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        try:
            out, _ = self.p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            out, _ = self.p.communicate()
        self.err.close()
        try:
            return json.loads(out.strip().splitlines()[-1])
        except (ValueError, IndexError):
            return {"n": 0, "median_ms": None, "error": out[-200:]}


PERF = perfprobe.PERF     # a module attribute: tests point it elsewhere
PROFILE_KINDS = ("trace", "perf")
# perf report of a few seconds' samples takes seconds under TCG; one stuck
# must not hang the run.
PERF_REPORT_S = 300


class Profile:
    """REGRESS_PROFILE's probes over a stream's steady window: `trace`
    counts the server processes' system calls (perf trace -s: calls and
    time per syscall and thread), `perf` samples the whole guest (software
    clock, TCG has no PMU; call graphs), so the kernel's share of the work
    (softirq, kworkers) is seen beside the processes'. Both cost guest CPU:
    a profiled run's figures are not comparable with an unprofiled one's,
    only the profiled versions with each other. Files: BASE.trace.txt,
    BASE.perf.comm.txt (by command and object), BASE.perf.txt (by symbol),
    BASE.perf.server.txt (the server's commands alone), BASE.profile.log
    (the probes' own output). A probe that fails is said in the log and
    costs the run nothing else."""

    def __init__(self, kinds, base, pids, secs, scratch):
        self.base = base
        self.procs = []
        self.log = open(base + ".profile.log", "w")
        # perf.data stays off the results folder, which is the host's
        # (9p): writing it there would add to the window's guest CPU.
        self.data = os.path.join(scratch, os.path.basename(base) +
                                 ".perf.data") if "perf" in kinds else None
        if "trace" in kinds and pids:
            self._start([PERF, "trace", "-s", "-o", base + ".trace.txt",
                         "-p", ",".join(str(p) for p in pids)])
        if self.data:
            self._start(perfprobe.record_argv(
                self.data, "%.1f" % max(secs, 0.5), PERF))

    def _start(self, argv):
        try:
            self.procs.append(subprocess.Popen(
                argv, stdout=self.log, stderr=subprocess.STDOUT))
        except OSError as e:
            self.log.write("%s: %s\n" % (argv[0], e))

    def stop(self):
        """End the probes (perf trace prints its summary on SIGINT);
        again is harmless."""
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
        for p in self.procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs = []

    def report(self, comms):
        """Write the reports (after the stream's CPU window: perf report
        is slow under TCG); `comms` are the server's command names (none
        for `plain`: no server file then). Ends the probe: the data goes,
        the log is closed, whatever happens."""
        try:
            if self.data and os.path.exists(self.data):
                self._reports(comms)
        finally:
            self.discard()

    def discard(self):
        """End the probe without reports."""
        self.stop()
        if self.data and os.path.exists(self.data):
            os.unlink(self.data)
        if not self.log.closed:
            self.log.close()

    def _reports(self, comms):
        # The server's alone, inclusive (--children) and relative to its
        # own samples: under TCG a sample lands where interrupts come back
        # on (spin_unlock_irq...), so the self time of a symbol says
        # little; the system call it was under says more.
        views = [("comm,dso", None, ".perf.comm.txt"),
                 ("sym", None, ".perf.txt")]
        if comms:
            views.append(("comm,sym", ",".join(sorted(comms)),
                          ".perf.server.txt"))
        for sort, comm, suffix in views:
            argv = [PERF, "report", "-i", self.data, "--stdio", "-g",
                    "none", "--percent-limit", "0.5", "--sort", sort]
            if comm:
                argv += ["--comms", comm, "--children", "--percentage",
                         "relative"]
            else:
                argv += ["--no-children"]
            with open(self.base + suffix, "w") as out:
                try:
                    subprocess.run(argv, stdout=out, stderr=self.log,
                                   timeout=PERF_REPORT_S)
                except (OSError, subprocess.TimeoutExpired) as e:
                    self.log.write("perf report: %s\n" % e)


def profile_kinds(text):
    """REGRESS_PROFILE's value: a comma list of PROFILE_KINDS ("" none);
    ValueError names a kind it does not know."""
    kinds = [k.strip() for k in (text or "").split(",") if k.strip()]
    for k in kinds:
        if k not in PROFILE_KINDS:
            raise ValueError("REGRESS_PROFILE: unknown kind %r (known: %s)"
                             % (k, ", ".join(PROFILE_KINDS)))
    return kinds


class Session:
    def __init__(self, bed, version, tag):
        self.bed = bed
        self.v = version
        self.tag = tag
        self.server = None
        self.iperf = None
        self.log = os.path.join(bed.work, "server-%s.log" % tag)
        # `plain`: no server and no tunnel; the streams run over plain IP
        # to the server's netns (its own addresses), as a baseline.
        self.plain = version.get("kind") == "plain"
        self.profile = []       # REGRESS_PROFILE's kinds (Profile)

    def target(self, host):
        """Where the streams go: the tunnel's far end (localip) or, for
        `plain`, the server netns' address on the link the client is on
        (the VM's tap for `client host`, the veth otherwise)."""
        if not self.plain:
            return TUN_LOCAL
        return hostload.SERVER if host else SRV_IP

    def netns_pid(self):
        """A process in netns srv: the server, or for `plain` iperf3."""
        return (self.server or self.iperf).pid

    def start(self, dial_timeout):
        """Start the server and dial in; returns seconds to bring it up."""
        if self.plain:
            self._iperf_server(None)
            return {"listen_s": None, "up_s": None}
        w = self.bed.work
        for f in ("pppd-srv.log", "pppd-cli.log"):
            open(os.path.join(w, f), "w").close()
        conf = "%s/pptpd-%s.conf" % (w, self.v["key"])
        extra = self.v.get("conf", [])
        with open(w + "/pptpd.conf") as src, open(conf, "w") as dst:
            dst.write(merge_conf(src.read().splitlines(), extra))
        argv = ["ip", "netns", "exec", SRV_NS] + self.v["server"] + \
            ["-f", "-c", conf, "-p", w + "/pptpd.pid"]
        t0 = time.monotonic()
        with open(self.log, "w") as lf:
            self.server = subprocess.Popen(argv, stdout=lf, stderr=lf,
                                           stdin=subprocess.DEVNULL,
                                           start_new_session=True)
        end = t0 + 20
        while not tcp_listening(self.server.pid, 1723):
            if self.server.poll() is not None:
                raise SessionError("%s: server exited with status %s before "
                                   "listening on 1723" % (
                                       self.v["label"], self.server.returncode))
            if time.monotonic() > end:
                raise SessionError("%s: server not listening on 1723 after "
                                   "20 s" % self.v["label"])
            time.sleep(0.05)
        t_listen = time.monotonic() - t0
        # pppd with updetach exits 0 once IPCP is up, non-zero if it fails.
        cli = ["ip", "netns", "exec", CLI_NS, "pppd", "pty",
               "pptp %s --nolaunchpppd" % SRV_IP,
               "file", w + "/options.client", "updetach"]
        try:
            p = subprocess.run(cli, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True,
                               timeout=dial_timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise SessionError("%s: tunnel not up after %d s"
                               % (self.v["label"], dial_timeout))
        if p.returncode != 0:
            raise SessionError("%s: client pppd failed (exit %d): %s"
                               % (self.v["label"], p.returncode,
                                  p.stdout.strip()[-300:]))
        # Both ends have their address once the server side's IPCP is up.
        end = time.monotonic() + 10
        while True:
            out = run(["ip", "-o", "-4", "addr", "show"], ns=SRV_NS).stdout
            if "peer %s" % TUN_PEER in out:
                break
            if time.monotonic() > end:
                raise SessionError("%s: client up but the server side has no "
                                   "ppp interface with peer %s"
                                   % (self.v["label"], TUN_PEER))
            time.sleep(0.1)
        t_up = time.monotonic() - t0
        self._iperf_server(TUN_LOCAL)
        return {"listen_s": round(t_listen, 3), "up_s": round(t_up, 3)}

    def _iperf_server(self, bind):
        """iperf3's server in netns srv, on `bind` (None: every address)."""
        lf = open(os.path.join(self.bed.work, "iperf3-server.log"), "w")
        self.iperf = subprocess.Popen(
            ["ip", "netns", "exec", SRV_NS, "iperf3", "-s", "-J"] +
            (["-B", bind] if bind else []) + ["-p", str(IPERF_PORT)],
            stdout=lf, stderr=lf, stdin=subprocess.DEVNULL,
            start_new_session=True)
        lf.close()
        end = time.monotonic() + 10
        while not tcp_listening(self.iperf.pid, IPERF_PORT):
            if self.iperf.poll() is not None or time.monotonic() > end:
                raise SessionError("iperf3 server did not start")
            time.sleep(0.05)

    def check_alive(self):
        if self.plain:
            return
        if self.server.poll() is not None:
            raise SessionError("%s: server exited (status %s) during the "
                               "session" % (self.v["label"],
                                            self.server.returncode))

    def ping(self, count):
        p = run(["ping", "-n", "-c", str(count),
                 "-i", "0.1", "-W", "3", self.target(False)], ns=CLI_NS,
                check=False,
                timeout=count * 0.1 + 30)
        times, sent, got = parse_ping(p.stdout)
        if not times:
            raise SessionError("%s: no ping reply through the tunnel"
                               % self.v["label"])
        return {"rtt": median(times)}, {
            "rtt_min": min(times), "rtt_max": max(times),
            "sent": sent, "received": got}

    def _rx_pid(self, direction):
        """A process in the netns at the receiving end of a stream."""
        if direction == "down":
            pids = pids_in_netns(self.bed.cli_ino)
            return pids[0] if pids else None
        return self.netns_pid()

    def stream(self, s, raw_path, settle):
        """Run one stream; CPU and tunnel bytes are taken over the same
        window: from before iperf3 starts until the receiving end's ppp
        interface has been quiet for `settle` seconds after it ended (the
        data still queued in buffers when iperf3 stops is carried and paid
        for inside the window)."""
        if s.get("sessions", 1) > 1:
            return self.load_stream(s, raw_path)
        if s.get("client") == "host":
            return self.host_stream(s, raw_path, settle)
        if s.get("path"):
            return self.path_stream(s, raw_path, settle)
        self.check_alive()
        ino = self.bed.srv_ino
        rx_pid = self._rx_pid(s["direction"])
        rx0 = ppp_rx(rx_pid)
        before = server_snapshot(ino)
        g0 = guest_cpu()
        sys0 = procstat.not_idle(g0)
        t0 = time.monotonic()
        argv = ["ip", "netns", "exec", CLI_NS, "iperf3"] + \
            streamlib.iperf_args(s, self.target(False), IPERF_PORT)
        out_path = raw_path + ".tmp"
        with open(out_path, "w") as of:
            proc = subprocess.Popen(argv, stdout=of, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL)
        # The steady part of the stream: from `lead` seconds after iperf3
        # starts (it has connected and TCP has left slow start) to the
        # stream's nominal end (iperf3's own setup delays the real end).
        dur = s["duration"]
        lead = min(1.0, dur / 3.0)
        mid = []
        prof = None
        try:
            for at in (lead, dur):
                left = t0 + at - time.monotonic()
                if left > 0:
                    try:
                        proc.wait(left)
                    except subprocess.TimeoutExpired:
                        pass
                if proc.poll() is None:
                    mid.append((time.monotonic(), server_snapshot(ino),
                                ppp_rx(rx_pid)))
                    if self.profile and len(mid) == 1:
                        prof = Profile(self.profile,
                                       os.path.splitext(raw_path)[0],
                                       sorted(mid[0][1]), dur - lead,
                                       self.bed.work)
        except BaseException:
            if prof:
                prof.discard()
            proc.kill()
            proc.wait()
            raise
        if prof:
            prof.stop()
        try:
            proc.wait(dur * 4 + 60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            if prof:
                prof.discard()
            raise SessionError("%s: iperf3 %s hung" % (self.v["label"],
                                                       s["name"]))
        wall = time.monotonic() - t0
        with open(out_path) as f:
            stdout = f.read()
        os.unlink(out_path)
        p = subprocess.CompletedProcess(argv, proc.returncode, stdout)
        drain = wait_quiet(rx_pid, settle, 10.0)
        after = server_snapshot(ino)
        g1 = guest_cpu()
        sys1 = procstat.not_idle(g1)
        rx1 = ppp_rx(rx_pid)
        with open(raw_path, "w") as f:
            f.write(p.stdout)
        if prof:
            prof.report({v[0] for v in mid[0][1].values()})
        try:
            m, d = iperf_result(p.returncode, p.stdout, s)
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise SessionError("%s: stream %s: %s (report in %s)" % (
                self.v["label"], s["name"], e, raw_path))
        cpu_ticks, cpu_ns, per, vanished = cpu_delta(before, after)
        cpu = cpu_ns if cpu_ns is not None else cpu_ticks
        tun_bytes = rx1[0] - rx0[0]
        mb = tun_bytes / 1e6
        m["cpu_per_mb"] = cpu * 1000.0 / mb if mb > 0 else None
        self._guest_metrics(m, d, g0, g1)
        if len(mid) == 2:
            c_t, c_ns, _, _ = cpu_delta(mid[0][1], mid[1][1])
            s_mb = (mid[1][2][0] - mid[0][2][0]) / 1e6
            s_cpu = c_ns if c_ns is not None else c_t
            d.update(steady_s=round(mid[1][0] - mid[0][0], 3),
                     steady_cpu_s=s_cpu, steady_bytes=mid[1][2][0] -
                     mid[0][2][0],
                     steady_cpu_per_mb=s_cpu * 1000.0 / s_mb
                     if s_mb > 0 else None)
        busy = sys1[0] - sys0[0]
        total = sys1[1] - sys0[1]
        if prof:
            d["profiled"] = list(self.profile)
        d.update(server_cpu_s=cpu, server_cpu_ticks_s=cpu_ticks,
                 server_cpu_ns_s=cpu_ns, server_cpu_by_comm=per,
                 server_vanished=vanished, wall_s=round(wall, 3),
                 drain_s=round(drain, 3), tunnel_bytes=tun_bytes,
                 tunnel_packets=rx1[1] - rx0[1],
                 vm_busy_pct=busy * 100.0 / total if total else None,
                 server_cpu_pct=cpu * 100.0 / wall if wall else None)
        self.check_alive()
        return m, d

    def path_stream(self, s, raw_path, settle):
        """A stream over an emulated link (`path`): netem on both ends of
        the veth for the stream alone (the dial and the idle ping are on
        the clean link, so every version's session starts alike), taken
        off again however the stream ends. On the path: the RTT of
        PATH_PINGS pings, then the stream, with the server's ack timing
        read on the client's end of the wire (acksniff.py)."""
        self.bed.path_on(s["path"])
        sniff = None
        try:
            m_ping, d_ping = self.ping(PATH_PINGS)
            sniff = AckSniff(self.bed.work)
            m, d, tries = self._path_stream_tries(s, raw_path, settle)
            acks = sniff.stop()
            sniff = None
            m["rtt"] = m_ping["rtt"]
            m["ack_delay"] = acks["median_ms"] \
                if acks["n"] >= ACK_SAMPLES_MIN else None
            d.update(path=s["path"], path_ping=d_ping, acks=acks,
                     stream_tries=tries)
            return m, d
        finally:
            if sniff:
                sniff.stop()
            self.bed.path_off()

    def _path_stream_tries(self, s, raw_path, settle):
        """The stream on the path, once more when iperf3 lost its UDP
        setup handshake to the path's loss (IPERF_SETUP_LOST): (m, d,
        tries). Any other failure, or a second loss, is the stream's."""
        for tries in (1, 2):
            try:
                m, d = self.stream(dict(s, path=None), raw_path, settle)
                return m, d, tries
            except SessionError:
                try:
                    with open(raw_path) as f:
                        lost = iperf_setup_lost(f.read())
                except OSError:
                    lost = False
                if tries == 2 or not lost:
                    raise
        raise AssertionError("unreachable")

    def host_stream(self, s, raw_path, settle):
        """A single-session stream from the host (`client host`): one
        pptp-load session in TUN mode with iperf3 through it. The window is
        taken while that session is up (hostload's phases: the host says
        `up`, we snapshot and say `go`, it runs iperf3 and says `ran`, we
        wait until the server's ppp interfaces are quiet, snapshot and say
        `fin`), so the session's setup and teardown are outside it. The
        bytes are the server's own: what its ppp interfaces received (up)
        or sent (down)."""
        self.check_alive()
        ino = self.bed.srv_ino
        pid = self.netns_pid()
        count = ppp_rx if s["direction"] == "up" else ppp_tx
        argv = streamlib.iperf_args(s, self.target(True), IPERF_PORT)
        req = hostload.Phased(self.bed.folder, [
            "--server", hostload.SERVER, "--source", hostload.src_range(1),
            "--user", USER, "--password", SECRET,
            "--mppe", "128" if self.bed.mppe else "none",
            "--deadline", str(int(s["duration"] * 4 + 180))],
            argv, s["duration"] * 4 + 120, tunnel=not self.plain)
        if not req.wait("up"):
            raise SessionError("%s: stream %s: the host's pptp-load session "
                               "did not come up (%s)" % (
                                   self.v["label"], s["name"],
                                   req.why()))
        rx0 = count(pid)
        before = server_snapshot(ino)
        g0 = guest_cpu()
        sys0 = procstat.not_idle(g0)
        t0 = time.monotonic()
        req.say("go")
        if not req.wait("ran"):
            raise SessionError("%s: stream %s: host iperf3 did not finish "
                               "(%s)" % (self.v["label"], s["name"],
                                         req.why()))
        wall = time.monotonic() - t0
        drain = wait_quiet(pid, settle, 10.0)
        after = server_snapshot(ino)
        g1 = guest_cpu()
        sys1 = procstat.not_idle(g1)
        rx1 = count(pid)
        req.say("fin")
        req.wait("done")
        j = req.result()
        with open(raw_path, "w") as f:
            json.dump(j, f)
        try:
            # done-K holds host iperf3's exit status (hostload._iperf)
            m, d = iperf_result(req.status(), json.dumps(j), s)
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise SessionError("%s: stream %s: %s (report in %s)" % (
                self.v["label"], s["name"], e, raw_path))
        cpu_ticks, cpu_ns, per, vanished = cpu_delta(before, after)
        cpu = cpu_ns if cpu_ns is not None else cpu_ticks
        mb = (rx1[0] - rx0[0]) / 1e6
        m["cpu_per_mb"] = cpu * 1000.0 / mb if mb > 0 else None
        self._guest_metrics(m, d, g0, g1)
        busy = sys1[0] - sys0[0]
        total = sys1[1] - sys0[1]
        d.update(server_cpu_s=cpu, server_cpu_ticks_s=cpu_ticks,
                 server_cpu_ns_s=cpu_ns, server_cpu_by_comm=per,
                 server_vanished=vanished, wall_s=round(wall, 3),
                 drain_s=round(drain, 3), tunnel_bytes=rx1[0] - rx0[0],
                 tunnel_packets=rx1[1] - rx0[1], client="host",
                 vm_busy_pct=busy * 100.0 / total if total else None,
                 server_cpu_pct=cpu * 100.0 / wall if wall else None)
        self.check_alive()
        return m, d

    @staticmethod
    def _guest_metrics(m, d, g0, g1):
        """The whole guest's CPU over the stream's window per MB of payload
        (iperf3's received bytes, the same unit for a tunnel and `plain`):
        every context at once, softirq and kernel threads included, so
        the kernel data path's work is in it (the report subtracts the
        `plain` baseline of the same round: cpu_per_mb_added)."""
        g = guest_cpu_delta(g0, g1)
        m["guest_cpu_per_mb"] = per_mb(g["busy"], d.get("bytes"))
        d["guest_cpu_s"] = g
        d["guest_softirq_per_mb"] = per_mb(g["softirq"], d.get("bytes"))

    def load_stream(self, s, raw_path):
        """A `sessions N` stream: pptp-load on the host brings up N sessions
        over the tap link, each with the stream at its own rate to
        pptp-echo beside the server. CPU per MB is taken over a window
        with every session up and streaming (from all N ppp interfaces up,
        for 40 % of the stream's duration), so the setup of the sessions
        (pppd start, MS-CHAPv2, MPPE keys) is not in it, nor pptp-echo's
        own CPU (NOT_SERVER); loss, order, jitter and the round trip are
        pptp-load's, over the whole stream (timed on the host: see
        regress/README.md on host clients)."""
        if self.plain:
            # Sessions are tunnels: `plain` has nothing to measure here.
            return {}, {"skipped": "plain: no tunnel"}
        self.check_alive()
        ino = self.bed.srv_ino
        n = s["sessions"]
        echo = subprocess.Popen(
            ["ip", "netns", "exec", SRV_NS, self.bed.pptp_echo, "--port",
             str(hostload.ECHO_PORT), "--bind", TUN_LOCAL],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL)
        # The ramp as the server paces it (--max-setup), not as asked.
        ramp = n / min(hostload.SETUP_RATE, hostload.SETUP_CAPACITY)
        timeout = ramp * 3 + s["duration"] + 60
        args = streamlib.load_args(
            s, hostload.SERVER, hostload.src_range(n),
            "%s:%d" % (TUN_LOCAL, hostload.ECHO_PORT)) + [
            "--user", USER, "--password", SECRET,
            "--rate", str(hostload.SETUP_RATE),
            "--max-setup", str(hostload.MAX_SETUP),
            "--mppe", "128" if self.bed.mppe else "none",
            "--setup-timeout", str(int(ramp * 2 + 60)),
            "--deadline", str(int(timeout))]
        box = {}
        t = threading.Thread(target=lambda: box.update(
            r=hostload.request(self.bed.folder, args, timeout)))
        t0 = time.monotonic()
        t.start()
        pid = self.server.pid
        while t.is_alive() and ppp_count(pid) < n:
            time.sleep(0.2)
        a = None
        if t.is_alive():
            a = (time.monotonic(), server_snapshot(ino), ppp_rx(pid))
            t.join(s["duration"] * 0.4)
            b = (time.monotonic(), server_snapshot(ino), ppp_rx(pid))
        all_up = (a[0] - t0) if a else None
        t.join()
        echo.kill()
        echo.wait()
        status, rep = box.get("r", (None, None))
        with open(raw_path, "w") as f:
            json.dump({"status": status, "report": rep}, f)
        if rep is None or a is None:
            raise SessionError("%s: stream %s: pptp-load status %s, %s" % (
                self.v["label"], s["name"], status,
                "no report" if rep is None else
                "the %d sessions were never all up" % n))
        st = (rep.get("streams") or [{}])[0]
        sent, got = st.get("sent", 0), st.get("received", 0)
        # Echo: what came back, over every session, per second of stream.
        m = {"throughput": got * s["size"] * 8 / s["duration"] / 1e6,
             "loss": 100.0 * st.get("lost", 0) / sent if sent else None,
             "ooo": float(st.get("reordered", 0)),
             "jitter": st.get("jitter_ms"),
             "rtt": sessions_rtt(st)}
        cpu_ticks, cpu_ns, per, vanished = cpu_delta(a[1], b[1])
        cpu = cpu_ns if cpu_ns is not None else cpu_ticks
        mb = (b[2][0] - a[2][0]) / 1e6
        m["cpu_per_mb"] = cpu * 1000.0 / mb if mb > 0 else None
        d = {"sessions": n, "sessions_up": rep.get("up"),
             "failed_by_reason": rep.get("failed_by_reason"),
             "all_up_guest_s": round(all_up, 3),
             "all_up_host_s": rep.get("all_up_s"),
             "window_s": round(b[0] - a[0], 3), "server_cpu_s": cpu,
             "server_cpu_by_comm": per, "server_vanished": vanished,
             "tunnel_bytes": b[2][0] - a[2][0],
             "tunnel_packets": b[2][1] - a[2][1],
             "sent_packets": sent, "received_packets": got,
             "rtt": st.get("rtt"), "load_cpu_s": (rep.get("cpu_user_s") or 0)
             + (rep.get("cpu_system_s") or 0)}
        self.check_alive()
        return m, d

    def stop(self):
        """Hang up and stop everything of the session. How a session ends
        is not measured, and a graceful end costs seconds of guest time
        (LCP terminate, the servers' own shutdown), so: SIGKILL to every
        process in both namespaces; the kernel closes the ppp units."""
        b = self.bed
        for ino in (b.cli_ino, b.srv_ino):
            kill_netns(ino, signal.SIGKILL)
        for ino in (b.cli_ino, b.srv_ino):
            if not wait_gone(lambda: pids_in_netns(ino), 5):
                kill_netns(ino, signal.SIGKILL)
                if not wait_gone(lambda: pids_in_netns(ino), 5):
                    raise RuntimeError("processes left in a netns: %s" %
                                       pids_in_netns(ino))
        for p in (self.iperf, self.server):
            if p:
                try:
                    p.wait(2)
                except subprocess.TimeoutExpired:
                    pass
        for d in ("/run", "/var/run"):
            try:
                os.unlink("%s/ppp-%s.pid" % (d, LINKNAME))
            except OSError:
                pass
        # The kernel frees the ppp units once their last fd closes.
        end = time.monotonic() + 5
        while time.monotonic() < end and any(
                "ppp" in out for out in (
                    run(["ip", "-o", "link"], ns=ns, check=False).stdout
                    for ns in (SRV_NS, CLI_NS))):
            time.sleep(0.1)


# ----------------------------------------------------------------- main
class Run:
    def __init__(self, plan):
        self.plan = plan
        self.out = plan["results_dir"]
        self.raw = {"plan": plan, "env": env_info(), "sessions": [],
                    "records": [], "error": None}
        os.makedirs(os.path.join(self.out, "iperf"), exist_ok=True)

    def save(self):
        tmp = os.path.join(self.out, "raw.json.tmp")
        with open(tmp, "w") as f:
            json.dump(self.raw, f, indent=1)
        os.replace(tmp, os.path.join(self.out, "raw.json"))

    def session(self, bed, version, rnd, warmup=False):
        plan = self.plan
        tag = "%s-%s" % ("warmup" if warmup else "r%d" % rnd, version["key"])
        sess = Session(bed, version, tag)
        if not warmup:
            sess.profile = plan.get("profile") or []
        rec = {"round": rnd, "version": version["label"], "warmup": warmup,
               "start": time.time()}
        try:
            rec.update(self._dial(sess, plan["dial_timeout"]))
            m, d = sess.ping(plan["ping_count"] if not warmup else 3)
            if not warmup:
                self.raw["records"].append({
                    "round": rnd, "version": version["label"],
                    "stream": "ping", "kind": "ping", "metrics": m,
                    "detail": d})
            streams = streamlib.in_round(plan["streams"], rnd) \
                if not warmup else plan["warmup"]
            for i, s in enumerate(streams, 1):
                if not warmup:
                    self.done += 1
                    log("[%d/%d] round %d/%d  %-22s %-16s ..." % (
                        self.done, self.total, rnd, s.get("rounds", rnd),
                        version["label"], s["name"]))
                raw_path = os.path.join(self.out, "iperf", "%s-%s.json"
                                        % (tag, s["name"]))
                if warmup:
                    sess.stream(s, raw_path, plan["settle"])
                    continue
                # The host reads its own load between these marks
                # (hostbusy.py); outside the stream's CPU window.
                slot = hostbusy.Slot(self.out, self.done, {
                    "round": rnd, "version": version["label"],
                    "stream": s["name"], "n": self.done,
                    "total": self.total,
                    "host_client": streamlib.client_on_host(s)})
                try:
                    m, d = sess.stream(s, raw_path, plan["settle"])
                finally:
                    slot.end()
                self.raw["records"].append({
                    "round": rnd, "version": version["label"],
                    "stream": s["name"], "kind": s["kind"], "metrics": m,
                    "detail": d,
                    "iperf": os.path.relpath(raw_path, self.out)})
                log("        %s" % summary(m))
        except SessionError:
            self._dump_logs(sess)
            raise
        finally:
            t = time.monotonic()
            sess.stop()
            rec["teardown_s"] = round(time.monotonic() - t, 3)
            rec["end"] = time.time()
            self.raw["sessions"].append(rec)
            self.save()

    def _dial(self, sess, timeout):
        # One retry: a dial-in that fails once and then works is reported
        # (tries: 2) but does not end a long run.
        try:
            r = sess.start(timeout)
            r["tries"] = 1
            return r
        except SessionError as e:
            first = str(e)
            log("  dial failed (%s); retrying once" % first)
            self._dump_logs(sess)
            sess.stop()
            r = sess.start(timeout)
            r["tries"] = 2
            r["first_failure"] = first
            return r

    def _dump_logs(self, sess):
        w = sess.bed.work
        for name, path in (("server output", sess.log),
                           ("server pppd log", w + "/pppd-srv.log"),
                           ("client pppd log", w + "/pppd-cli.log"),
                           ("syslog", w + "/syslog.txt")):
            if os.path.exists(path):
                log("  --- %s (%s):\n%s" % (name, path, tail(path)))

    def main(self):
        plan = self.plan
        work = plan.get("work_dir") or "/tmp/regress-work"
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        catcher = None
        if os.environ.get("PPTPD_IN_VM"):
            catcher = SyslogCatcher("/dev/log", os.path.join(work,
                                                             "syslog.txt"))
        bed = Bed(work, plan["mppe"], plan.get("threaded_napi", True),
                  max([1] + [s.get("sessions", 1) for s in plan["streams"]]),
                  any(s.get("client") == "host" for s in plan["streams"]))
        bed.folder = self.out            # shared with the host (--rw)
        bed.pptp_echo = plan.get("pptp_echo")
        versions = plan["versions"]
        self.total = len(versions) * sum(
            len(streamlib.in_round(plan["streams"], r))
            for r in range(1, plan["rounds"] + 1))
        self.done = 0
        rc = 0
        try:
            bed.setup()
            t0 = time.monotonic()
            if plan["warmup"]:
                # Page the tools in over 9p and settle the caches: the first
                # session of a fresh VM is slower than the rest. The other
                # versions differ only by their server binary: read it.
                first = next((v for v in versions
                              if v.get("kind") != "plain"), versions[0])
                log("warm-up: %s" % first["label"])
                self.session(bed, first, 0, warmup=True)
                for v in versions:
                    if v is first or not v.get("server"):
                        continue
                    with open(v["server"][0], "rb") as f:
                        while f.read(1 << 20):
                            pass
            for rnd in range(1, plan["rounds"] + 1):
                for v in round_order(versions, rnd):
                    self.session(bed, v, rnd)
            self.raw["measure_s"] = round(time.monotonic() - t0, 1)
        except SessionError as e:
            rc = 2
            self.raw["error"] = str(e)
            log("regress: FAILED: %s" % e)
        except (RuntimeError, OSError, subprocess.SubprocessError) as e:
            rc = 3
            self.raw["error"] = "environment: %s" % e
            log("regress: FAILED: %s" % e)
        finally:
            try:
                bed.teardown()
            finally:
                if catcher:
                    catcher.close()
                self.save()
                # Keep the logs next to the results for a post-mortem.
                logs = os.path.join(self.out, "logs")
                os.makedirs(logs, exist_ok=True)
                for f in os.listdir(work):
                    if f.endswith(".log") or f == "syslog.txt":
                        shutil.copy(os.path.join(work, f), logs)
        return rc


def round_order(versions, rnd):
    """The order of the versions' sessions in round `rnd` (from 1): A B,
    then B A, then A B... Round i of every version runs side by side, to
    be compared pair by pair (stats.compare_paired); alternating who goes
    first keeps an effect of the slot (the session after another one) from
    looking like a difference between the versions."""
    return list(versions) if rnd % 2 else list(reversed(versions))


# The progress line after each stream: (metric, format, only on a stream
# with a `path`, whose own figures these are: its rtt and ack delay are
# there alone, and out of order is what a reordering path shows).
SUMMARY = (("throughput", "%.3f Mbit/s", False),
           ("loss", "loss %.2f %%", False),
           ("cpu_per_mb", "server CPU %.1f ms/MB", False),
           ("guest_cpu_per_mb", "VM CPU %.1f ms/MB", False),
           ("ooo", "out of order %d", True),
           ("rtt", "RTT %.1f ms", True),
           ("ack_delay", "ack delay %.1f ms", True))


def summary(m):
    on_path = "ack_delay" in m
    return ", ".join(fmt % m[key] for key, fmt, path_only in SUMMARY
                     if m.get(key) is not None and (on_path or not path_only))


def env_info():
    info = {"kernel": os.uname().release, "in_vm": bool(
        os.environ.get("PPTPD_IN_VM")), "clk_tck": CLK_TCK,
        "ncpu": os.cpu_count()}
    try:
        with open("/proc/cmdline") as f:
            info["cmdline"] = f.read().strip()
    except OSError:
        pass
    for tool in (["iperf3", "--version"], ["pppd", "--version"]):
        try:
            p = subprocess.run(tool, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=10)
            info[tool[0]] = p.stdout.splitlines()[0] if p.stdout else ""
        except (OSError, subprocess.SubprocessError):
            pass
    return info


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 3
    with open(argv[1]) as f:
        plan = json.load(f)
    if os.geteuid() != 0:
        print("measure: must run as root", file=sys.stderr)
        return 3
    if not os.environ.get("PPTPD_IN_VM") and \
            os.environ.get("REGRESS_MNTNS") != "1":
        # On a host: a private mount namespace for our /etc/ppp (and the
        # /sys remounts of `ip netns exec`); it ends with this process.
        os.environ["REGRESS_MNTNS"] = "1"
        argv = ["unshare", "--mount", "--propagation", "private", "--",
                sys.executable] + argv
        os.execvp(argv[0], argv)
    return Run(plan).main()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
