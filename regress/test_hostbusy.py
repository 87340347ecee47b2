"""Tests of the host's load beside the bed (hostbusy.py) and of what the
verdict makes of it: the sampling against a fake /proc, the VM's marks and
the host's meter, the merge into raw.json, and the report, where a stream
whose client runs on the host is not voted when the two versions' slots
saw unequal host load (stats.HOST_UNEQUAL_CORES).

    python3 regress/test_hostbusy.py   (ends with "N passed, N failed")
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import testmain  # noqa: E402

import hostbusy  # noqa: E402
import measure  # noqa: E402
import report  # noqa: E402
import stats  # noqa: E402
import streams  # noqa: E402

REGRESS = os.path.join(HERE, "regress")
# The fake host's USER_HZ and CPUs.
HZ, NCPU = 100, 2


class FakeProc:
    """A /proc with what hostbusy reads: stat's cpu line, loadavg, and per
    process stat with ppid, utime, stime, cutime and cstime."""

    def __init__(self, root):
        self.root = root

    def cpu(self, busy, idle, loadavg=1.0):
        """The host's cpu line: `busy` ticks of user time (with some
        steal, which counts as busy), `idle` idle and 10 iowait."""
        with open(os.path.join(self.root, "stat"), "w") as f:
            f.write("cpu  %d 0 0 %d 10 0 0 5 0 0\ncpu0 1 2 3 4\n"
                    % (busy - 5, idle))
        with open(os.path.join(self.root, "loadavg"), "w") as f:
            f.write("%.2f 0.50 0.40 2/300 4242\n" % loadavg)

    def proc(self, pid, ppid, utime, stime=0, cutime=0, cstime=0,
             comm="x"):
        d = os.path.join(self.root, str(pid))
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "stat"), "w") as f:
            # pid (comm) state ppid pgrp session tty tpgid flags minflt
            # cminflt majflt cmajflt utime stime cutime cstime ...
            f.write("%d (%s) S %d 1 1 0 -1 0 0 0 0 0 %d %d %d %d 20 0 1 0\n"
                    % (pid, comm, ppid, utime, stime, cutime, cstime))

    def gone(self, pid):
        os.unlink(os.path.join(self.root, str(pid), "stat"))
        os.rmdir(os.path.join(self.root, str(pid)))


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


def _bed(fp, qemu=0, load=0, reaped=0, other=0):
    """The fake host: regress (100) with the VM's qemu (101, a thread
    named with a parenthesis) and pptp-load (102) under it, a process of
    someone else's (200) beside."""
    fp.proc(1, 0, 0, comm="init")
    fp.proc(100, 1, 50, cutime=reaped, comm="regress")
    fp.proc(101, 100, 400 + qemu, 20, comm="qemu (x86)")
    if load is not None:
        fp.proc(102, 100, 10 + load, comm="pptp-load")
    fp.proc(200, 1, 1000 + other, comm="other-vm")


class Sampling(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.fp = FakeProc(self.tmp.name)
        self.clock = Clock()

    def tearDown(self):
        self.tmp.cleanup()

    def _sample(self):
        return hostbusy.sample(100, proc=self.tmp.name, clock=self.clock)

    def test_tree_is_the_root_and_everything_under_it(self):
        _bed(self.fp)
        # 50 + (400 + 20) + 10; not init's, not the other VM's
        self.assertEqual(hostbusy.tree_ticks(100, self.tmp.name), 480)
        self.assertEqual(hostbusy.tree_ticks(101, self.tmp.name), 420)
        self.assertIsNone(hostbusy.tree_ticks(999, self.tmp.name))

    def test_other_load_is_busy_minus_the_bed(self):
        _bed(self.fp)
        self.fp.cpu(busy=10000, idle=5000, loadavg=1.5)
        a = self._sample()
        # 10 s later: the host busy 1.8 cores (1800 ticks), the bed 1.1
        # (qemu 1000 ticks, pptp-load 100), another VM the rest
        self.clock.t += 10
        _bed(self.fp, qemu=1000, load=100, other=700)
        self.fp.cpu(busy=11800, idle=5200, loadavg=2.25)
        b = self._sample()
        h = hostbusy.host_load(a, b, HZ, NCPU)
        self.assertEqual(h, {"wall_s": 10.0, "busy_cores": 1.8,
                             "bed_cores": 1.1, "other_cores": 0.7,
                             "loadavg_begin": 1.5, "loadavg_end": 2.25,
                             "ncpu": NCPU})
        self.assertIn("0.70 cores busy besides the bed (host 1.80, bed "
                      "1.10, of 2; load average 1.5 -> 2.2)",
                      hostbusy.describe(h))

    def test_a_client_that_ended_is_still_the_beds(self):
        # pptp-load used 300 ticks, ended and was reaped by regress: its
        # time is in regress's cutime now, not lost to "other"
        _bed(self.fp)
        self.fp.cpu(busy=10000, idle=5000)
        a = self._sample()
        self.clock.t += 10
        self.fp.gone(102)
        _bed(self.fp, qemu=1000, load=None, reaped=10 + 300)
        self.fp.cpu(busy=11300, idle=5700)
        h = hostbusy.host_load(a, self._sample(), HZ, NCPU)
        self.assertEqual((h["bed_cores"], h["other_cores"]), (1.3, 0.0))

    def test_never_below_zero_and_unknown_without_the_bed(self):
        _bed(self.fp)
        self.fp.cpu(busy=10000, idle=5000)
        a = self._sample()
        self.clock.t += 10
        # ticks sampled a little apart: the bed "used" more than the host
        _bed(self.fp, qemu=1010)
        self.fp.cpu(busy=11000, idle=5000)
        b = self._sample()
        self.assertEqual(hostbusy.host_load(a, b, HZ, NCPU)["other_cores"],
                         0.0)
        b["bed"] = None
        h = hostbusy.host_load(a, b, HZ, NCPU)
        self.assertIsNone(h["other_cores"])
        self.assertEqual(hostbusy.describe(h), "host load unknown")
        self.assertIsNone(hostbusy.host_load(a, a, HZ, NCPU))

    def test_the_live_host(self):
        a = hostbusy.sample(os.getpid())
        b = hostbusy.sample(os.getpid())
        self.assertIsNotNone(a["bed"])
        h = hostbusy.host_load(a, b, os.sysconf("SC_CLK_TCK"),
                               os.cpu_count())
        if h:
            self.assertGreaterEqual(h["busy_cores"], 0.0)


class Meter(unittest.TestCase):
    """The VM's marks and the host's meter, on a fake /proc."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.folder = os.path.join(self.tmp.name, "results")
        proc = os.path.join(self.tmp.name, "proc")
        os.makedirs(proc)
        self.fp = FakeProc(proc)
        _bed(self.fp)
        self.fp.cpu(busy=10000, idle=5000)
        self.clock = Clock()
        self.said = []
        self.meter = hostbusy.SlotMeter(self.folder, 100,
                                        log=self.said.append, proc=proc,
                                        clk_tck=HZ, ncpu=NCPU,
                                        clock=self.clock)

    def tearDown(self):
        self.tmp.cleanup()

    def _what(self, k, stream="udp-sessions", host=True):
        return {"round": 1, "version": "B", "stream": stream, "n": k,
                "total": 4, "host_client": host}

    def test_a_slot_between_its_marks(self):
        slot = hostbusy.Slot(self.folder, 3, self._what(3))
        self.meter.scan()
        self.clock.t += 20
        _bed(self.fp, qemu=2000, other=1000)
        self.fp.cpu(busy=13000, idle=6000)
        slot.end()
        self.meter.scan()
        self.meter.scan()          # nothing new: nothing changes
        got = self.meter.stop()
        self.assertEqual(len(got), 1)
        self.assertEqual(got[0]["stream"], "udp-sessions")
        self.assertEqual(got[0]["host_load"]["other_cores"], 0.5)
        self.assertEqual(got[0]["host_load"]["bed_cores"], 1.0)
        self.assertEqual(self.said, [
            "host load [3/4] round 1 B udp-sessions: 0.50 cores busy "
            "besides the bed (host 1.50, bed 1.00, of 2; load average "
            "1.0 -> 1.0)"])
        with open(os.path.join(self.folder, "load",
                               "host-slots.json")) as f:
            self.assertEqual(json.load(f), got)

    def test_vm_client_slots_are_recorded_not_said(self):
        slot = hostbusy.Slot(self.folder, 1, self._what(1, "udp-high.up",
                                                        host=False))
        self.meter.scan()
        self.clock.t += 5
        slot.end()
        got = self.meter.stop()
        self.assertEqual(got[0]["host_load"]["wall_s"], 5.0)
        self.assertEqual(self.said, [])

    def test_both_marks_in_one_look_are_unknown(self):
        hostbusy.Slot(self.folder, 1, self._what(1)).end()
        got = self.meter.stop()
        self.assertIsNone(got[0]["host_load"])
        self.assertEqual(self.said, ["host load [1/4] round 1 B "
                                     "udp-sessions: host load unknown"])

    def test_a_host_it_cannot_read_costs_the_figures_not_the_run(self):
        os.unlink(os.path.join(self.fp.root, "stat"))
        hostbusy.Slot(self.folder, 1, self._what(1))
        self.meter.look()
        self.meter.look()
        self.assertEqual(self.meter.stop(), [])
        self.assertEqual(len(self.said), 1)
        self.assertIn("host load: cannot read it", self.said[0])

    def test_the_thread_stops(self):
        self.meter.start()
        self.assertEqual(self.meter.stop(), [])
        self.assertFalse(self.meter.is_alive())

    def test_merge_into_raw(self):
        raw = {"records": [{"round": 1, "version": "B", "stream": s}
                           for s in ("udp-sessions", "ping", "other")]}
        slots = [dict(self._what(1), host_load={"other_cores": 0.3}),
                 dict(self._what(2, "other"), host_load=None)]
        self.assertEqual(hostbusy.merge(raw, slots), 1)
        self.assertEqual(raw["records"][0]["host_load"],
                         {"other_cores": 0.3})
        self.assertNotIn("host_load", raw["records"][1])
        self.assertNotIn("host_load", raw["records"][2])


class Marks(unittest.TestCase):
    """measure.py marks every measured stream (not the warm-up), the end
    mark also when the stream fails."""

    def test_a_session_marks_its_streams(self):
        class FakeSession:
            fail = None

            def __init__(self, bed, version, tag):
                self.bed = bed
                self.log = os.path.join(bed.work, "none.log")

            def start(self, timeout):
                return {"up_s": 1.0}

            def ping(self, count):
                return {"rtt": 1.0}, {}

            def stream(self, s, raw_path, settle):
                if s["name"] == FakeSession.fail:
                    raise measure.SessionError("stream failed")
                return {"throughput": 1.0}, {}

            def stop(self):
                pass

        with tempfile.TemporaryDirectory() as d:
            plan = {"results_dir": d, "dial_timeout": 5, "ping_count": 1,
                    "settle": 0, "warmup": [{"name": "warm-up"}],
                    "streams": [{"name": "a", "kind": "udp"},
                                {"name": "b", "kind": "udp",
                                 "sessions": 200}]}
            run = measure.Run(plan)
            run.done, run.total = 0, 4

            class Bed:
                work = d
            saved, measure.Session = measure.Session, FakeSession
            said, measure.log = measure.log, lambda *_: None
            try:
                run.session(Bed, {"label": "A", "key": "a"}, 0, warmup=True)
                run.session(Bed, {"label": "A", "key": "a"}, 1)
                FakeSession.fail = "b"
                with self.assertRaises(measure.SessionError):
                    run.session(Bed, {"label": "B", "key": "b"}, 1)
            finally:
                measure.Session, measure.log = saved, said
            load = os.path.join(d, "load")
            self.assertEqual(sorted(os.listdir(load)), [
                "slot-%d.%s" % (k, m) for k in (1, 2, 3, 4)
                for m in ("begin", "end")])
            with open(os.path.join(load, "slot-2.begin")) as f:
                self.assertEqual(json.load(f), {
                    "round": 1, "version": "A", "stream": "b", "n": 2,
                    "total": 4, "host_client": True})
            with open(os.path.join(load, "slot-1.begin")) as f:
                self.assertFalse(json.load(f)["host_client"])

    def test_client_on_host(self):
        self.assertTrue(streams.client_on_host({"client": "host"}))
        self.assertTrue(streams.client_on_host({"sessions": 200}))
        self.assertFalse(streams.client_on_host({"client": "vm",
                                                 "sessions": 1}))


# -------------------------------------------------------------- verdicts
HOST_STREAM = {"name": "udp-sessions", "kind": "udp", "size": 200,
               "rate_bps": 8000.0, "duration": 30, "direction": "echo",
               "sessions": 200, "client": "vm", "noise": {}}
TUN_HOST = {"name": "tcp-host.up", "kind": "tcp", "size": None,
            "rate_bps": 1e6, "duration": 6, "direction": "up",
            "client": "host", "sessions": 1, "noise": {}}
VM_STREAM = {"name": "udp-high.up", "kind": "udp", "size": 1200,
             "rate_bps": 6e6, "duration": 3, "direction": "up",
             "client": "vm", "sessions": 1, "noise": {}}


def _raw(stream, loss_b, load_a=None, load_b=None, also_vm=True):
    """Three rounds of A and B: `stream` with B's loss `loss_b` % in each
    round (A's: 0.05; 0.05 -> 1.3, as in full-set run 9, is a regression
    by the rule); every other figure alike; and, with also_vm, a VM
    stream where nothing changed. load_a / load_b: the host's load besides
    the bed per round of `stream` (None: no host_load at all, as raw.json
    was before)."""
    recs = []
    for rnd in (1, 2, 3):
        for lab, loss in (("A", 0.05), ("B", loss_b)):
            for s in [stream] + ([VM_STREAM] if also_vm and
                                 stream is not VM_STREAM else []):
                m = {"throughput": 1.0 + rnd * 0.001,
                     "cpu_per_mb": 100.0 + rnd}
                if s["kind"] == "udp":
                    m.update(loss=loss + rnd * 0.01 if s is stream
                             else 0.05, ooo=0.0, jitter=0.1)
                else:
                    m.update(retrans=(loss + rnd * 0.01) * 10)
                r = {"round": rnd, "version": lab, "stream": s["name"],
                     "kind": s["kind"], "metrics": m, "detail": {}}
                load = load_a if lab == "A" else load_b
                if load is not None:
                    r["host_load"] = {"other_cores": load[rnd - 1],
                                      "busy_cores": load[rnd - 1] + 1.0,
                                      "bed_cores": 1.0, "ncpu": 2,
                                      "wall_s": 150.0}
                recs.append(r)
    plan = {"versions": [{"label": "A"}, {"label": "B"}], "rounds": 3,
            "streams": [stream] + ([VM_STREAM] if also_vm and
                                   stream is not VM_STREAM else [])}
    return {"plan": plan, "records": recs}


QUIET = [0.2, 0.1, 0.3]
# Run 9's shape: other VM suites on the twin's three slots only.
BUSY = [1.3, 1.4, 1.1]


class Verdict(unittest.TestCase):
    def _report(self, raw):
        """(exit status of report(), its text, rows)."""
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "raw.json"), "w") as f:
                json.dump(raw, f)
            import io
            out = io.StringIO()
            res = report.report(d, 5.0, log=lambda *_: None, out=out)
            with open(os.path.join(d, "summary.csv")) as f:
                summary = f.read()
        return res.status, out.getvalue(), res.rows, summary

    def _cell(self, rows, stream, metric, lab="B"):
        return next(r["cmp"][lab] for r in rows
                    if r["stream"]["name"] == stream and
                    r["metric"].key == metric)

    def test_unequal_host_load_is_not_voted(self):
        rc, text, rows, summary = self._report(
            _raw(HOST_STREAM, 1.3, QUIET, BUSY))
        self.assertNotEqual(rc, 1, text)
        self.assertEqual(rc, 0, text)
        self.assertNotIn("REGRESSION", text)
        for key in ("loss", "throughput", "cpu_per_mb", "jitter"):
            self.assertEqual(self._cell(rows, "udp-sessions", key)["verdict"],
                             stats.HOST_BUSY, key)
        self.assertIn("B host busy unequal (reported, not voted; the host's "
                      "load besides the bed per round, A / B, in cores, more "
                      "than 0.5 core apart in a round): udp-sessions "
                      "0.20/1.30 0.10/1.40 0.30/1.10", text)
        # the per-version figure, and the verdict in summary.csv
        self.assertIn("  A 0.20 (0.10-0.30) over 6 slot(s); on host-client "
                      "streams 0.20 (0.10-0.30)", text)
        self.assertIn("  B 1.30 (1.10-1.40) over 6 slot(s)", text)
        self.assertIn("udp-sessions,udp,echo,loss,%,lower,B,3,", summary)
        self.assertIn(",host busy unequal,", summary)
        # the VM stream beside it is voted as ever
        self.assertEqual(self._cell(rows, "udp-high.up", "loss")["verdict"],
                         stats.SAME)

    def test_the_same_data_with_equal_load_is_a_regression(self):
        rc, text, rows, _ = self._report(_raw(HOST_STREAM, 1.3, QUIET,
                                              [0.4, 0.2, 0.6]))
        self.assertEqual(rc, 1, text)
        self.assertIn("B REGRESSION: udp-sessions loss", text)
        self.assertNotIn(stats.HOST_BUSY, text)

    def test_one_unequal_round_is_enough(self):
        rc, text, _, _ = self._report(_raw(HOST_STREAM, 1.3, QUIET,
                                           [0.2, 0.1, 0.9]))
        self.assertEqual(rc, 0, text)
        self.assertIn("udp-sessions 0.20/0.20 0.10/0.10 0.30/0.90", text)

    def test_the_bound_is_strict(self):
        # 0.5 core apart exactly is alike; the test's figures are exact
        # in binary (0.25 / 0.75)
        rc, text, _, _ = self._report(_raw(HOST_STREAM, 1.3,
                                           [0.25] * 3, [0.75] * 3))
        self.assertEqual(rc, 1, text)
        self.assertEqual(stats.HOST_UNEQUAL_CORES, 0.5)

    def test_a_client_host_stream_too(self):
        rc, text, rows, _ = self._report(_raw(TUN_HOST, 3.0, QUIET, BUSY))
        self.assertEqual(rc, 0, text)
        self.assertEqual(self._cell(rows, "tcp-host.up", "retrans")
                         ["verdict"], stats.HOST_BUSY)
        rc, text, _, _ = self._report(_raw(TUN_HOST, 3.0, QUIET, QUIET))
        self.assertEqual(rc, 1, text)
        self.assertIn("B REGRESSION: tcp-host.up TCP retransmits", text)

    def test_a_vm_client_stream_is_voted_whatever_the_host(self):
        rc, text, rows, _ = self._report(_raw(VM_STREAM, 1.3, QUIET, BUSY))
        self.assertEqual(rc, 1, text)
        self.assertIn("B REGRESSION: udp-high.up loss", text)
        self.assertNotIn("B host busy unequal", text)
        # its host load is still shown per version
        self.assertIn("  B 1.30 (1.10-1.40) over 3 slot(s)\n", text)

    def test_an_old_raw_json_reports_as_before(self):
        raw = _raw(HOST_STREAM, 1.3)
        self.assertFalse(any("host_load" in r for r in raw["records"]))
        rc, text, rows, summary = self._report(raw)
        self.assertEqual(rc, 1, text)
        self.assertIn("B REGRESSION: udp-sessions loss", text)
        self.assertNotIn("host load", text)
        self.assertNotIn(stats.HOST_BUSY, text)
        self.assertNotIn(stats.HOST_BUSY, summary)
        # one version's loads known, the other's not: unknown, voted
        raw = _raw(HOST_STREAM, 1.3, QUIET, BUSY)
        for r in raw["records"]:
            if r["version"] == "B":
                del r["host_load"]
        self.assertEqual(self._report(raw)[0], 1)

    def test_host_busy_alone_is_undecided_not_no_regression(self):
        # nothing but the host stream, and it not voted: nothing decided
        rc, text, _, _ = self._report(_raw(HOST_STREAM, 1.3, QUIET, BUSY,
                                           also_vm=False))
        self.assertEqual(rc, 3, text)
        self.assertIn("B UNDECIDED", text)

    def test_regress_report_exit_status(self):
        for loads, want in ((BUSY, 0), ([0.4, 0.2, 0.6], 1)):
            with tempfile.TemporaryDirectory() as d:
                with open(os.path.join(d, "raw.json"), "w") as f:
                    json.dump(_raw(HOST_STREAM, 1.3, QUIET, loads), f)
                p = subprocess.run([sys.executable, REGRESS, "--report", d],
                                   stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True,
                                   env=dict(os.environ, NO_COLOR="1"))
            self.assertEqual(p.returncode, want, p.stdout)


def main():
    return testmain.run(sys.modules[__name__], "hostbusy")


if __name__ == "__main__":
    sys.exit(main())
