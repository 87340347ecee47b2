"""The host's load beside the test bed, per measured slot.

The streams whose client runs on the host (`client host`, `sessions N`:
hostload.py) are paced by the host's clock, not the guest's, so their
figures move with whatever else the host runs: in one full A-vs-A run the
host's other work fell on the twin's three slots of udp-sessions alone and
its loss read as a regression (regress/README.md, "The host's load").
The guest cannot see the host, so the two halves share the work through
the results folder's load/, as hostload.py's requests do:

- the VM (measure.py) marks each slot, one version's one stream in one
  round: Slot() writes load/slot-K.begin (which slot) before the stream
  and load/slot-K.end after it, and never waits for the host;
- the host (regress/regress) runs a SlotMeter thread beside the VM, which
  reads the host's CPU at each mark it sees; when the VM is done, merge()
  gives each record of raw.json its slot's `host_load`:

  wall_s         host seconds between the two marks, as the meter saw them
  busy_cores     the host's CPU busy over them (/proc/stat: all but idle
                 and iowait; steal counts, as a hypervisor's other guests
                 are load too), in cores (0 .. ncpu)
  bed_cores      the bed's own: regress/regress and every process under it
                 (the VM's qemu, the host-side pptp-load and iperf3), the
                 children they reaped included
  other_cores    busy_cores - bed_cores, at least 0: the load that is not
                 the bed's
  loadavg_begin, loadavg_end   the 1-minute load average (the bed's
                 runnable threads count in it too)
  ncpu           the host's CPUs

A record without `host_load` (a raw.json from before, or a slot the meter
missed) is unknown, never zero.
"""

import json
import os
import threading
import time

import procstat

# The folder in the results folder both sides see (hostload.py's).
LOAD_DIR = "load"
# How often the meter looks for new marks. A slot lasts seconds (a
# stream) to minutes (200 sessions set up), so a mark read this late moves
# the window by a small part of it.
POLL_S = 0.2
# The figures that say what a slot is, in a mark and in SlotMeter.slots.
WHAT = ("round", "version", "stream")
# /proc/PID/stat fields whose sum is a process's CPU with that of the
# children it reaped: a process of the bed that ends within a slot moves
# its time into its parent's and so is not lost (one orphaned and reaped
# by init is; the bed's clients do not daemonize).
TREE_FIELDS = (procstat.PID_UTIME, procstat.PID_STIME, procstat.PID_CUTIME,
               procstat.PID_CSTIME)


# ------------------------------------------------------------------ VM side
class Slot:
    """The VM's marks of one slot: begin at once, end() after the stream.
    `what` is a dict with WHAT and `host_client` (the meter says only
    those slots aloud) and `n`/`total` (the progress counter)."""

    def __init__(self, folder, k, what):
        d = os.path.join(folder, LOAD_DIR)
        os.makedirs(d, exist_ok=True)
        self.base = os.path.join(d, "slot-%d." % k)
        with open(self.base + "tmp", "w") as f:
            json.dump(what, f)
        os.rename(self.base + "tmp", self.base + "begin")

    def end(self):
        open(self.base + "end", "w").close()


# ---------------------------------------------------------------- host side
def tree_ticks(root, proc="/proc"):
    """CPU ticks (USER_HZ) of process `root` and of every process under it,
    each with the children it reaped (TREE_FIELDS); None when root is gone."""
    own, kids = {}, {}
    for name in os.listdir(proc):
        if not name.isdigit():
            continue
        st = procstat.pid_stat(int(name), proc)
        if st is None:
            continue
        try:
            own[int(name)] = sum(int(st[1][i]) for i in TREE_FIELDS)
            kids.setdefault(int(st[1][procstat.PID_PPID]), []).append(
                int(name))
        except (ValueError, IndexError):
            continue
    if root not in own:
        return None
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += own.get(pid, 0)
        todo += kids.get(pid, [])
    return total


def loadavg(proc="/proc"):
    """The 1-minute load average, or None."""
    try:
        with open(proc + "/loadavg") as f:
            return float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def sample(root, proc="/proc", clock=time.monotonic):
    """One reading of the host: its time, /proc/stat's cpu ticks, the ticks
    of the bed (tree_ticks of `root`) and the load average."""
    return {"t": clock(), "cpu": procstat.read_stat_cpu(proc + "/stat"),
            "bed": tree_ticks(root, proc), "loadavg": loadavg(proc)}


def host_load(a, b, clk_tck, ncpu):
    """A slot's `host_load` (module doc) from its two sample()s; None when
    they are no time apart (both marks seen by one look)."""
    wall = b["t"] - a["t"]
    if wall <= 0:
        return None

    def cores(ticks):
        return round(ticks / clk_tck / wall, 3)
    d = {k: b["cpu"][k] - a["cpu"][k] for k in procstat.STAT_FIELDS}
    busy = cores(procstat.not_idle(d)[0])
    bed = None if a["bed"] is None or b["bed"] is None else \
        cores(b["bed"] - a["bed"])
    return {"wall_s": round(wall, 3), "busy_cores": busy, "bed_cores": bed,
            "other_cores": None if bed is None else
            round(max(0.0, busy - bed), 3),
            "loadavg_begin": a["loadavg"], "loadavg_end": b["loadavg"],
            "ncpu": ncpu}


def describe(h):
    """One line of a host_load for the operator."""
    if not h or h.get("other_cores") is None:
        return "host load unknown"
    return ("%.2f cores busy besides the bed (host %.2f, bed %.2f, of %s; "
            "load average %s -> %s)" % (
                h["other_cores"], h["busy_cores"], h["bed_cores"], h["ncpu"],
                _avg(h.get("loadavg_begin")), _avg(h.get("loadavg_end"))))


def _avg(x):
    return "?" if x is None else "%.1f" % x


class SlotMeter(threading.Thread):
    """Reads the host at the VM's marks until stop(). Runs on the host;
    `root` is the bed's topmost process (regress/regress's own)."""

    def __init__(self, folder, root, log=None, proc="/proc",
                 clk_tck=None, ncpu=None, clock=time.monotonic):
        super().__init__(daemon=True)
        self.dir = os.path.join(folder, LOAD_DIR)
        os.makedirs(self.dir, exist_ok=True)
        self.root, self.log, self.proc, self.clock = root, log, proc, clock
        self.clk_tck = clk_tck or os.sysconf("SC_CLK_TCK")
        self.ncpu = ncpu or os.cpu_count()
        self.begun = {}      # K -> (what, sample)
        self.slots = {}      # K -> what + {"host_load": ...}
        self.halt = threading.Event()
        self.failed = False

    def run(self):
        while not self.halt.is_set():
            self.look()
            self.halt.wait(POLL_S)

    def look(self):
        """scan(), whose failure costs the figures, never the run: the
        host's load is a note beside the measurement, not part of it."""
        try:
            self.scan()
        except (OSError, ValueError, KeyError) as e:
            if self.log and not self.failed:
                self.log("host load: cannot read it (%s); a slot "
                         "without it is unknown" % e)
            self.failed = True

    def scan(self):
        """Take one reading for every mark that is new since the last look:
        begins open a slot, ends close it (a slot both of whose marks are
        new has no window: unknown)."""
        new = {"begin": [], "end": []}
        for name in os.listdir(self.dir):
            k, _, mark = name[len("slot-"):].partition(".")
            if not name.startswith("slot-") or not k.isdigit() or \
                    mark not in new or int(k) in self.slots or \
                    (mark == "begin" and int(k) in self.begun):
                continue
            new[mark].append(int(k))
        if not new["begin"] and not new["end"]:
            return
        now = sample(self.root, self.proc, self.clock)
        for k in new["begin"]:
            try:
                with open(os.path.join(self.dir, "slot-%d.begin" % k)) as f:
                    self.begun[k] = (json.load(f), now)
            except (OSError, ValueError):
                continue
        for k in sorted(new["end"]):
            what, then = self.begun.pop(k, (None, None))
            if what is None:
                continue
            h = host_load(then, now, self.clk_tck, self.ncpu) \
                if then is not now else None
            self.slots[k] = dict(what, host_load=h)
            if self.log and what.get("host_client"):
                self.log("host load [%s/%s] round %s %s %s: %s" % (
                    what.get("n", k), what.get("total", "?"),
                    what.get("round"), what.get("version"),
                    what.get("stream"), describe(h)))

    def stop(self):
        """Stop, after a last look; returns the slots (a list, by K), also
        kept in load/host-slots.json."""
        self.halt.set()
        if self.is_alive():
            self.join(5)
        self.look()
        out = [self.slots[k] for k in sorted(self.slots)]
        try:
            with open(os.path.join(self.dir, "host-slots.json"), "w") as f:
                json.dump(out, f, indent=1)
        except OSError:
            pass        # raw.json gets them all the same (merge)
        return out


def merge(raw, slots):
    """Give each record of raw.json the host_load of its slot (the same
    round, version and stream); returns how many got one."""
    by = {tuple(s.get(k) for k in WHAT): s["host_load"] for s in slots
          if s.get("host_load")}
    n = 0
    for r in raw.get("records", []):
        h = by.get(tuple(r.get(k) for k in WHAT))
        if h:
            r["host_load"] = h
            n += 1
    return n
