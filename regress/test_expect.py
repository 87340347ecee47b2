"""Tests of regress/expect, the per-version check of CI's one combined run
(HEAD, HEAD#2, HEAD+plant=cpu5) on a summary.csv written as report.py
writes it.

    python3 regress/test_expect.py   (ends with "N passed, N failed")
"""

import csv
import os
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import testmain  # noqa: E402

EXPECT = os.path.join(HERE, "expect")
STREAMS = ("udp-high.up", "udp-high.down", "tcp-rate.up", "tcp-rate.down")


def summary(d, verdicts):
    """verdicts: {(version, stream, metric): verdict}; every other row of
    HEAD#2 and the plant is `same`, HEAD's `baseline`."""
    with open(os.path.join(d, "summary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["stream", "metric", "version", "verdict"])
        for s in STREAMS:
            for m in ("throughput", "cpu_per_mb"):
                for v in ("HEAD", "HEAD#2", "HEAD+plant=cpu5"):
                    w.writerow([s, m, v, "baseline" if v == "HEAD" else
                                verdicts.get((v, s, m), "same")])


def expect(d, *checks):
    p = subprocess.run([EXPECT, d] + list(checks), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True)
    return p.returncode, p.stdout


PLANT_SEEN = {("HEAD+plant=cpu5", s, "cpu_per_mb"): "regression"
              for s in STREAMS}
CHECKS = ("HEAD#2=none", "HEAD+plant=cpu5=caught:cpu_per_mb")


class Expect(unittest.TestCase):
    def run_with(self, verdicts, *checks):
        with tempfile.TemporaryDirectory() as d:
            summary(d, verdicts)
            return expect(d, *(checks or CHECKS))

    def test_plant_everywhere_and_no_false_alarm_pass(self):
        rc, out = self.run_with(PLANT_SEEN)
        self.assertEqual(rc, 0, out)
        self.assertIn("caught on 4 of 4 streams", out)

    def test_a_false_alarm_of_the_twin_fails(self):
        v = dict(PLANT_SEEN)
        v[("HEAD#2", "tcp-rate.up", "throughput")] = "regression"
        rc, out = self.run_with(v)
        self.assertEqual(rc, 1, out)
        self.assertIn("false alarm on tcp-rate.up throughput", out)

    def test_a_plant_missed_on_one_stream_fails(self):
        v = dict(PLANT_SEEN)
        v[("HEAD+plant=cpu5", "udp-high.down", "cpu_per_mb")] = "same"
        rc, out = self.run_with(v)
        self.assertEqual(rc, 1, out)
        self.assertIn("missed on udp-high.down (same)", out)

    def test_seen_needs_one_stream_not_every_one(self):
        v = dict(PLANT_SEEN)
        v[("HEAD+plant=cpu5", "udp-high.down", "cpu_per_mb")] = "same"
        rc, out = self.run_with(v, "HEAD+plant=cpu5=seen:cpu_per_mb")
        self.assertEqual(rc, 0, out)
        self.assertIn("caught on 3 of 4 streams (missed on udp-high.down",
                      out)
        rc, out = self.run_with({}, "HEAD+plant=cpu5=seen:cpu_per_mb")
        self.assertEqual(rc, 1, out)

    def test_a_version_not_in_the_run_fails(self):
        rc, out = self.run_with(PLANT_SEEN, "HEAD#3=none")
        self.assertEqual(rc, 1, out)

    def test_no_results_is_could_not_measure(self):
        with tempfile.TemporaryDirectory() as d:
            rc, _ = expect(d, *CHECKS)
        self.assertEqual(rc, 2)


def main():
    return testmain.run(sys.modules[__name__], "expect")


if __name__ == "__main__":
    sys.exit(main())
