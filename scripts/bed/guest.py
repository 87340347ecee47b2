#!/usr/bin/env python3
"""The VM side of scripts/hostbed: runs inside `scripts/vm/run --tap`.

    guest.py WORKDIR

WORKDIR is a host directory shared read-write with the VM (--rw). It holds
bed.json, written by scripts/hostbed: which server, how many sessions, the
addresses. This script

1. moves the VM's link to the host (eth0, scripts/vm/run --tap) into netns
   srv, addresses it, routes the clients' source range to the host side and
   sets the sysctls that let 1000 clients in (no reverse-path filter, large
   neighbour tables, deep accept queues);
2. writes the pppd options, chap-secrets and pptpd.conf (a pool as large as
   the sessions asked for), starts the server (ours or Poptop) and the UDP
   echo service in netns srv;
3. writes WORKDIR/ready, then serves snapshot requests until WORKDIR/done
   appears: the host (scripts/bed/snap NAME) drops WORKDIR/req/NAME and gets
   WORKDIR/snap/NAME.json, the server side's CPU, memory and packet counters
   at that moment;
4. takes a last snapshot ("end"), stops everything and copies the logs to
   WORKDIR/logs/.

Nothing here needs the client: what the host runs against the server is the
host's business.
"""
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "regress"))
import procstat  # noqa: E402
import perfprobe  # noqa: E402
from perfprobe import PERF  # noqa: E402

SRV_NS = "srv"
# Processes that make up "the server": ours is pptpd (the monitor) and its
# pptpd-worker (privsep yes, the default; without it one pptpd) + one pppd
# per call; Poptop adds a pptpctrl per control connection.
SERVER_COMMS = ("pptpd", "pptpd-worker", "pptpctrl", "pppd")
NOFILE = 65536
POLL_S = 0.1


def run(argv, ns=None, check=True):
    if ns:
        argv = ["ip", "netns", "exec", ns] + argv
    return subprocess.run(argv, check=check, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True)


def sysctl(ns, **kv):
    args = ["sysctl", "-q"]
    for k, v in kv.items():
        args += ["-w", "%s=%s" % (k.replace("__", "."), v)]
    run(args, ns=ns)


def netns_inode(pid_or_name):
    if isinstance(pid_or_name, int):
        return os.stat("/proc/%d/ns/net" % pid_or_name).st_ino
    return os.stat("/run/netns/%s" % pid_or_name).st_ino


# ------------------------------------------------------------------ setup
def link_setup(cfg):
    """eth0 into netns srv; the clients' range behind the host's address."""
    dev = os.environ.get("PPTPD_VM_TAP_IF")
    addr = os.environ.get("PPTPD_VM_TAP_ADDR")
    host = os.environ.get("PPTPD_VM_TAP_HOST")
    if not (dev and addr and host):
        raise RuntimeError("no host link: run under scripts/vm/run --tap")
    run(["ip", "netns", "add", SRV_NS])
    run(["ip", "link", "set", "lo", "up"], ns=SRV_NS)
    run(["ip", "link", "set", dev, "netns", SRV_NS])
    run(["ip", "addr", "add", addr, "dev", dev], ns=SRV_NS)
    run(["ip", "link", "set", dev, "up"], ns=SRV_NS)
    run(["ip", "route", "add", cfg["src_range"], "via", host, "dev", dev],
        ns=SRV_NS)
    # One client address per session, all behind one router: the source
    # check must not look at them (strict rp_filter would pass them, as the
    # route back is eth0, but the tunnels' ppp peers are on other links),
    # and the tables must be large enough for a thousand peers if the
    # range is ever put on the link itself.
    # The neighbour table limits are the kernel's, not per netns (6.1).
    sysctl(None, net__ipv4__neigh__default__gc_thresh1=4096,
           net__ipv4__neigh__default__gc_thresh2=8192,
           net__ipv4__neigh__default__gc_thresh3=16384)
    for ns in (None, SRV_NS):
        sysctl(ns, net__ipv4__conf__all__rp_filter=0,
               net__ipv4__conf__default__rp_filter=0,
               net__core__somaxconn=4096,
               net__ipv4__tcp_max_syn_backlog=4096,
               net__ipv4__tcp_no_metrics_save=1)
    sysctl(SRV_NS, **{"net__ipv4__conf__%s__rp_filter" % dev: 0})
    # Receive in a NAPI kthread, so the guest's packet reception is charged
    # to no process (as regress/measure.py does for its veths).
    run(["sh", "-c", "echo 1 > /sys/class/net/%s/threaded" % dev],
        ns=SRV_NS, check=False)
    # Connection tracking would cap and slow 1000 GRE flows: the VM has no
    # nf_conntrack module loaded (scripts/vm/modules.txt); make sure.
    if os.path.exists("/proc/sys/net/netfilter/nf_conntrack_max"):
        raise RuntimeError("nf_conntrack is loaded in the VM")
    return dev


def pool(first_octet3, sessions):
    """remoteip for `sessions` calls, in the syntax both servers read: one
    last-octet range per /24 (Poptop varies one octet only)."""
    ranges, left, o3 = [], sessions, first_octet3
    while left > 0:
        n = min(left, 250)
        ranges.append("198.19.%d.1-%d" % (o3, n))
        left -= n
        o3 += 1
    return ",".join(ranges)


# pppd runs hook scripts per session: ip-up and ip-down where its options
# say (an absent path is skipped quietly), and /etc/ppp/ip-pre-up,
# ipv6-up and ipv6-down always (pppd 2.4.9 has no option for them;
# Debian's run run-parts; the Windows profile negotiates IPV6CP). Under TCG
# a script is a fork and exec of a shell and its helpers: in a profile of
# a 3-sessions/s ramp they took 44 % of the guest's CPU, more than pppd
# and the server together. They are the distribution's, not the server's,
# and the same for both servers, so the bed runs without them (the
# guest's overlay root takes the removal; the host's files stay).
NO_SCRIPT = "/etc/ppp/bench-no-script"
HOOKS = ("/etc/ppp/ip-pre-up", "/etc/ppp/ipv6-up", "/etc/ppp/ipv6-down")


def hide_hooks():
    """Only on the VM's overlay root: never a real system's files."""
    root = [l.split() for l in read("/proc/mounts").splitlines()
            if l.split()[1] == "/"]
    if not root or root[-1][2] != "overlay":
        raise RuntimeError("guest.py: / is no overlay: not in the test VM")
    for path in HOOKS:
        if os.path.exists(path):
            os.unlink(path)


def write_configs(cfg, w):
    enc = ["require-mppe-128"] if cfg.get("mppe", True) else ["nomppe"]
    opts = ["name pptpd", "refuse-pap", "refuse-chap", "refuse-mschap",
            "require-mschap-v2"] + enc + [
        "nodefaultroute", "nobsdcomp", "nodeflate", "novj", "novjccomp",
        "ip-up-script %s" % NO_SCRIPT, "ip-down-script %s" % NO_SCRIPT,
        "lcp-echo-interval 0", "nologfd"]
    if cfg.get("pppd_log"):
        opts += ["logfile %s/pppd.log" % w]
    with open(w + "/options.pptpd", "w") as f:
        f.write("\n".join(opts) + "\n")
    hide_hooks()
    # One user for every session: pppd and our plugin allow a name any
    # number of sessions; the host-side client logs in as it N times.
    os.makedirs("/etc/ppp", exist_ok=True)
    with open("/etc/ppp/chap-secrets", "w") as f:
        f.write('%s pptpd "%s" *\n' % (cfg["user"], cfg["password"]))
    os.chmod("/etc/ppp/chap-secrets", 0o600)
    n = cfg["sessions"]
    lines = ["option %s/options.pptpd" % w,
             "localip %s" % cfg["localip"],
             "remoteip %s" % pool(1, n),
             "connections %d" % (n + 16)]
    if cfg["server"] == "ours":
        lines += ["connections-per-client 0", "calls-per-client 0",
                  "call-setups %d" % min(65535, max(64, n))]
        if cfg.get("plugin"):
            lines.append("plugin %s" % cfg["plugin"])
    lines += cfg.get("conf", [])
    with open(w + "/pptpd.conf", "w") as f:
        f.write("\n".join(lines) + "\n")


def raise_nofile():
    resource.setrlimit(resource.RLIMIT_NOFILE, (NOFILE, NOFILE))


def tcp_listening(pid, port):
    """A listening socket on `port` in the netns of `pid` (its own
    /proc/PID/net/tcp: the server's netns, not ours)."""
    try:
        lines = read("/proc/%d/net/tcp" % pid).splitlines()[1:]
    except OSError:
        return False
    for line in lines:
        f = line.split()
        if f[3] == "0A" and int(f[1].split(":")[1], 16) == port:
            return True
    return False


def worker_user():
    """The user of our worker (`privsep yes`, the default:
    scripts/privsep-user)."""
    subprocess.run([os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "privsep-user")], check=True)


def start_server(cfg, w):
    # net.unix.max_dgram_qlen stays at the kernel's default (10): since
    # 0.4.1 each call's reports have a channel of their own (pptpd/facts.h),
    # and the bench is what shows that no report is lost at mass teardown.
    argv = ["ip", "netns", "exec", SRV_NS, cfg["pptpd"], "-f", "-c",
            w + "/pptpd.conf"]
    if cfg["server"] == "ours":
        argv += ["-p", w + "/pptpd.pid"]
        worker_user()
    lf = open(w + "/logs/server.log", "w")
    p = subprocess.Popen(argv, stdout=lf, stderr=subprocess.STDOUT,
                         stdin=subprocess.DEVNULL, preexec_fn=raise_nofile)
    return p


def wait_listening(p, port, secs=60):
    end = time.monotonic() + secs
    while time.monotonic() < end:
        if p.poll() is not None:
            raise RuntimeError("server exited at start (status %s)" %
                               p.returncode)
        if tcp_listening(p.pid, port):
            return
        time.sleep(0.2)
    raise RuntimeError("server not listening on %d after %d s" % (port, secs))


def start_echo(cfg, w):
    argv = ["ip", "netns", "exec", SRV_NS] + cfg["echo"]
    lf = open(w + "/logs/echo.log", "w")
    return subprocess.Popen(argv, stdout=lf, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, preexec_fn=raise_nofile)


# --------------------------------------------------------------- snapshot
def read(path):
    with open(path) as f:
        return f.read()


def proc_info(pid, mem):
    st = read("/proc/%d/stat" % pid)
    comm = st[st.index("(") + 1:st.rindex(")")]
    if comm not in SERVER_COMMS:
        return None
    f = st[st.rindex(")") + 2:].split()
    d = {"pid": pid, "comm": comm,
         "ticks": int(f[11]) + int(f[12]),
         "ns": int(read("/proc/%d/schedstat" % pid).split()[0]),
         "rss_kb": int(read("/proc/%d/statm" % pid).split()[1]) *
         (resource.getpagesize() // 1024)}
    if mem:
        for line in read("/proc/%d/smaps_rollup" % pid).splitlines():
            if line.startswith("Pss:"):
                d["pss_kb"] = int(line.split()[1])
    return d


def net_dev(pid):
    out = {}
    for line in read("/proc/%d/net/dev" % pid).splitlines()[2:]:
        name, rest = line.split(":", 1)
        v = [int(x) for x in rest.split()]
        out[name.strip()] = {"rx_bytes": v[0], "rx_packets": v[1],
                             "rx_drop": v[3], "tx_bytes": v[8],
                             "tx_packets": v[9], "tx_drop": v[11]}
    return out


def ip_counters(pid):
    """IP counters of the netns of `pid`: what reached the stack, what it
    delivered to a protocol (GRE, TCP), what the reverse-path filter and
    the address check dropped."""
    out = {}
    for path, keep in (("snmp", ("InReceives", "InDelivers", "InAddrErrors",
                                 "InDiscards", "InUnknownProtos")),
                       ("netstat", ("IPReversePathFilter",))):
        lines = read("/proc/%d/net/%s" % (pid, path)).splitlines()
        for head, vals in zip(lines[::2], lines[1::2]):
            if not head.startswith(("Ip:", "TcpExt:")):
                continue
            for k, v in zip(head.split()[1:], vals.split()[1:]):
                if k in keep:
                    out[k] = int(v)
    return out


def meminfo():
    out = {}
    for line in read("/proc/meminfo").splitlines():
        k, v = line.split(":", 1)
        out[k] = int(v.split()[0])
    return out


def sock_drops(pid):
    """Datagrams dropped at full receive queues of the raw (GRE) and UDP
    sockets in the netns of `pid`: the last column of /proc/net/raw|udp."""
    out = {}
    for kind in ("raw", "udp"):
        n = 0
        for line in read("/proc/%d/net/%s" % (pid, kind)).splitlines()[1:]:
            n += int(line.split()[-1])
        out[kind] = n
    return out


def top_threads(other):
    """CPU ns per command name of every process outside the server's netns
    (kworker/ksoftirqd included), the ten largest."""
    by = {}
    for pid, ns in other:
        try:
            comm = read("/proc/%d/comm" % pid).strip().split("/")[0]
        except OSError:
            continue
        by[comm] = by.get(comm, 0) + ns
    return dict(sorted(by.items(), key=lambda kv: -kv[1])[:10])


def snapshot(srv_ino, anchor_pid, dev, mem):
    procs, other = [], []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        pid = int(name)
        try:
            if os.stat("/proc/%d/ns/net" % pid).st_ino != srv_ino:
                other.append((pid, int(read("/proc/%d/schedstat" %
                                            pid).split()[0])))
                continue
            d = proc_info(pid, mem)
        except (OSError, ValueError, IndexError):
            continue
        if d:
            procs.append(d)
    others = top_threads(other)
    nd = net_dev(anchor_pid)
    ppp = [v for k, v in nd.items() if k.startswith("ppp")]
    tot = {}
    for p in procs:
        t = tot.setdefault(p["comm"], {"n": 0, "ns": 0, "ticks": 0,
                                       "rss_kb": 0, "pss_kb": 0})
        t["n"] += 1
        for k in ("ns", "ticks", "rss_kb", "pss_kb"):
            t[k] += p.get(k, 0)
    return {
        "t": time.monotonic(),
        "mem": mem,
        "cpu_ns": sum(p["ns"] for p in procs),
        "cpu_ticks": sum(p["ticks"] for p in procs),
        "rss_kb": sum(p["rss_kb"] for p in procs),
        "pss_kb": sum(p.get("pss_kb", 0) for p in procs) if mem else None,
        "by_comm": tot,
        "pppd": tot.get("pppd", {}).get("n", 0),
        "ppp_ifaces": len(ppp),
        "link": nd.get(dev, {}),
        "ip": ip_counters(anchor_pid),
        # the whole guest's, where time goes that no server process is
        # charged for (softirq, NAPI and kworker threads)
        "guest_cpu": procstat.read_stat_cpu(),
        "loadavg": read("/proc/loadavg").split()[:4],
        "sock_drops": sock_drops(anchor_pid),
        "others_ns": others,
        "ppp": {k: sum(v[k] for v in ppp) for k in
                ("rx_packets", "tx_packets", "rx_bytes", "tx_bytes")},
        "meminfo": {k: v for k, v in meminfo().items()
                    if k in ("MemTotal", "MemFree", "MemAvailable", "Slab",
                             "SUnreclaim", "KernelStack", "PageTables")},
    }


def kill_worker(srv_ino):
    """`snap NAME kill-worker`: SIGKILL our server's worker (privsep's
    pptpd-worker in the server's namespace) just before the snapshot; its
    pid, or None when there is none (Poptop, privsep no)."""
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        pid = int(name)
        try:
            if os.stat("/proc/%d/ns/net" % pid).st_ino != srv_ino or \
                    read("/proc/%d/comm" % pid).strip() != "pptpd-worker":
                continue
            os.kill(pid, signal.SIGKILL)
            return pid
        except (OSError, ValueError):
            continue
    return None


def write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f)
    os.rename(tmp, path)


def perf_profile(w, name, kind):
    """`snap NAME perf[:SECONDS]`: a whole-guest profile (software clock:
    TCG has no PMU) with call graphs, kept as WORKDIR/snap/NAME.perf.txt,
    so where the guest's CPU goes (kernel work in softirq and kworkers
    included, which no process snapshot shows) can be read off."""
    secs = int(kind.split(":")[1]) if ":" in kind else 10
    data = os.path.join(w, "snap", name + ".perf.data")
    txt = os.path.join(w, "snap", name + ".perf.txt")
    with open(txt + ".log", "w") as log:
        subprocess.run(perfprobe.record_argv(data, secs), stdout=log,
                       stderr=subprocess.STDOUT)
        for sort, comm, suffix in (("comm,dso", None, ".comm"),
                                   ("sym", None, ""),
                                   ("sym", "pptpd,pptpd-worker", ".pptpd"),
                                   ("sym", "pppd", ".pppd")):
            argv = [PERF, "report", "-i", data, "--stdio", "--no-children",
                    "-g", "none", "--percent-limit", "0.3", "--sort", sort]
            if comm:
                argv += ["--comms", comm]
            with open(txt.replace(".perf.txt", suffix + ".perf.txt"),
                      "w") as out:
                subprocess.run(argv, stdout=out, stderr=log)


def ctl_version(ctl):
    """The version `pptpctl status` reports, or None."""
    r = subprocess.run(["ip", "netns", "exec", SRV_NS, ctl, "status"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                       universal_newlines=True)
    for line in r.stdout.splitlines():
        if line.startswith("version:"):
            return line.split(":", 1)[1].strip()
    return None


def install(staged, installed):
    """Each file under the folder `staged` put at the same place under
    `installed`, as dpkg puts a package's files: a new file renamed over
    the old one (the running binary's /proc/PID/exe then reads
    "(deleted)"). The files' paths, relative."""
    done = []
    for d, _, files in os.walk(staged):
        for name in sorted(files):
            rel = os.path.relpath(os.path.join(d, name), staged)
            dst = os.path.join(installed, rel)
            shutil.copy2(os.path.join(staged, rel), dst + ".new")
            os.rename(dst + ".new", dst)
            done.append(rel)
    return sorted(done)


def upgrade(ctl, kind):
    """`snap NAME upgrade[:STAGED:INSTALLED]`: `pptpctl upgrade` in the
    server's namespace just before the snapshot (ours, privsep: the
    monitor re-executes its installed binary, which takes the sessions
    over); with STAGED, its files are installed into INSTALLED first
    (another build: bench_scale.py --upgrade-from). Its exit status and
    output, and the version running before."""
    res = {"version_before": ctl_version(ctl)}
    if ":" in kind:
        _, staged, installed = kind.split(":", 2)
        try:
            res["installed"] = install(staged, installed)
        except OSError as e:   # reported; the upgrade is still asked
            res["install_error"] = str(e)
    r = subprocess.run(["ip", "netns", "exec", SRV_NS, ctl, "upgrade"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
    res.update({"rc": r.returncode, "out": r.stdout.strip()})
    return res


def serve(w, srv_ino, anchor, dev, server, echo, ctl):
    """Answer snapshot requests until the host says done."""
    req, snap = w + "/req", w + "/snap"
    while not os.path.exists(w + "/done"):
        for name in sorted(os.listdir(req)):
            path = os.path.join(req, name)
            try:
                kind = read(path).strip()
            except OSError:
                continue
            if name.endswith(".tmp"):
                continue
            if kind.startswith("perf"):
                perf_profile(w, name, kind)
            killed = kill_worker(srv_ino) if kind == "kill-worker" else None
            upgraded = upgrade(ctl, kind) if kind.startswith("upgrade") \
                else None
            s = snapshot(srv_ino, anchor, dev, kind == "mem")
            if kind == "kill-worker":
                s["killed_worker"] = killed
            if upgraded is not None:
                s["upgrade"] = upgraded
            if kind == "version":
                s["version"] = ctl_version(ctl)
                try:
                    s["exe"] = os.readlink("/proc/%d/exe" % server.pid)
                except OSError as e:   # the server is gone
                    s["exe"] = "none: %s" % e
            s["name"] = name
            s["server_alive"] = server.poll() is None
            write_json(os.path.join(snap, name + ".json"), s)
            os.unlink(path)
        if server.poll() is not None and \
                not os.path.exists(w + "/server-exited"):
            with open(w + "/server-exited", "w") as f:
                f.write("%s\n" % server.returncode)
        time.sleep(POLL_S)


def stop(p, secs=5):
    if p is None or p.poll() is not None:
        return
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(secs)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def kill_netns(ino):
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat("/proc/%s/ns/net" % name).st_ino == ino:
                    os.kill(int(name), signal.SIGKILL)
            except OSError:
                pass


def main():
    w = sys.argv[1]
    cfg = json.loads(read(w + "/bed.json"))
    for d in ("req", "snap", "logs"):
        os.makedirs(os.path.join(w, d), exist_ok=True)
    server = echo = None
    try:
        dev = link_setup(cfg)
        srv_ino = netns_inode(SRV_NS)
        write_configs(cfg, w)
        t0 = time.monotonic()
        server = start_server(cfg, w)
        wait_listening(server, 1723)
        echo = start_echo(cfg, w) if cfg.get("echo") else None
        anchor = server.pid
        # `ip netns exec` execs the server: the same pid, already in srv.
        base = snapshot(srv_ino, anchor, dev, True)
        base["name"] = "base"
        base["server_start_s"] = time.monotonic() - t0
        write_json(w + "/snap/base.json", base)
        write_json(w + "/ready", {"server_pid": server.pid,
                                  "echo_pid": echo.pid if echo else None,
                                  "kernel": os.uname().release})
        ctl = os.path.join(os.path.dirname(os.path.dirname(
            os.path.abspath(cfg["pptpd"]))), "ctl", "pptpctl")
        serve(w, srv_ino, anchor, dev, server, echo, ctl)
        end = snapshot(srv_ino, anchor, dev, True) if server.poll() is None \
            else None
        if end:
            end["name"] = "end"
            write_json(w + "/snap/end.json", end)
        rc = 0
    except Exception as e:  # reported to the host, which shows it
        with open(w + "/guest-error", "w") as f:
            f.write("%s: %s\n" % (type(e).__name__, e))
        print("hostbed guest: %s" % e, file=sys.stderr)
        rc = 1
    finally:
        stop(echo)
        stop(server)
        if os.path.exists("/run/netns/" + SRV_NS):
            kill_netns(netns_inode(SRV_NS))
        for f in ("/var/log/syslog",):
            if os.path.exists(f):
                shutil.copy(f, w + "/logs/")
    return rc


if __name__ == "__main__":
    sys.exit(main())
