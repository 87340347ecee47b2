"""Tests of version specs with pptpd.conf settings (HEAD+datapath=kernel):
what a spec asks for, and the pptpd.conf its server then starts with.

    python3 regress/test_spec.py   (ends with "N passed, N failed")

A throw-away git repository with a build already in the cache (a stand-in
binary and its .regress-ok stamp) lets build_one run without compiling.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import testmain  # noqa: E402

import build  # noqa: E402
import measure  # noqa: E402

GIT_ENV = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@invalid",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@invalid",
               GIT_AUTHOR_DATE="2026-01-01T00:00:00Z",
               GIT_COMMITTER_DATE="2026-01-01T00:00:00Z",
               GIT_CONFIG_NOSYSTEM="1", HOME="/nonexistent")
BASE_CONF = ["option /w/options.pptpd", "localip 198.19.0.1",
             "remoteip 198.19.0.10-40", "connections 10"]


class Parse(unittest.TestCase):
    def test_conf_setting(self):
        self.assertEqual(build.parse_spec("HEAD+datapath=kernel"),
                         ("HEAD", {"datapath": "kernel"}))
        self.assertEqual(build.conf_lines({"datapath": "kernel"}),
                         ["datapath kernel"])

    def test_build_and_conf_together(self):
        ref, opts = build.parse_spec("v1+cflags=-O0 -g+datapath=kernel"
                                     "+call-setups-per-client=2")
        self.assertEqual(ref, "v1")
        self.assertEqual(build.make_vars(opts),
                         {"OPT": "-O0", "EXTRA_CFLAGS": "-g"})
        self.assertEqual(build.conf_lines(opts),
                         ["datapath kernel", "call-setups-per-client 2"])

    def test_existing_specs_unchanged(self):
        for spec, want in (("HEAD", ("HEAD", {})),
                           ("HEAD+cflags=-O0", ("HEAD", {"cflags": "-O0"})),
                           ("v1+opt=-O1", ("v1", {"opt": "-O1"})),
                           ("feature+x", ("feature+x", {}))):
            self.assertEqual(build.parse_spec(spec), want, spec)
            self.assertEqual(build.conf_lines(want[1]), [], spec)

    def test_bare_keyword(self):
        self.assertEqual(build.conf_lines(build.parse_spec(
            "HEAD+logwtmp=")[1]), ["logwtmp"])

    def test_a_key_twice_is_refused(self):
        with self.assertRaises(build.BuildError):
            build.parse_spec("HEAD+datapath=kernel+datapath=engine")

    def test_conf_keys_do_not_change_the_build(self):
        self.assertEqual(build.make_vars({"datapath": "kernel"}), {})


class Merge(unittest.TestCase):
    def test_appended(self):
        self.assertEqual(measure.merge_conf(BASE_CONF, ["datapath kernel"]),
                         "".join(x + "\n" for x in
                                 BASE_CONF + ["datapath kernel"]))

    def test_replaces_the_common_line(self):
        text = measure.merge_conf(BASE_CONF, ["connections 3"])
        self.assertNotIn("connections 10", text)
        self.assertEqual(text.count("connections"), 1)
        self.assertTrue(text.endswith("connections 3\n"))


class BuildOne(unittest.TestCase):
    """build_one of a cached build: the plan entry its server runs from."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="spec-test-")
        self.repo = os.path.join(self.tmp, "repo")
        self.root = os.path.join(self.tmp, "build")
        os.makedirs(self.repo)
        for args in (["init", "-q", "-b", "main"],
                     ["commit", "-q", "--allow-empty", "-m", "one"]):
            subprocess.run(["git", "-C", self.repo] + args, env=GIT_ENV,
                           check=True)
        self.sha = build.git(self.repo, "rev-parse", "HEAD")
        # Builds are cached by the commit's tree (build.py).
        self.tree = build.git(self.repo, "rev-parse", "HEAD^{tree}")
        d = os.path.join(self.root, self.tree[:12])
        os.makedirs(os.path.join(d, "pptpd"))
        os.makedirs(os.path.join(d, "plugin"))
        binary = os.path.join(d, "pptpd", "pptpd")
        with open(binary, "w") as f:
            f.write("#!/bin/sh\n")
        os.chmod(binary, 0o755)
        open(os.path.join(d, "plugin", "pptpd-policy.so"), "w").close()
        with open(os.path.join(d, ".regress-ok"), "w") as f:
            f.write("recipe %d %s \n" % (build.RECIPE, self.tree))
        self.dir = d

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def plan(self, spec):
        return build.build_one(self.repo, self.root, spec, spec,
                               log=lambda *_: None)

    def test_head_on_the_kernel_path(self):
        head = self.plan("HEAD")
        kern = self.plan("HEAD+datapath=kernel")
        # the same build, one more pptpd.conf line
        self.assertEqual(kern["build"], head["build"])
        self.assertEqual(kern["server"], head["server"])
        so = os.path.join(self.dir, "plugin", "pptpd-policy.so")
        self.assertEqual(head["conf"], ["plugin " + so])
        self.assertEqual(kern["conf"], ["plugin " + so, "datapath kernel"])
        text = measure.merge_conf(BASE_CONF, kern["conf"])
        self.assertIn("\ndatapath kernel\n", text)

    def test_a_commit_with_the_same_files_shares_the_build(self):
        subprocess.run(["git", "-C", self.repo, "commit", "-q",
                        "--allow-empty", "-m", "two"], env=GIT_ENV,
                       check=True)
        two = self.plan("HEAD")
        one = self.plan("HEAD~1")
        self.assertNotEqual(two["commit"], one["commit"])
        self.assertEqual(two["build"], one["build"])
        self.assertEqual(two["server"], one["server"])

    def test_poptop_takes_conf_lines_not_build_options(self):
        # Debian's pptpd is in scripts/packages.txt: build_one needs it
        self.assertEqual(self.plan("poptop+connections=3")["conf"],
                         ["connections 3"])
        with self.assertRaises(build.BuildError):
            self.plan("poptop+cflags=-O0")


class Plant(unittest.TestCase):
    """HEAD+plant=NAME: the ref's tree with regress/plants/NAME.diff."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="plant-test-")
        self.repo = os.path.join(self.tmp, "repo")
        self.root = os.path.join(self.tmp, "build")
        self.plants = os.path.join(self.tmp, "plants")
        os.makedirs(self.repo)
        os.makedirs(self.plants)
        # A ref whose "server" is its source file, copied by make.
        with open(os.path.join(self.repo, "server.txt"), "w") as f:
            f.write("fast\n")
        with open(os.path.join(self.repo, "Makefile"), "w") as f:
            f.write("pptpd/pptpd: server.txt\n\tmkdir -p pptpd\n"
                    "\tcp server.txt $@\n\tchmod +x $@\n")
        with open(os.path.join(self.plants, "slow.diff"), "w") as f:
            f.write("What it costs: everything.\n\n"
                    "diff --git a/server.txt b/server.txt\n"
                    "--- a/server.txt\n+++ b/server.txt\n"
                    "@@ -1 +1 @@\n-fast\n+slow\n")
        for args in (["init", "-q", "-b", "main"], ["add", "."],
                     ["commit", "-q", "-m", "one"]):
            subprocess.run(["git", "-C", self.repo] + args, env=GIT_ENV,
                           check=True)
        self.saved = build.PLANTS
        build.PLANTS = self.plants

    def tearDown(self):
        build.PLANTS = self.saved
        shutil.rmtree(self.tmp, ignore_errors=True)

    def built(self, spec):
        v = build.build_one(self.repo, self.root, spec, spec,
                            log=lambda *_: None)
        with open(v["server"][0]) as f:
            return v, f.read()

    def test_the_plant_is_in_the_build_and_not_in_the_tree(self):
        head, text = self.built("HEAD")
        self.assertEqual(text, "fast\n")
        planted, text = self.built("HEAD+plant=slow")
        self.assertEqual(text, "slow\n")
        self.assertEqual(planted["plant"], "slow.diff")
        self.assertNotEqual(planted["build"], head["build"])
        self.assertEqual(planted["conf"], [])      # not a pptpd.conf line
        with open(os.path.join(self.repo, "server.txt")) as f:
            self.assertEqual(f.read(), "fast\n")
        st = subprocess.run(["git", "-C", self.repo, "status",
                             "--porcelain"], stdout=subprocess.PIPE,
                            text=True, check=True).stdout
        self.assertEqual(st, "")

    def test_a_changed_plant_is_built_again(self):
        first, _ = self.built("HEAD+plant=slow")
        with open(os.path.join(self.plants, "slow.diff"), "a") as f:
            f.write("")
        self.assertEqual(self.built("HEAD+plant=slow")[0]["build"],
                         first["build"])
        with open(os.path.join(self.plants, "slow.diff")) as f:
            text = f.read()
        with open(os.path.join(self.plants, "slow.diff"), "w") as f:
            f.write(text.replace("+slow", "+slower"))
        again, out = self.built("HEAD+plant=slow")
        self.assertNotEqual(again["build"], first["build"])
        self.assertEqual(out, "slower\n")

    def test_unknown_or_outside_plants_are_refused(self):
        for name in ("nosuch", "../slow", ".hidden"):
            with self.assertRaises(build.BuildError, msg=name):
                self.built("HEAD+plant=" + name)

    def test_a_plant_that_does_not_apply_fails_the_build(self):
        with open(os.path.join(self.plants, "stale.diff"), "w") as f:
            f.write("diff --git a/server.txt b/server.txt\n"
                    "--- a/server.txt\n+++ b/server.txt\n"
                    "@@ -1 +1 @@\n-other\n+slow\n")
        with self.assertRaises(build.BuildError):
            self.built("HEAD+plant=stale")


def load_regress():
    import importlib.machinery
    import importlib.util
    loader = importlib.machinery.SourceFileLoader(
        "regress_main", os.path.join(HERE, "regress"))
    spec = importlib.util.spec_from_loader("regress_main", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


class Cpus(unittest.TestCase):
    """REGRESS_SMP: the VM's options, and what the report says of them."""

    def test_one_vcpu_keeps_icount(self):
        rg = load_regress()
        self.assertEqual(rg.vm_cpu_args({"shift": 4}),
                         ["--icount", "4", "--smp", "1"])
        self.assertEqual(rg.vm_cpu_args({"shift": 6, "smp": 1}),
                         ["--icount", "6", "--smp", "1"])
        import report
        self.assertEqual(report.bed_lines({"shift": 4}), [])

    def test_two_vcpus_without_icount(self):
        rg = load_regress()
        args = rg.vm_cpu_args({"shift": 4, "smp": 2})
        self.assertEqual(args, ["--smp", "2"])
        self.assertNotIn("--icount", args)
        self.assertIn("2 vCPUs", rg.vm_cpu_text({"shift": 4, "smp": 2}))
        import report
        lines = report.bed_lines({"shift": 4, "smp": 2})
        self.assertEqual(len(lines), 1)
        self.assertIn("2 vCPUs without -icount", lines[0])


class Profiled(unittest.TestCase):
    """REGRESS_PROFILE: the kinds it takes, and the report's warning that
    a profiled run's figures carry the probes' cost."""

    def test_kinds(self):
        self.assertEqual(measure.profile_kinds(""), [])
        self.assertEqual(measure.profile_kinds(None), [])
        self.assertEqual(measure.profile_kinds("trace, perf"),
                         ["trace", "perf"])
        with self.assertRaises(ValueError) as e:
            measure.profile_kinds("trace,strace")
        self.assertIn("strace", str(e.exception))

    def test_missing_perf_costs_the_run_nothing(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        old = measure.PERF
        measure.PERF = os.path.join(d, "no-such-perf")
        self.addCleanup(setattr, measure, "PERF", old)
        base = os.path.join(d, "r1-HEAD-udp-1M.up")
        p = measure.Profile(["trace", "perf"], base, [os.getpid()], 1.0, d)
        p.stop()
        p.report({"pptpd-worker"})
        with open(base + ".profile.log") as f:
            log = f.read()
        self.assertIn("no-such-perf", log)
        self.assertTrue(p.log.closed)
        self.assertEqual(sorted(os.listdir(d)), ["r1-HEAD-udp-1M.up.profile.log"])

    def test_report_says_profiled(self):
        import report
        lines = report.bed_lines({"shift": 4, "profile": ["trace"]})
        self.assertEqual(len(lines), 1)
        self.assertIn("REGRESS_PROFILE=trace", lines[0])
        self.assertEqual(len(report.bed_lines(
            {"shift": 4, "smp": 2, "profile": ["perf"]})), 2)
        self.assertEqual(report.bed_lines({"shift": 4, "profile": []}), [])


    def test_report_says_no_napi_thread(self):
        import report
        lines = report.bed_lines({"shift": 4, "smp": 2,
                                  "threaded_napi": False})
        self.assertEqual(len(lines), 2)
        self.assertIn("REGRESS_NAPI=0", lines[1])
        self.assertEqual(report.bed_lines({"shift": 4,
                                           "threaded_napi": True}), [])


def main():
    return testmain.run(sys.modules[__name__], "spec")


if __name__ == "__main__":
    sys.exit(main())
