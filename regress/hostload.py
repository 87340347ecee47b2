"""Many-session streams (`sessions N` in a stream file): pptp-load on the
host drives them over the test VM's tap link (scripts/vm/run --tap), so the
client takes none of the VM's CPU.

Two halves talking through a folder both sides see (the results folder,
shared read-write with the VM):

- the VM (measure.py) calls request(): it writes load/req-K.json with the
  pptp-load arguments and waits for load/done-K;
- the host (regress/regress) runs a LoadServer thread beside the VM: it
  runs each request's pptp-load inside the host netns that owns the tap,
  with --json load/res-K.json, and writes done-K with its exit status.

Topology and addresses: scripts/vm/README.
"""
import ipaddress
import json
import os
import subprocess
import threading
import time

# The host netns of the tap link; REGRESS_TAP_NETNS lets two runs share
# a host (the devices in it, vmtap0 and rgtun0, are per netns).
NETNS = os.environ.get("REGRESS_TAP_NETNS") or "regress-tap"
SRC = "198.18.64.0/18"          # client sources, local to the host netns
SERVER = "198.18.200.2"         # the server's netns in the VM, on the tap
ECHO_PORT = 9000                # client/pptp-echo's default
SETUP_RATE = 5                  # sessions/s: the icount VM is slow
# At most this many sessions in setup at once (pptp-load --max-setup): the
# 1-vCPU icount VM sets up about one session per second (pppd, MS-CHAPv2,
# MPPE), so 50 started at SETUP_RATE all sat in setup together, their LCP
# timers (the host's clock) ran out, LCP was renegotiated and 7-9 of 50
# ended "MPPE disabled" (two runs of HEAD, 2026-12-02, quiet host).
MAX_SETUP = 4
SETUP_CAPACITY = 1              # sessions/s the VM sets up, for the timeouts
TUN = "rgtun0"                  # pptp-load --tun: iperf3 streams (client host)


def src_range(n):
    """The first n addresses of SRC, as pptp-load's --source A-B."""
    first = ipaddress.ip_network(SRC).network_address + 1
    return "%s-%s" % (first, first + n - 1)


# ------------------------------------------------------------------ VM side
def request(folder, args, timeout, iperf=None):
    """Ask the host for one pptp-load run (with `iperf`: one session in TUN
    mode and iperf3 with these arguments through it); returns (status, the
    JSON report of pptp-load or iperf3, or None). Runs in the VM."""
    d = os.path.join(folder, "load")
    os.makedirs(d, exist_ok=True)
    k = 0
    while os.path.exists(os.path.join(d, "req-%d.json" % k)):
        k += 1
    tmp = os.path.join(d, "req-%d.tmp" % k)
    with open(tmp, "w") as f:
        json.dump({"args": args, "timeout": timeout,
                   "kind": "iperf" if iperf else "load", "iperf": iperf}, f)
    os.rename(tmp, os.path.join(d, "req-%d.json" % k))
    done = os.path.join(d, "done-%d" % k)
    end = time.monotonic() + timeout + 60
    while time.monotonic() < end:
        if os.path.exists(done):
            with open(done) as f:
                status = int(f.read().strip() or "255")
            try:
                with open(os.path.join(d, "res-%d.json" % k)) as f:
                    return status, json.load(f)
            except (OSError, ValueError):
                return status, None
        time.sleep(0.2)
    return None, None


class Phased:
    """The VM's side of one `client host` stream: a request whose host
    half waits for our word between its phases (up, go, ran, fin, done).
    tunnel=False: no pptp-load session, iperf3 straight over the tap link
    (the `plain` baseline); the phases are the same."""

    def __init__(self, folder, args, iperf, timeout, tunnel=True):
        self.d = os.path.join(folder, "load")
        os.makedirs(self.d, exist_ok=True)
        k = 0
        while os.path.exists(os.path.join(self.d, "req-%d.json" % k)):
            k += 1
        self.k = k
        self.timeout = timeout
        tmp = os.path.join(self.d, "req-%d.tmp" % k)
        with open(tmp, "w") as f:
            json.dump({"args": args, "timeout": timeout, "kind": "iperf",
                       "iperf": iperf, "tunnel": tunnel}, f)
        os.rename(tmp, os.path.join(self.d, "req-%d.json" % k))

    def _path(self, phase):
        return os.path.join(self.d, "%s-%d" % (phase, self.k))

    def wait(self, phase):
        """True once the host reached `phase`; False when it gave up
        (done without it) or ran out of time."""
        end = time.monotonic() + self.timeout + 60
        while time.monotonic() < end:
            if os.path.exists(self._path(phase)):
                return True
            if phase != "done" and os.path.exists(self._path("done")):
                return False
            time.sleep(0.1)
        return False

    def say(self, phase):
        open(self._path(phase), "w").close()

    def why(self):
        try:
            with open(self._path("done")) as f:
                return "status %s" % f.read().strip()
        except OSError:
            return "no answer"

    def status(self):
        """The exit status the host wrote in done-K (for a `client host`
        stream: iperf3's), or None without one."""
        try:
            with open(self._path("done")) as f:
                return int(f.read().strip())
        except (OSError, ValueError):
            return None

    def result(self):
        try:
            with open(os.path.join(self.d, "res-%d.json" % self.k)) as f:
                return json.load(f)
        except (OSError, ValueError):
            return {"error": "host iperf3: no report (%s)" % self.why()}


# ---------------------------------------------------------------- host side
class LoadServer(threading.Thread):
    """Serves the VM's requests until stop(). Runs on the host."""

    def __init__(self, folder, pptp_load):
        super().__init__(daemon=True)
        self.dir = os.path.join(folder, "load")
        self.pptp_load = pptp_load
        self.halt = threading.Event()
        self.ready = False
        os.makedirs(self.dir, exist_ok=True)

    def _netns_ready(self):
        """scripts/vm/run makes the netns and its tap; add the client range
        (AnyIP: a local route, any address in it can be bound)."""
        if self.ready:
            return True
        if not os.path.exists("/run/netns/" + NETNS):
            return False
        subprocess.run(["ip", "-n", NETNS, "route", "replace", "local", SRC,
                        "dev", "lo"], check=True)
        subprocess.run(["ip", "netns", "exec", NETNS, "sysctl", "-q", "-w",
                        "net.ipv4.conf.all.rp_filter=0",
                        "net.ipv4.conf.default.rp_filter=0"], check=True)
        self.ready = True
        return True

    def run(self):
        served = set()
        while not self.halt.is_set():
            for name in sorted(os.listdir(self.dir)):
                if not (name.startswith("req-") and name.endswith(".json")) \
                        or name in served:
                    continue
                served.add(name)
                self._serve(name[4:-5])
            self.halt.wait(0.2)

    def _serve(self, k):
        with open(os.path.join(self.dir, "req-%s.json" % k)) as f:
            req = json.load(f)
        res = os.path.join(self.dir, "res-%s.json" % k)
        status = 255
        if req.get("kind") == "iperf" and self._netns_ready():
            status = self._iperf(k, req, res)
        elif self._netns_ready():
            argv = ["ip", "netns", "exec", NETNS, self.pptp_load] + \
                req["args"] + ["--json", res]
            with open(os.path.join(self.dir, "out-%s.txt" % k), "w") as out:
                try:
                    status = subprocess.run(
                        argv, stdout=out, stderr=subprocess.STDOUT,
                        stdin=subprocess.DEVNULL,
                        timeout=req["timeout"] + 30).returncode
                except subprocess.TimeoutExpired:
                    status = 124
        tmp = os.path.join(self.dir, "done-%s.tmp" % k)
        with open(tmp, "w") as f:
            f.write("%d\n" % status)
        os.rename(tmp, os.path.join(self.dir, "done-%s" % k))

    def _iperf(self, k, req, res):
        """One session in TUN mode, iperf3 through it from the host netns,
        the session closed afterwards; iperf3's JSON report is the result.
        With "tunnel": false, no session: iperf3 over the tap alone."""
        log = open(os.path.join(self.dir, "out-%s.txt" % k), "w")
        tunnel = req.get("tunnel", True)
        # `true` stands in for pptp-load: the same phases, no session.
        argv = ["true"]
        if tunnel:
            argv = ["ip", "netns", "exec", NETNS, self.pptp_load] + \
                req["args"] + ["--tun=" + TUN, "--sessions", "1"]
        load = subprocess.Popen(
            argv,
            stdout=log, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
            universal_newlines=True)
        up = not tunnel
        end = time.monotonic() + 120

        def phase(name):
            open(os.path.join(self.dir, "%s-%s" % (name, k)), "w").close()

        def wait_vm(name, secs):
            p = os.path.join(self.dir, "%s-%s" % (name, k))
            t = time.monotonic() + secs
            while time.monotonic() < t and not self.halt.is_set():
                if os.path.exists(p):
                    return True
                time.sleep(0.05)
            return False

        # pptp-load says "session 0 on TUN, address A" once the tunnel is up.
        while not up and time.monotonic() < end and load.poll() is None:
            line = load.stderr.readline()
            log.write(line)
            if "session 0 on %s" % TUN in line:
                up = True
                break
        status = 2
        if up:
            threading.Thread(target=lambda: [log.write(x) for x in
                                             load.stderr], daemon=True).start()
            phase("up")
            status = 3
        if up and wait_vm("go", 120):
            with open(res, "w") as out:
                try:
                    status = subprocess.run(
                        ["ip", "netns", "exec", NETNS, "iperf3"] +
                        req["iperf"], stdout=out, stderr=log,
                        stdin=subprocess.DEVNULL,
                        timeout=req["timeout"]).returncode
                except subprocess.TimeoutExpired:
                    status = 124
            phase("ran")
            # The VM takes its last snapshot while the session still
            # exists (its ppp interface's counters go with it).
            wait_vm("fin", 120)
        load.terminate()
        try:
            load.wait(30)
        except subprocess.TimeoutExpired:
            load.kill()
            load.wait()
        log.close()
        return status

    def stop(self):
        self.halt.set()
        self.join(5)
