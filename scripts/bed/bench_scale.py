#!/usr/bin/env python3
"""make bench-scale: N concurrent pptp-load sessions from the host against a
server in the VM (scripts/hostbed), ours and Poptop in the same run.

    scripts/bed/bench_scale.py [--quick] [--servers ours,poptop]
                               [--steps 1,100,1000] [--out DIR]

Per server one VM boot (2 GB, 2 vCPUs); in it, for each step N in turn:

1. pptp-load brings up N sessions (MS-CHAPv2, MPPE-128, Windows profile)
   from N source addresses at --rate sessions/s, with at most --max-setup
   of them in setup at once (the rate then follows what the server sets
   up), each with a UDP echo stream to the echo service behind the server.
   The offered load is the same at every step: --total-pps datagrams/s
   (default 200, 100 B) shared by the N sessions, so 2 packets/s each at
   N=100 and one every 5 s at N=1000. What changes with N is only how
   many sessions carry it: server CPU per packet then shows what each
   session costs the server, and it should stay flat in N. (A fixed rate
   per session does not fit the VM: under TCG the guest spends about
   1.5 ms of CPU per GRE packet, so 1000 sessions at 2 packets/s would
   need three CPUs of two, for either server.)
2. once the count of ppp interfaces on the server stops growing, a
   snapshot with memory (PSS of pptpd, pptpctrl and every pppd; meminfo),
   then a window of --window seconds between two CPU snapshots;
3. pptp-load is stopped (SIGTERM: it tears the sessions down and writes its
   JSON), and the server is left to reap every pppd before the next step.

Reported per server and step: sessions up/asked, time until all were up and
sessions/s (pptp-load's all_up_s), setup p50/p95/max, server memory per
session (PSS and RSS of the server's processes, and MemAvailable's drop,
each divided by the sessions up), server CPU per packet in the window
(CPU ns of pptpd + pptpctrl + pppd over the GRE packets the server's link
carried both ways) and the whole guest's busy share in it. Results:
DIR/<server>.json and DIR/table.txt. With --perf S the guest is profiled
for S seconds halfway up and after the window (<server>-bed/snap/*.perf.txt).

With --kill-worker (ours, privsep) each step then SIGKILLs the worker
with every session streaming: the monitor's new worker takes them over.
Reported: the ppp interfaces and pppd before and a window after, pptp-load's
dropped sessions and echo loss (the whole run's: without the kill it is
about 0), and the time from the kill until the server's ppp interfaces
receive again (the snapshots' pace is its resolution).

With --upgrade (ours, privsep) each step runs `pptpctl upgrade` instead,
reported the same way, with the version before and after. With
--upgrade-from VERSION (one step, 50 sessions unless --steps) the server
starts as VERSION's build and HEAD's is installed over it (a new file
renamed over each, as dpkg does) just before the upgrade: from the
previous release to HEAD, both built as make regress builds them.

`drive` is the half that runs under scripts/hostbed, on the host side.
"""
import argparse
import ipaddress
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(TOP, "regress"))
import procstat  # noqa: E402
HOSTBED = os.path.join(TOP, "scripts", "hostbed")
# ppp interface count unchanged this long: settled, when the client's
# progress line cannot say (a snapshot of 1000 processes under TCG takes
# seconds; setups come in bursts)
SETTLE_S = 60
REAP_S = 300        # longest wait for the server to reap a step's pppd
MIN_RATE = 0.5      # sessions/s: the slowest ramp waited for
POLLS_PER_S_AT = 200  # sessions at which the settle poll slows below 1/2 s


def profile(name, secs):
    """A guest profile (snap NAME perf:SECS); a failed one is reported, not
    fatal: the step's figures do not depend on it."""
    try:
        snap(name, kind="perf:%d" % secs)
    except (subprocess.CalledProcessError, OSError, ValueError) as e:
        print("  %s: no profile (%s)" % (name, e), flush=True)


def snap(name, mem=False, kind=None):
    argv = [os.environ["BED_SNAP"], name] + \
        ([kind] if kind else ["mem"] if mem else [])
    out = subprocess.run(argv, check=True, stdout=subprocess.PIPE,
                         universal_newlines=True).stdout.strip()
    with open(out) as f:
        s = json.load(f)
    s["host_t"] = time.monotonic()
    return s


def source_range(n):
    net = ipaddress.ip_network(os.environ["BED_SRC"])
    first = net.network_address + 1
    return "%s-%s" % (first, first + n - 1)


def pptp_load():
    p = os.environ.get("PPTP_LOAD") or os.path.join(TOP, "client",
                                                     "pptp-load")
    if not os.access(p, os.X_OK):
        sys.exit("bench-scale: %s not built (make all)" % p)
    return p


PROGRESS = re.compile(rb"up (\d+)/(\d+)\s+failed (\d+)\s+setting up (\d+)")


def client_settled(log, n):
    """pptp-load --progress's last line says all n sessions were started
    and none is still setting up (each is up or has failed)."""
    try:
        with open(log, "rb") as f:
            f.seek(max(0, os.path.getsize(log) - 4096))
            tail = f.read()
    except OSError:
        return False
    m = PROGRESS.findall(tail)
    if not m:
        return False
    up, started, failed, pending = (int(x) for x in m[-1])
    return started == n and pending == 0 and up + failed == n


def wait_settled(n, proc, tag, limit_s, perf=0, log=None):
    """Poll the server until its ppp interface count reaches n, or the
    client says every session is up or failed (its progress line in
    `log`), or the count stops growing for SETTLE_S while the client
    says nothing; returns the last snapshot. With `perf`, the guest is
    profiled that many seconds once half the sessions are up."""
    last, since = -1, time.monotonic()
    profiled = not perf
    end = time.monotonic() + limit_s
    i = 0
    while time.monotonic() < end:
        s = snap("%s-poll%d" % (tag, i))
        i += 1
        up = s["ppp_ifaces"]
        if not profiled and up >= n // 2:
            profile(tag + "-ramp", perf)
            profiled = True
        if up != last:
            last, since = up, time.monotonic()
        print("  %s: %d/%d ppp interfaces on the server" % (tag, up, n),
              flush=True)
        if up >= n or (log and client_settled(log, n)):
            return s
        if up > 0 and time.monotonic() - since >= SETTLE_S:
            return s
        if proc.poll() is not None:
            return s
        # a snapshot reads every server process's /proc files, seconds
        # of guest CPU at 1000 under TCG: poll less often at scale
        time.sleep(max(2.0, n / POLLS_PER_S_AT))
    return snap(tag + "-timeout")


def wait_reaped(tag):
    end = time.monotonic() + REAP_S
    while time.monotonic() < end:
        s = snap(tag + "-reap")
        if s["pppd"] == 0 and s["ppp_ifaces"] == 0:
            return True
        time.sleep(2)
    return False


def delta(a, b):
    pk = lambda s: s["link"].get("rx_packets", 0) + \
        s["link"].get("tx_packets", 0)
    busy = None
    if "guest_cpu" in a and "guest_cpu" in b:
        d = {k: b["guest_cpu"][k] - a["guest_cpu"][k]
             for k in procstat.STAT_FIELDS}
        used, tot = procstat.not_idle(d)
        if tot:
            busy = 100.0 * used / tot
    return {"seconds": b["host_t"] - a["host_t"], "guest_busy_pct": busy,
            "cpu_ns": b["cpu_ns"] - a["cpu_ns"],
            "packets": pk(b) - pk(a),
            "ppp_packets": (b["ppp"]["rx_packets"] + b["ppp"]["tx_packets"]) -
            (a["ppp"]["rx_packets"] + a["ppp"]["tx_packets"])}


# Kill mode's recovery: the echo streams reach pppd again once the server's
# ppp interfaces have received this many more packets than at the kill.
KILL_RECOVERED_PKTS = 20
KILL_WAIT_S = 60


def kill_step(tag, after_s, kind="kill-worker", stage=None):
    """--kill-worker: SIGKILL our worker with every session streaming
    (privsep: the monitor starts a new worker that takes them over);
    --upgrade: `pptpctl upgrade` instead (the monitor re-executes its
    binary, which takes them over; `stage` "STAGED:INSTALLED": another
    build's files installed first, --upgrade-from). The time until the
    streams reach pppd again (the snapshots' own pace is its resolution),
    and the sessions and processes `after_s` later."""
    before = snap(tag + "-k0")
    t0 = time.monotonic()
    k = snap(tag + "-" + kind, kind=kind + (":" + stage if stage else ""))
    base = k["ppp"]["rx_packets"]
    res = {"kind": kind, "killed_worker": k.get("killed_worker"),
           "upgrade": k.get("upgrade"),
           "ifaces_before": before["ppp_ifaces"],
           "pppd_before": before["pppd"], "recovered_s": None,
           "after_s": after_s}
    i = 0
    while time.monotonic() - t0 < KILL_WAIT_S:
        s = snap("%s-k%d" % (tag, i))
        i += 1
        if s["ppp"]["rx_packets"] >= base + KILL_RECOVERED_PKTS:
            res["recovered_s"] = time.monotonic() - t0
            break
    time.sleep(after_s)
    s = snap(tag + "-kafter")
    res.update({"ifaces_after": s["ppp_ifaces"], "pppd_after": s["pppd"],
                "workers_after": s["by_comm"].get("pptpd-worker",
                                                  {}).get("n", 0)})
    if kind == "upgrade":
        v = snap(tag + "-version", kind="version")
        res.update({"version_after": v.get("version"), "exe": v.get("exe")})
    print("  %s: %s (%s): %d/%d ppp interfaces after, recovered in %s s" %
          (tag, kind, res["killed_worker"] or res["upgrade"],
           res["ifaces_after"], res["ifaces_before"],
           fmt(res["recovered_s"])), flush=True)
    return res


def drive_step(a, n):
    tag = "s%d" % n
    pre = snap(tag + "-pre", mem=True)
    js = os.path.join(os.environ["BED_DIR"], "load-%d.json" % n)
    argv = [pptp_load(), "--server", os.environ["BED_SERVER"],
            "--source", source_range(n), "--sessions", str(n),
            "--rate", str(a.rate), "--max-setup", str(a.max_setup),
            "--user", os.environ["BED_USER"],
            "--password", os.environ["BED_PASSWORD"],
            "--profile", "windows", "--mppe", "128",
            "--stream", "%d,%gpps,%d,echo" % (a.size, a.total_pps / n, 36000),
            "--target", os.environ["BED_ECHO"],
            "--setup-timeout", str(a.setup_timeout),
            "--deadline", str(36000), "--json", js, "--progress"]
    print("step %d: %s" % (n, " ".join(argv)), flush=True)
    log = os.path.join(os.environ["BED_DIR"], "load-%d.log" % n)
    logf = open(log, "w")
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, stdout=logf, stderr=subprocess.STDOUT)
    # --max-setup lets the server set the pace: wait as long as a slow
    # server needs, one session per 2 s
    settled = wait_settled(n, proc, tag,
                           a.setup_timeout + n / min(a.rate, MIN_RATE) + 60,
                           a.perf, log)
    up_s = time.monotonic() - t0
    res = {"n": n, "settled_s": up_s, "ppp_ifaces": settled["ppp_ifaces"]}
    if proc.poll() is None and settled["ppp_ifaces"] > 0:
        memsnap = snap(tag + "-up", mem=True)
        w0 = snap(tag + "-w0")
        time.sleep(a.window)
        w1 = snap(tag + "-w1")
        if a.perf:
            profile(tag + "-steady", a.perf)
        res["window"] = delta(w0, w1)
        res["pre"], res["up"] = pre, memsnap
        if a.kill_worker:
            res["kill"] = kill_step(tag, a.window)
        if a.upgrade:
            res["upgrade"] = kill_step(tag, a.window, "upgrade",
                                       a.upgrade_stage)
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(120)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        res["load_killed"] = True
    res["load_status"] = proc.returncode
    try:
        with open(js) as f:
            res["load"] = json.load(f)
    except (OSError, ValueError) as e:
        res["load_error"] = str(e)
    res["reaped"] = wait_reaped(tag)
    return res


def drive(a):
    out = {"kind": os.environ.get("BED_KIND"), "steps": []}
    for n in a.steps:
        out["steps"].append(drive_step(a, n))
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


# ------------------------------------------------------------------ report
def per_session(step):
    up, pre = step.get("up"), step.get("pre")
    n = step.get("ppp_ifaces") or 0
    if not up or not pre or not n:
        return {}
    d = {"pss_kb": (up["pss_kb"] - pre["pss_kb"]) / n,
         "rss_kb": (up["rss_kb"] - pre["rss_kb"]) / n,
         "memavail_kb": (pre["meminfo"]["MemAvailable"] -
                         up["meminfo"]["MemAvailable"]) / n}
    return d


def load_summary(step):
    """Sessions up, setup percentiles, all_up_s and the echo streams' loss
    and RTT, from pptp-load's JSON report."""
    L = step.get("load") or {}
    st = (L.get("streams") or [{}])[0]
    lost = None
    if st.get("sent"):
        lost = 100.0 * st.get("lost", 0) / st["sent"]
    return {"up": L.get("up"), "failed": L.get("failed"),
            "setup": L.get("setup") or {}, "all_up_s": L.get("all_up_s"),
            "lost_pct": lost, "rtt_p50": (st.get("rtt") or {}).get("p50_ms"),
            "reasons": L.get("failed_by_reason") or {}}


def fmt(v, f="%.1f"):
    return "-" if v is None else f % v


def upgrade_note(K, builds):
    """What `pptpctl upgrade` did, for the report's note."""
    u = K["upgrade"] or {}
    what = "pptpctl upgrade (exit %s: %s)" % (u.get("rc"), u.get("out"))
    if builds:
        what += " from %s's build (%s) to HEAD's (%s)" % (
            builds["from"], builds["from_commit"][:12],
            builds["to_commit"][:12])
    return what + ", %s -> %s" % (u.get("version_before"),
                                  K.get("version_after"))


def report(results, path):
    rows = [("server", "N", "up", "all up s", "sess/s",
             "setup p50/p95/max ms", "PSS/sess KB", "RSS/sess KB",
             "MemAvail/sess KB", "CPU us/pkt", "pkts/s", "guest busy",
             "echo loss",
             "RTT p50 ms")]
    notes = []
    for kind, r in results.items():
        for st in r.get("steps", []):
            L = load_summary(st)
            up = L["up"] if L["up"] is not None else st.get("ppp_ifaces")
            all_up, setup = L["all_up_s"], L["setup"]
            ps = per_session(st)
            w = st.get("window") or {}
            cpp = w["cpu_ns"] / w["packets"] / 1000 if w.get("packets") \
                else None
            pps = w["packets"] / w["seconds"] if w.get("seconds") else None
            rows.append((kind, str(st["n"]), str(up), fmt(all_up),
                         fmt(up / all_up if up and all_up else None),
                         "%s/%s/%s" % (fmt(setup.get("p50_ms"), "%.0f"),
                                       fmt(setup.get("p95_ms"), "%.0f"),
                                       fmt(setup.get("max_ms"), "%.0f")),
                         fmt(ps.get("pss_kb"), "%.0f"),
                         fmt(ps.get("rss_kb"), "%.0f"),
                         fmt(ps.get("memavail_kb"), "%.0f"),
                         fmt(cpp, "%.1f"), fmt(pps, "%.0f"),
                         fmt(w.get("guest_busy_pct"), "%.0f%%"),
                         fmt(L["lost_pct"], "%.1f%%"),
                         fmt(L["rtt_p50"], "%.0f")))
            for K in (st.get("kill"), st.get("upgrade")):
                if not K:
                    continue
                what = ("kill -9 of the worker (pid %s)" %
                        K["killed_worker"]) if K["kind"] == "kill-worker" \
                    else upgrade_note(K, r.get("upgrade_builds"))
                dropped = (st.get("load") or {}).get("dropped")
                notes.append("%s N=%d: %s mid-stream: %s/%s sessions' ppp "
                             "interfaces and %s/%s pppd %g s later, %s "
                             "worker; pptp-load: %s sessions dropped, echo "
                             "loss %s over the whole run; streams reached "
                             "pppd again %s s after it" %
                             (kind, st["n"], what,
                              K["ifaces_after"], K["ifaces_before"],
                              K["pppd_after"], K["pppd_before"],
                              K["after_s"],
                              K["workers_after"], dropped,
                              fmt(L["lost_pct"], "%.2f%%"),
                              fmt(K["recovered_s"], "%.2f")))
            if L["reasons"]:
                notes.append("%s N=%d failed: %s" % (kind, st["n"],
                                                     L["reasons"]))
            if st.get("load_error"):
                notes.append("%s N=%d: no pptp-load report (%s)" %
                             (kind, st["n"], st["load_error"]))
        if r.get("error"):
            notes.append("%s: %s" % (kind, r["error"]))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    text = "\n".join("  ".join(c.rjust(widths[i]) if i else c.ljust(widths[i])
                               for i, c in enumerate(row)) for row in rows)
    text += "".join("\n" + n for n in notes)
    print(text)
    with open(path, "w") as f:
        f.write(text + "\n")


def upgrade_builds(version, out):
    """--upgrade-from: VERSION's and HEAD's builds (regress/build.py, as
    make regress builds them: pptpd and the plugin), laid out as a tree
    under OUT/installed (VERSION's, which the bed starts, with this
    tree's pptpctl) and OUT/next (HEAD's, which the guest installs over
    it just before `pptpctl upgrade`). The environment for scripts/hostbed
    and the stage "NEXT:INSTALLED"."""
    import build
    root = os.path.join(TOP, "regress", "build")
    old = build.build_one(TOP, root, version, version)
    new = build.build_one(TOP, root, "HEAD", "HEAD")
    inst, nxt = os.path.join(out, "installed"), os.path.join(out, "next")
    for top, v in ((inst, old), (nxt, new)):
        d = os.path.dirname(os.path.dirname(v["server"][0])) \
            if v["kind"] == "ours" else ""
        if not os.path.exists(os.path.join(d, "plugin", "pptpd-policy.so")):
            sys.exit("bench_scale: --upgrade-from %s: %s is no build of "
                     "ours with the plugin" % (version, v["label"]))
        for rel in ("pptpd/pptpd", "plugin/pptpd-policy.so"):
            os.makedirs(os.path.join(top, os.path.dirname(rel)),
                        exist_ok=True)
            shutil.copy2(os.path.join(d, rel), os.path.join(top, rel))
    os.makedirs(os.path.join(inst, "ctl"), exist_ok=True)
    shutil.copy2(os.path.join(TOP, "ctl", "pptpctl"),
                 os.path.join(inst, "ctl", "pptpctl"))
    print("upgrade from %s (%s) to HEAD (%s)" % (
        version, old["commit"][:12], new["commit"][:12]), flush=True)
    env = dict(os.environ, PPTPD=os.path.join(inst, "pptpd", "pptpd"),
               PPTPD_PLUGIN=os.path.join(inst, "plugin", "pptpd-policy.so"))
    builds = {"from": version, "from_commit": old["commit"],
              "to_commit": new["commit"]}
    return env, nxt + ":" + inst, builds


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true",
                   default=os.environ.get("QUICK") == "1")
    p.add_argument("--servers", default="ours,poptop")
    p.add_argument("--steps")
    p.add_argument("--rate", type=float, default=3.0)
    p.add_argument("--size", type=int, default=100)
    p.add_argument("--total-pps", type=float, default=200.0,
                   help="echo datagrams/s offered by all sessions together")
    p.add_argument("--max-setup", type=int, default=10,
                   help="sessions in setup at once (pptp-load --max-setup)")
    p.add_argument("--window", type=float, default=20.0)
    p.add_argument("--setup-timeout", type=float, default=120.0)
    p.add_argument("--perf", type=int, default=0, metavar="SECONDS",
                   help="profile the guest (perf) during the ramp and "
                   "after the window: <bed>/snap/*.perf.txt (the profile "
                   "itself loads the guest: not for the figures' run)")
    p.add_argument("--kill-worker", action="store_true",
                   help="after each step's window, kill -9 our worker "
                   "(privsep) with the sessions streaming; report how many "
                   "survive, the echo loss and the time to recover")
    p.add_argument("--upgrade", action="store_true",
                   help="after each step's window, `pptpctl upgrade` (ours, "
                   "privsep: the same binary executed again) with the "
                   "sessions streaming; reported as --kill-worker")
    p.add_argument("--upgrade-from", metavar="VERSION",
                   help="--upgrade from another version: the server "
                   "starts as VERSION's build and `pptpctl upgrade` goes "
                   "to HEAD's, both built as make regress builds them "
                   "(a release name, a git ref)")
    p.add_argument("--upgrade-stage", help=argparse.SUPPRESS)
    p.add_argument("--conf", action="append", default=[], metavar="LINE",
                   help="a pptpd.conf line for the server (repeatable; "
                   "scripts/hostbed --conf), e.g. 'datapath kernel'")
    p.add_argument("--out")
    p.add_argument("--report", metavar="DIR",
                   help="print the table of an earlier run")
    sub = p.add_subparsers(dest="cmd")
    d = sub.add_parser("drive")
    d.add_argument("json")
    a = p.parse_args()
    if a.steps is None:
        # From another version: one step, one upgrade (a second would go
        # from HEAD to HEAD).
        a.steps = "50" if a.upgrade_from else \
            "1,10,50" if a.quick else "1,100,1000"
    a.steps = [int(x) for x in a.steps.split(",")]
    if a.cmd == "drive":
        return drive(a)
    # absolute: the guest runs elsewhere, and --upgrade-from's paths go
    # to it
    out = os.path.abspath(a.report or a.out or os.path.join(
        TOP, "bench-scale", time.strftime("%Y%m%d-%H%M%S")))
    os.makedirs(out, exist_ok=True)
    results = {}
    rc = 0
    env, builds = dict(os.environ), None
    if a.upgrade_from and not a.report:
        a.upgrade, a.servers = True, "ours"
        env, a.upgrade_stage, builds = upgrade_builds(a.upgrade_from, out)
    for kind in a.servers.split(","):
        if a.report:
            break
        js = os.path.join(out, kind + ".json")
        argv = [HOSTBED, "--server", kind, "--sessions", str(max(a.steps))]
        for line in a.conf:
            argv += ["--conf", line]
        argv += [
            "--work", os.path.join(out, kind + "-bed"), "--",
            sys.executable, os.path.abspath(__file__),
            "--steps", ",".join(map(str, a.steps)), "--rate", str(a.rate),
            "--size", str(a.size), "--total-pps", str(a.total_pps),
            "--max-setup", str(a.max_setup),
            "--window", str(a.window),
            "--setup-timeout", str(a.setup_timeout),
            "--perf", str(a.perf)] + \
            (["--kill-worker"] if a.kill_worker else []) + \
            (["--upgrade"] if a.upgrade else []) + \
            (["--upgrade-stage", a.upgrade_stage] if a.upgrade_stage
             else []) + ["drive", js]
        print("== %s" % kind, flush=True)
        r = subprocess.run(argv, env=env)
        if r.returncode:
            rc = rc or r.returncode
    for kind in a.servers.split(","):
        js = os.path.join(out, kind + ".json")
        try:
            with open(js) as f:
                results[kind] = json.load(f)
            if builds and "upgrade_builds" not in results[kind]:
                results[kind]["upgrade_builds"] = builds
                with open(js, "w") as f:
                    json.dump(results[kind], f, indent=1)
        except (OSError, ValueError):
            results[kind] = {"error": "no results (see %s-bed/)" % kind}
    print()
    report(results, os.path.join(out, "table.txt"))
    print("results: %s" % out)
    return 0 if rc in (0, 1) else rc


if __name__ == "__main__":
    sys.exit(main())
