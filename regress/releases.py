#!/usr/bin/env python3
"""regress/releases.py -- the commit of every pptpd release, tags or not.

usage: regress/releases.py            list the known releases, newest first:
                                      name  commit  date  (source)
       regress/releases.py NAME       the full commit of release NAME
                                      (v0.2.0 or 0.2.0); exit 1 if unknown
       regress/releases.py --check    every release resolves to a commit of
                                      HEAD's history whose ChangeLog has it as
                                      its newest release, and tags agree
       make releases                  the list

A clone of main carries no tags, yet `make regress VERSION=v0.1.0,HEAD`
must work there.  A release name vX.Y.Z (or X.Y.Z) resolves by the first
of these rules that gives a commit:

  1. tag      the tag vX.Y.Z, when this clone has it;
  2. RELEASES a line `vX.Y.Z <commit>` in the file RELEASES at the top of
              the tree: the record of releases made before version.h moved
              with the ChangeLog (0.1.0 and 0.2.0), whose commit nothing in
              the tree can tell;
  3. version.h the first commit of HEAD's first-parent history whose
              pptpd/version.h says PPTPD_VERSION "X.Y.Z" and whose ChangeLog
              has `DATE  pptpd X.Y.Z` as its newest release line: the commit
              that made the release, when version.h and the ChangeLog are
              changed together (from 0.3.0 on; no new RELEASES line needed).

The known releases are the ChangeLog's release lines, the tags vX.Y.Z and
the RELEASES lines.  `--check` fails when a tag and a RELEASES line name
different commits, so a clone without tags builds what a tagged one does.
"""

import os
import re
import subprocess
import sys

VERSION_H = "pptpd/version.h"
CHANGELOG = "ChangeLog"
RECORD = "RELEASES"
NAME_RE = re.compile(r"v?(\d+\.\d+\.\d+)")
RELEASE_LINE_RE = re.compile(r"^(\d{4}-\d{2}-\d{2})\s+pptpd\s+(\d+\.\d+\.\d+)\s*$",
                             re.M)
VERSION_DEFINE_RE = re.compile(r'^#\s*define\s+PPTPD_VERSION\s+"([^"]*)"', re.M)


class ReleaseError(Exception):
    pass


def _git(repo, *args, check=True):
    p = subprocess.run(["git", "-C", repo] + list(args),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if check and p.returncode != 0:
        raise ReleaseError("git %s: %s" % (" ".join(args),
                                           p.stderr.decode(errors="replace")
                                           .strip()))
    return p.stdout.decode(errors="replace").strip() if p.returncode == 0 \
        else None


def version_of(name):
    """'v0.2.0' or '0.2.0' -> '0.2.0'; None for anything else."""
    m = NAME_RE.fullmatch(name.strip())
    return m.group(1) if m else None


def _key(version):
    return tuple(int(x) for x in version.split("."))


def changelog_lines(text):
    """[(date, version)] of a ChangeLog's release lines, newest (top) first."""
    return [(m.group(1), m.group(2)) for m in RELEASE_LINE_RE.finditer(text or "")]


def _show(repo, commit, path):
    return _git(repo, "show", "%s:%s" % (commit, path), check=False)


def _commit(repo, rev):
    return _git(repo, "rev-parse", "--verify", "--quiet", rev + "^{commit}",
                check=False)


def tags(repo):
    """{version: commit} of the tags vX.Y.Z in this clone."""
    out = {}
    for t in (_git(repo, "tag", "--list", "v[0-9]*") or "").split():
        v = version_of(t)
        if v and t == "v" + v:
            out[v] = _commit(repo, "refs/tags/" + t)
    return out


def record(repo):
    """{version: commit} of the RELEASES file of the working tree."""
    out = {}
    try:
        with open(os.path.join(repo, RECORD)) as f:
            text = f.read()
    except FileNotFoundError:
        return out
    for n, line in enumerate(text.splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        v = version_of(words[0])
        sha = _commit(repo, words[1]) if v and len(words) >= 2 else None
        if not sha:
            raise ReleaseError("%s:%d: want `vX.Y.Z <commit of this "
                               "history>`, got %r" % (RECORD, n, line))
        out[v] = sha
    return out


def by_version_h(repo):
    """{version: commit}: the first first-parent commit where version.h and
    the ChangeLog's newest release line say the same version."""
    out = {}
    log = _git(repo, "log", "--first-parent", "--reverse", "--format=%H",
               "HEAD", "--", VERSION_H, CHANGELOG) or ""
    for sha in log.split():
        m = VERSION_DEFINE_RE.search(_show(repo, sha, VERSION_H) or "")
        lines = changelog_lines(_show(repo, sha, CHANGELOG))
        if m and lines and lines[0][1] == m.group(1):
            out.setdefault(m.group(1), sha)
    return out


class Releases:
    def __init__(self, repo):
        self.repo = repo
        self.tags = tags(repo)
        self.record = record(repo)
        self.version_h = by_version_h(repo)
        try:
            with open(os.path.join(repo, CHANGELOG)) as f:
                self.changelog = changelog_lines(f.read())
        except FileNotFoundError:
            self.changelog = []

    def known(self):
        """Every release name, newest first."""
        vs = set(self.tags) | set(self.record) | \
            {v for _, v in self.changelog}
        return sorted(vs, key=_key, reverse=True)

    def find(self, name):
        """(commit, source) of a release name, or None."""
        v = version_of(name)
        if v is None:
            return None
        for source, table in (("tag", self.tags), ("RELEASES", self.record),
                              ("version.h", self.version_h)):
            if table.get(v):
                return table[v], source
        return None

    def resolve(self, name):
        found = self.find(name)
        if found:
            return found
        v = version_of(name)
        if v is None:
            raise ReleaseError("%r is not a release name (vX.Y.Z)" % name)
        raise ReleaseError(
            "release v%s: no tag v%s, no line in %s, and no commit whose "
            "%s and ChangeLog both say %s%s (known releases: %s)"
            % (v, v, RECORD, VERSION_H, v,
               "; a shallow clone lacks the history: git fetch --unshallow"
               if self.shallow() else "",
               ", ".join("v" + k for k in self.known()) or "none"))

    def shallow(self):
        return _git(self.repo, "rev-parse", "--is-shallow-repository",
                    check=False) == "true"

    def problems(self):
        """What --check reports: unresolvable, off-history or inconsistent
        releases."""
        out = []
        for v in self.known():
            found = self.find(v)
            if not found:
                out.append("v%s does not resolve" % v)
                continue
            sha, source = found
            if subprocess.run(["git", "-C", self.repo, "merge-base",
                               "--is-ancestor", sha, "HEAD"]).returncode != 0:
                out.append("v%s (%s, %s) is not in HEAD's history"
                           % (v, sha[:12], source))
            lines = changelog_lines(_show(self.repo, sha, CHANGELOG))
            if not lines or lines[0][1] != v:
                out.append("v%s (%s, %s): its ChangeLog's newest release is %s"
                           % (v, sha[:12], source,
                              lines[0][1] if lines else "missing"))
            if v in self.tags and v in self.record and \
                    self.tags[v] != self.record[v]:
                out.append("v%s: tag %s but %s says %s"
                           % (v, self.tags[v][:12], RECORD, self.record[v][:12]))
        return out


def listing(rel):
    rows = []
    for v in rel.known():
        found = rel.find(v)
        if found:
            sha, source = found
            date = _git(rel.repo, "log", "-1", "--format=%cs", sha)
            rows.append("v%-8s %s  %s  (%s)" % (v, sha[:12], date, source))
        else:
            rows.append("v%-8s %-12s  %-10s  (unresolved)" % (v, "-", "-"))
    return rows


def repo_root():
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.dirname(here)


def main(argv):
    repo = os.environ.get("RELEASES_REPO") or repo_root()
    if len(argv) > 1 and argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    try:
        rel = Releases(repo)
        if len(argv) == 1:
            for row in listing(rel):
                print(row)
            return 0
        if argv[1] == "--check":
            bad = rel.problems()
            for p in bad:
                print("releases: %s" % p, file=sys.stderr)
            for row in listing(rel):
                print(row)
            return 1 if bad else 0
        print(rel.resolve(argv[1])[0])
        return 0
    except ReleaseError as e:
        print("releases: %s" % e, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
