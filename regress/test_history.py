"""Tests of regress/history, every release on one chart: steps, drift,
the files it writes, failed versions and its exit statuses, on results
folders written in measure.py's raw.json format (streams parsed from real
*.stream files by streams.py). No VM is started: the measuring form runs
a stub in place of regress/regress.

    python3 regress/test_history.py   (ends with "history: N passed, N failed")
"""

import contextlib
import csv
import importlib.machinery
import importlib.util
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import testmain  # noqa: E402
import stats  # noqa: E402
import streams as streamlib  # noqa: E402

HISTORY = os.path.join(HERE, "history")


def load_history():
    loader = importlib.machinery.SourceFileLoader("history_main", HISTORY)
    spec = importlib.util.spec_from_loader("history_main", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


history = load_history()

VERSIONS = ("v0.1.0", "v0.2.0", "v0.3.0", "HEAD")
ROUNDS = 3
# Scatter of the rounds around each version's value (under 0.2 %, so no
# step comes from it).
JIGGLE = (1.0, 1.001, 0.999)
STREAM = """description  synthetic UDP
kind         udp
size         1200
rate         1M
duration     3
direction    up
"""


def stream_list(tmp):
    """The plan's streams as regress puts them there: streams.load_dir of
    a real .stream file."""
    sdir = os.path.join(tmp, "streams")
    os.makedirs(sdir)
    with open(os.path.join(sdir, "10-udp-syn.stream"), "w") as f:
        f.write(STREAM)
    return streamlib.load_dir(sdir)


def metrics_of(i, rnd):
    """Version i's metrics in round rnd: throughput drifts -2 % per
    version, server CPU per MB steps up 8 % at the third version (v0.3.0),
    loss and jitter are flat."""
    j = JIGGLE[(rnd - 1) % len(JIGGLE)]
    return {"throughput": 2.0 * 0.98 ** i * j,
            "cpu_per_mb": (300.0 if i < 2 else 324.0) * j,
            "loss": 0.0, "ooo": 0.0, "jitter": 0.5,
            "guest_cpu_per_mb": 4000.0 * j}


def plan_of(tmp, versions, streams):
    return {"created": "2026-12-02 12:00:00 +0000", "repo": "/x",
            "results_dir": tmp,
            "versions": [{"label": v, "key": v, "spec": v, "kind": "ours",
                          "commit": "%040x" % (i + 1), "dirty": False,
                          "make": [], "plant": None,
                          "server": ["/x/%d/pptpd" % i], "conf": [],
                          "build": "b%d" % i}
                         for i, v in enumerate(versions)],
            "streams": streams, "warmup": [dict(streams[0], duration=1)],
            "rounds": ROUNDS, "quick": False, "threshold": 5.0,
            "cpu_threshold": 3.0, "mppe": True, "shift": 4,
            "dial_timeout": 60, "ping_count": 10, "settle": 0.5,
            "pptp_echo": None, "pptp_load": None, "root": None,
            "debian": None}


def session(v, rnd, up=True):
    """A session as measure.Run.session records it; a dial that failed
    leaves no dial fields."""
    s = {"round": rnd, "version": v, "warmup": rnd == 0,
         "start": 1796208817.0 + rnd, "teardown_s": 0.7,
         "end": 1796208825.0 + rnd}
    if up:
        s.update(listen_s=0.9, up_s=3.8 + 0.01 * rnd, tries=1)
    return s


def records(v, i, rnd, streams):
    """The records of one session; the idle ping's RTT improves by 10 %
    at the second version."""
    out = [{"round": rnd, "version": v, "stream": "ping", "kind": "ping",
            "metrics": {"rtt": 3.3 if i < 1 else 2.97},
            "detail": {"rtt_min": 2.9, "rtt_max": 3.4, "sent": 10,
                       "received": 10}}]
    for s in streams:
        out.append({"round": rnd, "version": v, "stream": s["name"],
                    "kind": s["kind"], "metrics": metrics_of(i, rnd),
                    "detail": {"bytes": 750000, "server_cpu_s": 0.2},
                    "iperf": "iperf/r%d-%s-%s.json" % (rnd, v, s["name"])})
    return out


def raw_of(tmp, versions=VERSIONS, fail_at=None):
    """A raw.json's content for the rounds run in measure.py's order
    (A B C D, then D C B A, ...). fail_at=(round, version): that
    session's dial fails and the run ends there, as measure.py ends it."""
    streams = stream_list(tmp)
    raw = {"plan": plan_of(tmp, versions, streams), "env": {},
           "sessions": [session(versions[0], 0)], "records": [],
           "error": None}
    for rnd in range(1, ROUNDS + 1):
        order = list(versions) if rnd % 2 else list(reversed(versions))
        for v in order:
            if fail_at == (rnd, v):
                raw["sessions"].append(session(v, rnd, up=False))
                raw["error"] = "%s: the tunnel did not come up" % v
                return raw
            raw["sessions"].append(session(v, rnd))
            raw["records"] += records(v, versions.index(v), rnd, streams)
    raw["measure_s"] = 300.0
    return raw


def write_folder(raw):
    d = tempfile.mkdtemp(prefix="history-test-")
    with open(os.path.join(d, "raw.json"), "w") as f:
        json.dump(raw, f, indent=1)
    return d


def run_cli(*args, env=None):
    p = subprocess.run([sys.executable, HISTORY] + list(args),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True,
                       env=dict(os.environ, **(env or {})))
    return p.returncode, p.stdout, p.stderr


def series(doc, stream, metric):
    found = [s for s in doc["series"] if s["stream"] == stream and
             s["metric"] == metric]
    assert len(found) == 1, (stream, metric, len(found))
    return found[0]


class Folder(unittest.TestCase):
    """One complete 4-version run, post-processed with --from."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="history-streams-")
        cls.raw = raw_of(cls.tmp)
        cls.dir = write_folder(cls.raw)
        env = {k: "" for k in ("THRESHOLD", "CPU_THRESHOLD")}
        cls.rc, cls.out, cls.err = run_cli("--from", cls.dir, env=env)
        cls.hdir = os.path.join(cls.dir, "history")
        with open(os.path.join(cls.hdir, "history.json")) as f:
            cls.doc = json.load(f)
        with open(os.path.join(cls.hdir, "steps.txt")) as f:
            cls.steps = f.read()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)
        shutil.rmtree(cls.tmp)

    def test_exit_0_and_steps_printed(self):
        self.assertEqual(self.rc, 0, self.err)
        self.assertIn(self.steps, self.out)

    def test_cpu_step_named_at_the_third_release(self):
        s = series(self.doc, "udp-syn", "cpu_per_mb")
        self.assertEqual([(st["from"], st["to"], st["way"])
                          for st in s["steps"]],
                         [("v0.2.0", "v0.3.0", "worse")])
        self.assertAlmostEqual(s["steps"][0]["change_pct"], 8.0, places=3)
        # regress's own paired verdict agrees: the rounds show it
        self.assertEqual(s["steps"][0]["verdict"], "regression")
        self.assertRegex(self.steps, r"udp-syn  server CPU per MB .*\n"
                         r"  STEP at v0\.3\.0: 300 -> 324 ms/MB "
                         r"\(\+8\.0 %, worse; from v0\.2\.0")

    def test_an_improvement_is_better(self):
        s = series(self.doc, "ping", "rtt")
        self.assertEqual([(st["to"], st["way"]) for st in s["steps"]],
                         [("v0.2.0", "better")])
        self.assertIn("STEP at v0.2.0: 3.3 -> 2.97 ms (-10.0 %, better",
                      self.steps)

    def test_drift_without_a_step_is_reported(self):
        s = series(self.doc, "udp-syn", "throughput")
        self.assertEqual(s["steps"], [])
        d = s["drift"]
        self.assertEqual((d["from"], d["to"], d["way"], d["beyond"]),
                         ("v0.1.0", "HEAD", "worse", True))
        self.assertAlmostEqual(d["change_pct"], (0.98 ** 3 - 1) * 100,
                               places=3)
        self.assertIn("DRIFT v0.1.0 -> HEAD: 2 -> 1.882 Mbit/s (-5.9 %, "
                      "worse), beyond the threshold with no single step "
                      "beyond it", self.steps)

    def test_flat_metrics_have_no_step_and_no_drift(self):
        for m in ("loss", "jitter", "ooo"):
            s = series(self.doc, "udp-syn", m)
            self.assertEqual(s["steps"], [], m)
            self.assertFalse(s["drift"]["beyond"], m)
        self.assertIn("udp-syn  jitter: no step, drift +0.0 % "
                      "(v0.1.0 -> HEAD)", self.steps)

    def test_with_plain_metrics_only_with_plain(self):
        # VM CPU per MB is a `plain` run's row (stats.Metric.with_plain)
        self.assertFalse([s for s in self.doc["series"]
                          if s["metric"] == "guest_cpu_per_mb"])

    def test_json_holds_every_round_and_commit(self):
        s = series(self.doc, "udp-syn", "throughput")
        self.assertEqual([p["version"] for p in s["points"]], list(VERSIONS))
        for i, p in enumerate(s["points"]):
            self.assertEqual(p["index"], i)
            self.assertEqual(p["commit"], "%040x" % (i + 1))
            self.assertEqual(sorted(p["rounds"]), ["1", "2", "3"])
            for r in (1, 2, 3):
                self.assertAlmostEqual(p["rounds"][str(r)],
                                       metrics_of(i, r)["throughput"])
            self.assertAlmostEqual(p["min"], 2.0 * 0.98 ** i * 0.999)
            self.assertAlmostEqual(p["max"], 2.0 * 0.98 ** i * 1.001)

    def test_csv_holds_every_round(self):
        with open(os.path.join(self.hdir, "history.csv"), newline="") as f:
            rows = list(csv.DictReader(f))
        want = {(v, m) for v in VERSIONS
                for m in ("throughput", "cpu_per_mb", "loss", "ooo",
                          "jitter")}
        got = {(r["version"], r["metric"]): r for r in rows
               if r["stream"] == "udp-syn"}
        self.assertEqual(set(got), want)
        for (v, m), r in got.items():
            i = VERSIONS.index(v)
            self.assertEqual((r["index"], r["commit"], r["status"],
                              r["rounds"]),
                             (str(i), "%040x" % (i + 1), "ok", "3"))
            for rnd in (1, 2, 3):
                self.assertAlmostEqual(float(r["round_%d" % rnd]),
                                       metrics_of(i, rnd)[m], places=3)
        dial = [r for r in rows if r["stream"] == "dial" and
                r["metric"] == "up_s"]
        self.assertEqual(len(dial), 4)
        self.assertEqual(float(dial[0]["round_2"]), 3.82)

    def test_a_png_per_stream_and_metric(self):
        if not shutil.which("gnuplot"):
            print("\nhistory: SKIPPED the PNG check: gnuplot is not "
                  "installed", flush=True)
            self.skipTest("gnuplot not installed")
        for s in self.doc["series"]:
            path = os.path.join(self.hdir, "%s.%s.png" % (s["stream"],
                                                          s["metric"]))
            with open(path, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n", path)

    def test_the_chart_draws_every_round(self):
        with open(os.path.join(self.hdir, "udp-syn.cpu_per_mb.dat")) as f:
            blocks = f.read().split("\n\n\n")
        medians = [ln.split() for ln in blocks[0].splitlines()
                   if ln and not ln.startswith("#")]
        self.assertEqual([m[0] for m in medians], ["0", "1", "2", "3"])
        self.assertEqual(float(medians[2][1]), 324.0)
        dots = [ln for ln in blocks[1].splitlines()
                if ln and not ln.startswith("#")]
        self.assertEqual(len(dots), len(VERSIONS) * ROUNDS)


class Thresholds(unittest.TestCase):
    """THRESHOLD and CPU_THRESHOLD as regress reads them."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="history-streams-")
        self.dir = write_folder(raw_of(self.tmp))

    def tearDown(self):
        shutil.rmtree(self.dir)
        shutil.rmtree(self.tmp)

    def doc(self, **env):
        rc, out, err = run_cli("--from", self.dir, env=env)
        self.assertEqual(rc, 0, err)
        with open(os.path.join(self.dir, "history", "history.json")) as f:
            return json.load(f)

    def test_wider_thresholds_hide_step_and_drift(self):
        doc = self.doc(THRESHOLD="7", CPU_THRESHOLD="9")
        self.assertEqual((doc["threshold"], doc["cpu_threshold"]), (7, 9))
        self.assertFalse(series(doc, "udp-syn", "throughput")["drift"]
                         ["beyond"])
        self.assertEqual(series(doc, "udp-syn", "cpu_per_mb")["steps"], [])

    def test_narrower_threshold_shows_each_2_percent(self):
        doc = self.doc(THRESHOLD="1.5")
        self.assertEqual([st["to"] for st in series(
            doc, "udp-syn", "throughput")["steps"]], list(VERSIONS[1:]))

    def test_bad_threshold_is_exit_2(self):
        rc, _, err = run_cli("--from", self.dir, env={"THRESHOLD": "x"})
        self.assertEqual(rc, 2)
        self.assertIn("THRESHOLD", err)

    def test_defaults_are_regress_s(self):
        with open(os.path.join(HERE, "regress")) as f:
            src = f.read()
        self.assertIn('env_num("THRESHOLD", stats.THRESHOLD', src)
        self.assertEqual(history.THRESHOLD_DEFAULT, stats.THRESHOLD)
        self.assertIn('env_num("CPU_THRESHOLD", stats.CPU_THRESHOLD', src)


class Failed(unittest.TestCase):
    """A run that ended at v0.3.0's first dial: v0.3.0 and HEAD have no
    data, v0.1.0 and v0.2.0 one round each."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="history-streams-")
        cls.dir = write_folder(raw_of(cls.tmp, fail_at=(1, "v0.3.0")))
        cls.rc, cls.out, cls.err = run_cli("--from", cls.dir)
        cls.hdir = os.path.join(cls.dir, "history")
        with open(os.path.join(cls.hdir, "history.json")) as f:
            cls.doc = json.load(f)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)
        shutil.rmtree(cls.tmp)

    def test_exit_2_and_reported(self):
        self.assertEqual(self.rc, 2, self.err)
        self.assertIn("RUN FAILED: the run failed: v0.3.0: the tunnel did "
                      "not come up", self.out)
        self.assertIn("MISSING v0.3.0: 1 session(s) measured, not charted",
                      self.out)
        self.assertIn("MISSING HEAD: 0 session(s) measured, not charted",
                      self.out)
        self.assertEqual([v["status"] for v in self.doc["versions"]],
                         ["cut short", "cut short", "missing", "missing"])

    def test_missing_versions_are_not_points(self):
        s = series(self.doc, "udp-syn", "cpu_per_mb")
        self.assertEqual([p["version"] for p in s["points"]],
                         ["v0.1.0", "v0.2.0"])
        self.assertEqual(s["missing"], ["v0.3.0", "HEAD"])

    def test_missing_versions_are_not_charted(self):
        with open(os.path.join(self.hdir, "udp-syn.cpu_per_mb.dat")) as f:
            xs = {ln.split()[0] for ln in f.read().splitlines()
                  if ln and not ln.startswith("#")}
        self.assertEqual(xs, {"0", "1"})
        with open(os.path.join(self.hdir, "udp-syn.cpu_per_mb.gp")) as f:
            gp = f.read()
        self.assertIn('"v0.3.0 (no data)" 2', gp)
        self.assertIn('"HEAD (no data)" 3', gp)

    def test_missing_versions_in_csv_without_numbers(self):
        with open(os.path.join(self.hdir, "history.csv"), newline="") as f:
            rows = [r for r in csv.DictReader(f) if r["stream"] == "udp-syn"
                    and r["metric"] == "cpu_per_mb"]
        self.assertEqual([(r["version"], r["status"], r["median"])
                          for r in rows],
                         [("v0.1.0", "cut short", "300"),
                          ("v0.2.0", "cut short", "300"),
                          ("v0.3.0", "no data", ""),
                          ("HEAD", "no data", "")])


class Errors(unittest.TestCase):
    def test_unexpected_exception_is_exit_2_with_traceback(self):
        with tempfile.TemporaryDirectory() as tmp:
            raw = raw_of(tmp)
            del raw["records"][5]["metrics"]    # a raw.json without a key
            d = write_folder(raw)
            try:
                rc, _, err = run_cli("--from", d)
            finally:
                shutil.rmtree(d)
        self.assertEqual(rc, 2)
        self.assertIn("Traceback", err)
        self.assertIn("KeyError: 'metrics'", err)

    def test_no_raw_json_is_exit_2(self):
        with tempfile.TemporaryDirectory() as d:
            rc, _, err = run_cli("--from", d)
        self.assertEqual(rc, 2)
        self.assertIn("no results in", err)
        self.assertNotIn("Traceback", err)

    def test_bad_arguments_are_exit_2(self):
        for args in (["--rounds", "0"], ["--bogus"], ["--since"],
                     ["--from", "/x", "--quick"]):
            rc, _, err = run_cli(*args)
            self.assertEqual(rc, 2, args)
            self.assertIn("history: ERROR", err, args)

    def test_entry_maps_any_exception_to_2(self):
        saved = history.main
        history.main = lambda argv: {}["boom"]
        try:
            with contextlib.redirect_stderr(io.StringIO()) as err:
                rc = history.entry(["history"])
        finally:
            history.main = saved
        self.assertEqual(rc, 2)
        self.assertIn("KeyError", err.getvalue())

    def test_entry_never_exits_1(self):
        # a sys.exit(1) from anything it calls would read as a regression

        def exit1(argv):
            sys.exit(1)
        saved = history.main
        history.main = exit1
        try:
            self.assertEqual(history.entry(["history"]), 2)
        finally:
            history.main = saved


STUB = r"""import json, os, sys, time
rec = {"argv": sys.argv[1:], "QUICK": os.environ.get("QUICK"),
       "ROUNDS": os.environ.get("ROUNDS")}
with open(os.environ["STUB_LOG"], "w") as f:
    json.dump(rec, f)
root = os.environ["REGRESS_RESULTS"]
if os.environ.get("STUB_RAW"):
    d = os.path.join(root, time.strftime("%Y%m%d-%H%M%S"))
    os.makedirs(d)
    with open(os.environ["STUB_RAW"]) as src, \
            open(os.path.join(d, "raw.json"), "w") as dst:
        dst.write(src.read())
sys.exit(int(os.environ["STUB_RC"]))
"""


class Measuring(unittest.TestCase):
    """The measuring form with a stub in place of regress/regress."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="history-stub-")
        self.stub = os.path.join(self.tmp, "regress-stub")
        with open(self.stub, "w") as f:
            f.write(STUB)
        self.log = os.path.join(self.tmp, "log.json")
        self.rawp = os.path.join(self.tmp, "raw.json")
        with open(self.rawp, "w") as f:
            json.dump(raw_of(self.tmp), f)
        self.env_saved = dict(os.environ)
        os.environ.update(REGRESS_RESULTS=os.path.join(self.tmp, "res"),
                          STUB_LOG=self.log, STUB_RAW=self.rawp)
        for k in ("QUICK", "ROUNDS", "THRESHOLD", "CPU_THRESHOLD"):
            os.environ.pop(k, None)
        history.RUNNER = self.stub

    def tearDown(self):
        history.RUNNER = history.REGRESS
        os.environ.clear()
        os.environ.update(self.env_saved)
        shutil.rmtree(self.tmp)

    def run_main(self, rc, *args):
        os.environ["STUB_RC"] = str(rc)
        out = io.StringIO()
        with contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(io.StringIO()):
            got = history.entry(["history"] + list(args))
        with open(self.log) as f:
            return got, json.load(f), out.getvalue()

    def test_one_run_of_the_releases_and_head(self):
        specs = history.release_specs()
        rc, rec, out = self.run_main(1, "--quick", "--rounds", "4")
        self.assertEqual(rc, 0)   # regress's 1 is a finding, not a failure
        self.assertEqual(rec["argv"], [",".join(specs)])
        self.assertEqual((rec["QUICK"], rec["ROUNDS"]), ("1", "4"))
        self.assertEqual(specs[-1], "HEAD")
        self.assertIn("STEP at v0.3.0", out)

    def test_since(self):
        specs = history.release_specs()
        if len(specs) < 3:
            self.skipTest("fewer than 2 releases in this clone")
        _, rec, _ = self.run_main(0, "--since", specs[-2])
        self.assertEqual(rec["argv"], ["%s,HEAD" % specs[-2]])
        self.assertEqual((rec["QUICK"], rec["ROUNDS"]), (None, None))

    def test_releases_oldest_first(self):
        specs = history.release_specs()[:-1]
        keys = [tuple(int(x) for x in s[1:].split(".")) for s in specs]
        self.assertEqual(keys, sorted(keys))

    def test_unknown_since_is_exit_2(self):
        os.environ["STUB_RC"] = "0"
        with contextlib.redirect_stderr(io.StringIO()) as err:
            self.assertEqual(history.entry(["history", "--since",
                                            "v99.0.0"]), 2)
        self.assertIn("not a known release", err.getvalue())
        self.assertFalse(os.path.exists(self.log))

    def test_regress_exit_2_passes_through(self):
        rc, _, out = self.run_main(2)
        self.assertEqual(rc, 2)
        self.assertIn("exited 2: could not measure", out)

    def test_regress_exit_2_without_a_folder(self):
        del os.environ["STUB_RAW"]
        rc, _, _ = self.run_main(2)
        self.assertEqual(rc, 2)


def main():
    return testmain.run(sys.modules[__name__], "history")


if __name__ == "__main__":
    sys.exit(main())
