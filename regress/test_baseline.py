"""Tests of the whole guest's CPU and the `plain` baseline (CPU per MB a
server adds, kernel work included): /proc/stat parsing, the per-MB
figures, the pairing with plain's rounds, and what the report shows.

    python3 regress/test_baseline.py   (ends with "N passed, N failed")
"""

import json
import os
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import testmain  # noqa: E402
import procstat  # noqa: E402

import build  # noqa: E402
import hostload  # noqa: E402
import measure  # noqa: E402
import report  # noqa: E402
import stats  # noqa: E402

# The first line of a 6.1 kernel's /proc/stat: user nice system idle iowait
# irq softirq steal guest guest_nice.
STAT = "cpu  4705 150 1120 16250 520 30 340 7 100 20"


class ProcStat(unittest.TestCase):
    def test_fields(self):
        f = measure.parse_stat_cpu(STAT)
        self.assertEqual(f, {"user": 4705, "nice": 150, "system": 1120,
                             "idle": 16250, "iowait": 520, "irq": 30,
                             "softirq": 340, "steal": 7})

    def test_old_kernel_short_line(self):
        # before 2.6.11 there was no steal: the missing fields are zero
        f = measure.parse_stat_cpu("cpu 1 2 3 4 5 6 7")
        self.assertEqual(f["softirq"], 7)
        self.assertEqual(f["steal"], 0)

    def test_not_the_cpu_line(self):
        for line in ("cpu0 1 2 3 4 5 6 7 8", "intr 5 6", ""):
            with self.assertRaises(ValueError, msg=line):
                measure.parse_stat_cpu(line)

    def test_busy_is_the_guests_own_work(self):
        a = measure.parse_stat_cpu("cpu 100 10 50 1000 40 5 20 3 0 0")
        b = measure.parse_stat_cpu("cpu 200 10 150 1500 90 15 120 53 0 0")
        d = measure.guest_cpu_delta(a, b, clk_tck=100)
        # user 1 + nice 0 + system 1 + irq 0.1 + softirq 1, in seconds;
        # idle (5), iowait (0.5) and steal (0.5, the host's) are not work
        self.assertAlmostEqual(d["busy"], 3.1)
        self.assertAlmostEqual(d["softirq"], 1.0)
        self.assertAlmostEqual(d["steal"], 0.5)
        self.assertAlmostEqual(d["idle"], 5.0)

    def test_not_idle_share(self):
        # the busy share of the server-process table and of bench-scale:
        # everything but idle and iowait, out of every field
        t = measure.parse_stat_cpu("cpu 100 10 50 1000 40 5 20 3 0 0")
        self.assertEqual(procstat.not_idle(t), (188, 1228))

    def test_live_proc_stat(self):
        a = measure.guest_cpu()
        b = measure.guest_cpu()
        self.assertGreaterEqual(measure.guest_cpu_delta(a, b)["busy"], 0.0)

    def test_per_mb(self):
        self.assertAlmostEqual(measure.per_mb(0.5, 2_000_000), 250.0)
        self.assertIsNone(measure.per_mb(0.5, 0))
        self.assertIsNone(measure.per_mb(0.5, None))
        self.assertIsNone(measure.per_mb(None, 1e6))

    def test_guest_metrics_per_mb_of_payload(self):
        m, d = {}, {"bytes": 4_000_000}
        a = measure.parse_stat_cpu("cpu 0 0 0 0 0 0 0 0")
        b = measure.parse_stat_cpu("cpu %d 0 %d 900 0 0 %d 0" % (
            measure.CLK_TCK, measure.CLK_TCK, measure.CLK_TCK))
        measure.Session._guest_metrics(m, d, a, b)
        self.assertAlmostEqual(m["guest_cpu_per_mb"], 750.0)   # 3 s / 4 MB
        self.assertAlmostEqual(d["guest_softirq_per_mb"], 250.0)
        self.assertAlmostEqual(d["guest_cpu_s"]["busy"], 3.0)


def _raw(guest, plain_guest, with_plain=True, skip_plain_round=None):
    """Records of versions A and B (and plain), 3 rounds of one stream;
    guest[label] is the VM CPU per MB of round 1 (round r adds r - 1)."""
    versions = [{"label": "A", "kind": "poptop"},
                {"label": "B", "kind": "ours"}]
    if with_plain:
        versions.insert(1, {"label": "plain", "kind": "plain"})
    recs = []
    for rnd in (1, 2, 3):
        for v in versions:
            lab = v["label"]
            if lab == "plain" and rnd == skip_plain_round:
                continue
            g = (plain_guest if lab == "plain" else guest[lab]) + rnd - 1
            recs.append({"round": rnd, "version": lab, "stream": "s1",
                         "kind": "tcp",
                         "metrics": {"throughput": 1.0,
                                     "cpu_per_mb": None if lab == "plain"
                                     else 100.0 + rnd,
                                     "guest_cpu_per_mb": g, "retrans": 0.0},
                         "detail": {"bytes": 750000}})
    plan = {"versions": versions,
            "streams": [{"name": "s1", "kind": "tcp", "size": None,
                         "rate_bps": 1e6, "duration": 6, "window": "64K",
                         "direction": "up"}]}
    return {"plan": plan, "records": recs}


def _added(raw, lab):
    return [r["metrics"].get("cpu_per_mb_added") for r in raw["records"]
            if r["version"] == lab]


class Baseline(unittest.TestCase):
    def test_same_round_minus_plain(self):
        raw = _raw({"A": 2500.0, "B": 1000.0}, 800.0)
        self.assertEqual(report.add_baseline(raw), 6)
        self.assertEqual(_added(raw, "A"), [1700.0, 1700.0, 1700.0])
        self.assertEqual(_added(raw, "B"), [200.0, 200.0, 200.0])
        self.assertEqual(_added(raw, "plain"), [None, None, None])

    def test_a_round_without_plain_takes_its_median(self):
        raw = _raw({"A": 2500.0, "B": 1000.0}, 800.0, skip_plain_round=2)
        report.add_baseline(raw)
        # plain's rounds 1 and 3: 800, 802 -> median 801 for round 2
        self.assertEqual(_added(raw, "B"), [200.0, 1001.0 - 801.0, 200.0])

    def test_no_plain_no_metric(self):
        raw = _raw({"A": 2500.0, "B": 1000.0}, 0.0, with_plain=False)
        self.assertEqual(report.add_baseline(raw), 0)
        self.assertEqual(_added(raw, "B"), [None, None, None])


class Report(unittest.TestCase):
    def _run(self, raw):
        n, text, rows, files = testmain.report_of(report, raw)
        return n, text, rows, files["summary.csv"]

    def test_plain_is_shown_last_and_never_compared(self):
        n, text, rows, csv = self._run(_raw({"A": 2500.0, "B": 1000.0},
                                            800.0))
        head = text.splitlines()[0].split()
        self.assertEqual(head[-3:], ["plain", "change", "verdict"])
        self.assertLess(head.index("A"), head.index("B"))
        self.assertEqual(n, 0)
        # B's VM CPU per MB fell 60 %: a verdict; plain's 68 % less: none
        self.assertIn("B IMPROVEMENT: s1 VM CPU per MB", text)
        self.assertIn("B IMPROVEMENT: s1 CPU per MB added", text)
        self.assertNotIn("plain IMPROVEMENT", text)
        line = next(ln for ln in text.splitlines() if "CPU per MB added" in ln)
        # A 1700, B 200 (-88.2 %), plain: no value of its own
        self.assertEqual(line.split()[5:11], ["1700", "±0.0%", "200",
                                              "±0.0%", "-88.2%",
                                              "improvement"])
        self.assertEqual(line.split()[-3:], ["-", "no", "tunnel"])
        self.assertIn("s1,tcp,up,guest_cpu_per_mb,ms/MB,lower,plain,3,801,"
                      "800,802,0.249688,,no tunnel", csv)

    def test_without_plain_the_table_is_as_before(self):
        n, text, rows, _ = self._run(_raw({"A": 2500.0, "B": 1000.0}, 0.0,
                                          with_plain=False))
        self.assertNotIn("VM CPU per MB", text)
        self.assertNotIn("CPU per MB added", text)
        self.assertEqual({r["metric"].key for r in rows},
                         {"throughput", "cpu_per_mb", "retrans"})


class Listening(unittest.TestCase):
    def test_v4_and_v6(self):
        # `plain`'s iperf3 binds no address: it listens on [::] (tcp6)
        import socket
        for fam, addr in ((socket.AF_INET, "127.0.0.1"),
                          (socket.AF_INET6, "::")):
            with socket.socket(fam) as s:
                try:
                    s.bind((addr, 0))
                except OSError:
                    continue     # no IPv6 here
                port = s.getsockname()[1]
                self.assertFalse(measure.tcp_listening(os.getpid(), port))
                s.listen()
                self.assertTrue(measure.tcp_listening(os.getpid(), port))


class Spec(unittest.TestCase):
    def test_plain_pseudo_version(self):
        v = build.build_one("/nonexistent", "/nonexistent", "plain", "plain",
                            log=lambda *_: None)
        self.assertEqual((v["kind"], v["server"], v["conf"]),
                         ("plain", None, []))
        with self.assertRaises(build.BuildError):
            build.build_one("/nonexistent", "/nonexistent",
                            "plain+datapath=kernel", "p", log=lambda *_: None)

    def test_plain_session_targets(self):
        class Bed:
            work = "/nonexistent"
        plain = measure.Session(Bed, {"kind": "plain"}, "t")
        ours = measure.Session(Bed, {"kind": "ours"}, "t")
        # no tunnel: the server netns' own address on the client's link
        self.assertEqual(plain.target(True), hostload.SERVER)
        self.assertEqual(plain.target(False), measure.SRV_IP)
        self.assertEqual(ours.target(True), measure.TUN_LOCAL)
        self.assertEqual(ours.target(False), measure.TUN_LOCAL)

    def test_host_request_without_tunnel(self):
        with tempfile.TemporaryDirectory() as d:
            hostload.Phased(d, ["--x"], ["-c", hostload.SERVER], 10,
                            tunnel=False)
            hostload.Phased(d, ["--x"], ["-c", "198.19.0.1"], 10)
            with open(os.path.join(d, "load", "req-0.json")) as f:
                self.assertFalse(json.load(f)["tunnel"])
            with open(os.path.join(d, "load", "req-1.json")) as f:
                self.assertTrue(json.load(f)["tunnel"])


def main():
    return testmain.run(sys.modules[__name__], "baseline")


if __name__ == "__main__":
    sys.exit(main())
