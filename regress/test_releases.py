"""Tests of release names without tags (regress/releases.py) and of their
use as regress versions.

    python3 regress/test_releases.py   (ends with "N passed, N failed")

Throw-away git repositories with a ChangeLog and version.h history check
each rule; the last test checks the real history in a clone without tags.
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
import releases  # noqa: E402

REPO = os.path.dirname(HERE)
GIT_ENV = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@invalid",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@invalid",
               GIT_AUTHOR_DATE="2026-01-01T00:00:00Z",
               GIT_COMMITTER_DATE="2026-01-01T00:00:00Z",
               GIT_CONFIG_NOSYSTEM="1", HOME="/nonexistent")
# The commits announced as 0.1.0 and 0.2.0 (RELEASES says why these).
V010 = "f3512631f653b1ba9f3b4d8af8d73850a438b44a"
V020 = "3b9cf482909b21bd5e126e1da43f35edf95c3d4b"


def changelog(*versions):
    return "".join("2026-01-0%d  pptpd %s\n\n\t* things.\n\n" % (i + 1, v)
                   for i, v in enumerate(versions))


def version_h(v):
    return '#ifndef V\n#define PPTPD_VERSION       "%s"\n#endif\n' % v


class Repo:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="releases-test-")
        self.git("init", "-q", "-b", "main")
        self.git("config", "commit.gpgsign", "false")

    def git(self, *args):
        p = subprocess.run(["git", "-C", self.dir] + list(args), env=GIT_ENV,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
        if p.returncode != 0:
            raise AssertionError("git %s: %s" % (args, p.stderr))
        return p.stdout.strip()

    def write(self, path, text):
        full = os.path.join(self.dir, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)

    def commit(self, msg, **files):
        for path, text in files.items():
            self.write({"version_h": releases.VERSION_H,
                        "changelog": releases.CHANGELOG}.get(path, path), text)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", msg)
        return self.git("rev-parse", "HEAD")

    def releases(self):
        return releases.Releases(self.dir)

    def close(self):
        shutil.rmtree(self.dir, ignore_errors=True)


class History(unittest.TestCase):
    """skeleton (version.h 0.1.0, no ChangeLog), the 0.1.0 entry, work, a
    0.2.0 line while version.h still says 0.1.0, then version.h 0.2.0."""

    def setUp(self):
        self.r = Repo()
        self.addCleanup(self.r.close)
        r = self.r
        self.skeleton = r.commit("skeleton", version_h=version_h("0.1.0"),
                                 **{"main.c": "x\n"})
        self.c010 = r.commit("ChangeLog 0.1.0", changelog=changelog("0.1.0"))
        self.work = r.commit("work", **{"main.c": "y\n"})
        self.line020 = r.commit("ChangeLog 0.2.0",
                                changelog=changelog("0.2.0", "0.1.0"))
        self.c020 = r.commit("version 0.2.0", version_h=version_h("0.2.0"))
        self.late = r.commit("late ChangeLog fix",
                             changelog=changelog("0.2.0", "0.1.0") + "x\n")

    def test_version_h_and_changelog_first_agree(self):
        rel = self.r.releases()
        # A version.h that says 0.1.0 before any ChangeLog does not count,
        # nor a 0.2.0 line while version.h lags; a later ChangeLog edit
        # does not move the release.
        self.assertEqual(rel.find("v0.1.0"), (self.c010, "version.h"))
        self.assertEqual(rel.find("v0.2.0"), (self.c020, "version.h"))
        self.assertEqual(rel.find("0.2.0"), rel.find("v0.2.0"))
        self.assertEqual(rel.known(), ["0.2.0", "0.1.0"])
        self.assertEqual(rel.problems(), [])

    def test_record_gives_a_release_version_h_cannot(self):
        # As 0.2.0 was made: its line went in, version.h stayed at 0.1.0,
        # and the next release moved both.
        r = Repo()
        self.addCleanup(r.close)
        r.commit("0.1.0", version_h=version_h("0.1.0"),
                 changelog=changelog("0.1.0"))
        line020 = r.commit("0.2.0 line", changelog=changelog("0.2.0", "0.1.0"))
        end020 = r.commit("work", **{"x": "1\n"})
        c030 = r.commit("0.3.0", version_h=version_h("0.3.0"),
                        changelog=changelog("0.3.0", "0.2.0", "0.1.0"))
        rel = r.releases()
        self.assertIsNone(rel.find("v0.2.0"))
        with self.assertRaises(releases.ReleaseError) as e:
            rel.resolve("v0.2.0")
        self.assertIn("release v0.2.0: no tag v0.2.0, no line in RELEASES",
                      str(e.exception))
        self.assertEqual(rel.problems(), ["v0.2.0 does not resolve"])
        r.write(releases.RECORD, "# comment\nv0.2.0 %s  # why\n"
                % end020[:10])
        rel = r.releases()
        self.assertEqual(rel.find("v0.2.0"), (end020, "RELEASES"))
        self.assertEqual(rel.find("v0.3.0"), (c030, "version.h"))
        self.assertEqual(rel.problems(), [])
        self.assertNotEqual(line020, end020)

    def test_record_wins_over_version_h(self):
        self.r.write(releases.RECORD, "v0.1.0 %s\n" % self.work)
        rel = self.r.releases()
        self.assertEqual(rel.find("v0.1.0"), (self.work, "RELEASES"))
        self.assertEqual(rel.problems(), [])

    def test_tag_wins_and_disagreement_is_reported(self):
        r = self.r
        r.write(releases.RECORD, "v0.2.0 %s\n" % self.late)
        r.git("tag", "v0.2.0", self.c020)
        rel = r.releases()
        self.assertEqual(rel.find("v0.2.0"), (self.c020, "tag"))
        self.assertEqual(len(rel.problems()), 1)
        self.assertIn("tag %s but RELEASES says %s"
                      % (self.c020[:12], self.late[:12]), rel.problems()[0])

    def test_tag_of_a_commit_without_its_changelog_line(self):
        self.r.git("tag", "-a", "-m", "x", "v0.2.0", self.work)
        rel = self.r.releases()
        self.assertEqual(rel.find("v0.2.0"), (self.work, "tag"))
        self.assertEqual(len(rel.problems()), 1)
        self.assertIn("its ChangeLog's newest release is 0.1.0",
                      rel.problems()[0])

    def test_not_a_release(self):
        rel = self.r.releases()
        with self.assertRaises(releases.ReleaseError) as e:
            rel.resolve("v9.9.9")
        self.assertIn("known releases: v0.2.0, v0.1.0", str(e.exception))
        self.assertIsNone(rel.find("main"))
        self.assertIsNone(rel.find("v1.2"))

    def test_bad_record_line(self):
        self.r.write(releases.RECORD, "v0.2.0 0123456789abcdef\n")
        with self.assertRaises(releases.ReleaseError) as e:
            self.r.releases()
        self.assertIn("RELEASES:1", str(e.exception))

    def test_regress_builds_a_release_without_tags(self):
        self.assertEqual(build.resolve(self.r.dir, "v0.2.0"),
                         (self.c020, False))
        self.assertEqual(build.resolve(self.r.dir, "0.1.0"),
                         (self.c010, False))
        # A git ref of that name still comes first.
        self.r.git("tag", "v0.1.0", self.skeleton)
        self.assertEqual(build.resolve(self.r.dir, "v0.1.0"),
                         (self.skeleton, False))
        with self.assertRaises(build.BuildError) as e:
            build.resolve(self.r.dir, "v0.9.0")
        self.assertIn("release v0.9.0", str(e.exception))
        with self.assertRaises(build.BuildError):
            build.resolve(self.r.dir, "no-such-branch")


class FirstParent(unittest.TestCase):
    def test_a_merged_release_is_the_merge(self):
        r = Repo()
        self.addCleanup(r.close)
        r.commit("one", version_h=version_h("0.1.0"),
                 changelog=changelog("0.1.0"))
        r.git("checkout", "-q", "-b", "side")
        side = r.commit("release on a branch", version_h=version_h("0.2.0"),
                        changelog=changelog("0.2.0", "0.1.0"))
        r.git("checkout", "-q", "main")
        r.commit("meanwhile on main", **{"x": "1\n"})
        r.git("merge", "-q", "--no-ff", "-m", "merge", "side")
        merge = r.git("rev-parse", "HEAD")
        self.assertNotEqual(merge, side)
        self.assertEqual(r.releases().find("v0.2.0"), (merge, "version.h"))


class RealHistory(unittest.TestCase):
    """The project's own releases in a clone of HEAD without tags."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="releases-clone-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.clone = os.path.join(self.tmp, "pptpd")
        subprocess.run(["git", "clone", "-q", "--no-tags", REPO, self.clone],
                       check=True, env=GIT_ENV)

    def tool(self, *args):
        env = {k: v for k, v in os.environ.items() if k != "RELEASES_REPO"}
        return subprocess.run(
            [sys.executable, os.path.join(self.clone, "regress",
                                          "releases.py")] + list(args),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=env)

    def test_announced_releases_resolve(self):
        self.assertEqual(subprocess.run(
            ["git", "-C", self.clone, "tag"], stdout=subprocess.PIPE,
            text=True).stdout, "")
        for name, sha in (("v0.1.0", V010), ("0.1.0", V010),
                          ("v0.2.0", V020)):
            p = self.tool(name)
            self.assertEqual((p.returncode, p.stdout.strip()), (0, sha),
                             "%s: %s" % (name, p.stderr))
        p = self.tool("--check")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("v0.1.0    %s  2026-11-30  (RELEASES)" % V010[:12],
                      p.stdout)
        self.assertEqual(build.resolve(self.clone, "v0.2.0"), (V020, False))

    def test_a_tag_where_there_is_one(self):
        subprocess.run(["git", "-C", self.clone, "tag", "v0.1.0", V010],
                       check=True, env=GIT_ENV)
        p = self.tool("--check")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("v0.1.0    %s  2026-11-30  (tag)" % V010[:12], p.stdout)


def main():
    return testmain.run(sys.modules[__name__], "releases")


if __name__ == "__main__":
    sys.exit(main())
