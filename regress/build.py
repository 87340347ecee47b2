"""Build phase of the regression suite: one build per version, cached.

A version spec is a git ref with optional build options, or `poptop`:

  v0.1.0                  a tag, branch or commit, built with its defaults;
                          a release name vX.Y.Z (or X.Y.Z) that is no git
                          ref here (a clone without tags) is found by
                          releases.py: RELEASES, or version.h + ChangeLog
  HEAD                    the committed HEAD (uncommitted changes are NOT
                          in it; use WORKTREE for those)
  WORKTREE                the working tree as it is now, uncommitted and
                          untracked (not ignored) files included
  HEAD+cflags=-O0 -g      extra compiler flags; -O<n> in them replaces the
                          Makefile's OPT (its default -O2), the rest goes to
                          EXTRA_CFLAGS
  HEAD+opt=-O1            the optimisation flags alone
  HEAD+plant=cpu5         the ref with regress/plants/cpu5.diff (of the
                          working tree) applied to its exported tree: a
                          planted regression, to see that the suite sees it
  HEAD+datapath=kernel    any other KEY=VALUE is a pptpd.conf line "KEY VALUE"
                          for that version's server (KEY= alone: the bare
                          keyword); the build is the same as HEAD's
  poptop                  Debian's Poptop (/usr/sbin/pptpd), as a reference
                          (conf lines only, no build options): the release's
                          own, 1.4.0 on Debian 12, 1.5.0 on Debian 13 (the
                          plan names the package version)
  plain                   no server and no tunnel: the same streams over
                          plain IP to the server's netns, the baseline of
                          the whole VM's CPU (report: CPU per MB added)

Options follow the ref, each as +KEY=VALUE and in any number; a '+' starts
an option only where a KEY= follows it, so "feature+x" is a ref, and so is
the value of cflags up to the next "+KEY=".

Each ref's tree is exported with `git archive` into regress/build/<key>/
(<key> = the commit's tree, so that commits with the same files share a
build, plus a hash of the make variables when there are any) and
built there with `make pptpd/pptpd` (and `make plugin` where the ref has
plugin/, the pppd plugin its pptpd.conf then names); the user's tree, index and worktree
list are never touched. A finished build leaves `.regress-ok`, so the next
run with the same commit and flags reuses it.

With REGRESS_DEBIAN=N (12 or 13) on a machine of the other release, every
build runs chrooted in a Debian N root (scripts/vm/mkroot, scripts/vm/
in-root), against that release's pppd and libraries, in folders of their
own (<key>-debN), and `poptop` is that root's package.
"""

import fcntl
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import tempfile

import releases

POPTOP = "/usr/sbin/pptpd"
# The pseudo-versions: no git ref of these names is ever looked up.
PSEUDO = ("poptop", "plain")
POPTOP_CTRL = "/usr/sbin/pptpctrl"
# Options that change the build; every other KEY=VALUE is a pptpd.conf line.
OPTION_KEYS = ("cflags", "opt", "plant")
PLANTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plants")
CONF_KEY = r"[A-Za-z][A-Za-z0-9_-]*"
# Variables of the caller's environment that would change what a ref's
# Makefile builds: never let them leak into a measured build.
SCRUB_ENV = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "OPT",
             "CFLAGS", "EXTRA_CFLAGS", "LDFLAGS", "SANITIZE", "GNUMAKEFLAGS")


# Bump when what a build produces changes: older cached builds are redone.
RECIPE = 2


class BuildError(Exception):
    pass


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def parse_spec(spec):
    """'HEAD+cflags=-O0+datapath=kernel' ->
    ('HEAD', {'cflags': '-O0', 'datapath': 'kernel'}), in spec order."""
    spec = spec.strip()
    parts = re.split(r"\+(?=%s=)" % CONF_KEY, spec)
    ref, opts = parts[0].strip(), {}
    if not ref:
        raise BuildError("empty ref in %r" % spec)
    for p in parts[1:]:
        k, v = p.split("=", 1)
        if k in opts:
            raise BuildError("%s given twice in %r" % (k, spec))
        opts[k] = v.strip()
    return ref, opts


def build_opts(opts):
    """The options of a spec that change the build."""
    return {k: v for k, v in opts.items() if k in OPTION_KEYS}


def conf_lines(opts):
    """The options of a spec that are pptpd.conf lines, in spec order:
    {'datapath': 'kernel', 'logwtmp': ''} -> ['datapath kernel', 'logwtmp']."""
    return [(k + " " + v) if v else k
            for k, v in opts.items() if k not in OPTION_KEYS]


def plant_path(opts):
    """The plant diff a spec names (+plant=NAME: regress/plants/NAME.diff),
    or None."""
    name = opts.get("plant")
    if name is None:
        return None
    if not re.fullmatch(r"[A-Za-z0-9._-]+", name) or name.startswith("."):
        raise BuildError("plant %r: a file name in regress/plants/" % name)
    path = os.path.join(PLANTS, name if name.endswith(".diff")
                        else name + ".diff")
    if not os.path.isfile(path):
        raise BuildError("plant %r: no %s" % (name, path))
    return path


def make_vars(opts):
    """Make variables for a spec's options: {'OPT': ..., 'EXTRA_CFLAGS': ...}.
    Options that are no build options are none of make's business."""
    opts = build_opts(opts)
    opts.pop("plant", None)
    out = {}
    flags = shlex.split(opts.get("cflags", ""))
    optflags = [f for f in flags if re.fullmatch(r"-O[0-3sgz]?|-Ofast", f)]
    rest = [f for f in flags if f not in optflags]
    if optflags:
        out["OPT"] = optflags[-1]
    if "opt" in opts:
        out["OPT"] = opts["opt"]
    if rest:
        out["EXTRA_CFLAGS"] = " ".join(rest)
    return out


def parse_versions(text):
    """Split VERSION=a,b,c into specs; at least two, labels made unique."""
    specs = [s.strip() for s in text.split(",") if s.strip()]
    if len(specs) < 2:
        raise BuildError("VERSION needs at least two versions, e.g. "
                         "VERSION=v0.1.0,HEAD (got %r)" % text)
    labels = []
    seen = {}
    for s in specs:
        seen[s] = seen.get(s, 0) + 1
        labels.append(s if seen[s] == 1 else "%s#%d" % (s, seen[s]))
    return list(zip(specs, labels))


def file_key(label):
    return re.sub(r"[^A-Za-z0-9._-]+", "_", label).strip("_") or "v"


def git(repo, *args, env=None, input=None):
    p = subprocess.run(["git", "-C", repo] + list(args),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=env, input=input)
    if p.returncode != 0:
        raise BuildError("git %s: %s" % (" ".join(args),
                                         p.stderr.decode(errors="replace")
                                         .strip()))
    return p.stdout.decode().strip()


def snapshot_worktree(repo):
    """A commit of the working tree as it is (tracked changes and untracked,
    not ignored, files) made with a throw-away index: the user's index,
    stash and branches are left alone."""
    head = git(repo, "rev-parse", "--verify", "HEAD^{commit}")
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, GIT_INDEX_FILE=os.path.join(tmp, "index"))
        git(repo, "read-tree", head, env=env)
        git(repo, "add", "-A", ".", env=env)
        tree = git(repo, "write-tree", env=env)
        if tree == git(repo, "rev-parse", head + "^{tree}"):
            return head, False
        env.update(GIT_AUTHOR_NAME="regress", GIT_AUTHOR_EMAIL="regress@invalid",
                   GIT_COMMITTER_NAME="regress",
                   GIT_COMMITTER_EMAIL="regress@invalid",
                   GIT_AUTHOR_DATE="2000-01-01T00:00:00Z",
                   GIT_COMMITTER_DATE="2000-01-01T00:00:00Z")
        sha = git(repo, "commit-tree", tree, "-p", head, "-m",
                  "regress: snapshot of the working tree", env=env)
        return sha, True


def resolve(repo, ref):
    """(commit, dirty) of a ref.  A git ref wins (a tag vX.Y.Z where the
    clone has it); a release name that is none is looked up by releases.py,
    so VERSION=v0.1.0,HEAD works in a clone without tags."""
    if ref == "WORKTREE":
        return snapshot_worktree(repo)
    try:
        return git(repo, "rev-parse", "--verify", "--quiet",
                   ref + "^{commit}"), False
    except BuildError:
        pass
    if releases.version_of(ref):
        try:
            return releases.Releases(repo).resolve(ref)[0], False
        except releases.ReleaseError as e:
            raise BuildError(str(e)) from None
    raise BuildError("unknown git ref %r (a tag, branch, commit, HEAD, "
                     "WORKTREE, release vX.Y.Z or poptop)" % ref)


RELEASES_BY_NUMBER = {"12": "bookworm", "13": "trixie"}


def release_root(repo, number):
    """The Debian root to build and measure in for REGRESS_DEBIAN=number,
    or None for this machine's own release. Made once by scripts/vm/mkroot
    (cached); raises BuildError when it cannot be."""
    if not number:
        return None
    if number not in RELEASES_BY_NUMBER:
        raise BuildError("REGRESS_DEBIAN=%s: only %s are known"
                         % (number, " and ".join(sorted(RELEASES_BY_NUMBER))))
    here = ""
    for line in _read("/etc/os-release").splitlines():
        if line.startswith("VERSION_ID="):
            here = line.split("=", 1)[1].strip('"')
    if here == number:
        return None
    p = subprocess.run([os.path.join(repo, "scripts", "vm", "mkroot"),
                        RELEASES_BY_NUMBER[number]], stdout=subprocess.PIPE,
                       stdin=subprocess.DEVNULL, universal_newlines=True)
    root = p.stdout.strip()
    if p.returncode != 0 or not os.path.isdir(root):
        raise BuildError("no Debian %s root (scripts/vm/mkroot %s failed)"
                         % (number, RELEASES_BY_NUMBER[number]))
    return root


def poptop_version(root):
    """The version of Debian's pptpd package in root (or this machine)."""
    p = subprocess.run(["dpkg-query", "--admindir=%s/var/lib/dpkg" % (root or ""),
                        "-W", "-f=${Version}", "pptpd"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                       universal_newlines=True)
    return p.stdout.strip() if p.returncode == 0 else "?"


def build_one(repo, build_root, spec, label, log=print, jobs=2, root=None,
              root_tag=""):
    """Build one version; returns its plan entry (how to run its server).
    root: a Debian root of another release to build in (release_root),
    root_tag its short name for the build folder."""
    ref, opts = parse_spec(spec)
    if ref.lower() == "plain":
        if opts:
            raise BuildError("plain takes no options (%s)" % spec)
        return {"label": label, "key": file_key(label), "spec": spec,
                "kind": "plain", "commit": None, "server": None,
                "conf": [], "build": "none: no server, no tunnel"}
    if ref.lower() == "poptop":
        if build_opts(opts):
            raise BuildError("poptop takes no build options (%s)" % spec)
        for f in (POPTOP, POPTOP_CTRL):
            if not os.access((root or "") + f, os.X_OK):
                raise BuildError("%s%s not found: install Debian's pptpd "
                                 "package for the poptop reference"
                                 % (root or "", f))
        return {"label": label, "key": file_key(label), "spec": spec,
                "kind": "poptop", "commit": None, "server": [POPTOP],
                "conf": conf_lines(opts),
                "build": "Debian pptpd package %s" % poptop_version(root)}
    sha, dirty = resolve(repo, ref)
    mv = make_vars(opts)
    plant = plant_path(opts)
    diff = b""
    if plant:
        with open(plant, "rb") as f:
            diff = f.read()
    # Keyed by the commit's tree, not the commit: commits with the same
    # files (an empty commit, a revert back to a known tree) share one
    # build, which regress/bisect's scratch history relies on.
    tree = git(repo, "rev-parse", sha + "^{tree}")
    key = tree[:12]
    if mv or plant:
        key += "-" + hashlib.sha1(repr(sorted(mv.items())).encode() +
                                  diff).hexdigest()[:8]
    if root:
        key += "-" + root_tag
    d = os.path.join(build_root, key)
    ok = os.path.join(d, ".regress-ok")
    binary = os.path.join(d, "pptpd", "pptpd")
    margs = ["%s=%s" % kv for kv in sorted(mv.items())]
    logf = os.path.join(build_root, key + ".log")
    stamp = "recipe %d %s %s\n" % (RECIPE, tree, " ".join(margs))
    if plant:
        stamp = stamp[:-1] + " plant %s\n" % hashlib.sha1(diff).hexdigest()
    os.makedirs(build_root, exist_ok=True)
    # Two runs at once (CI's lanes, a calibration beside an A-vs-A run)
    # may want the same build: one builds, the other waits for it and
    # finds it cached, instead of both writing the one folder.
    with open(os.path.join(build_root, key + ".lock"), "w") as lockf:
        fcntl.flock(lockf, fcntl.LOCK_EX)
        if os.access(binary, os.X_OK) and _read(ok) == stamp:
            log("build: %-24s %s (cached)" % (label, key))
        else:
            log("build: %-24s %s%s %s%s" % (
                label, sha[:12], " (working tree)" if dirty else "",
                " ".join(margs), " plant " + os.path.basename(plant)
                if plant else ""))
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
            with open(logf, "wb") as lf:
                arch = subprocess.Popen(["git", "-C", repo, "archive", sha],
                                        stdout=subprocess.PIPE, stderr=lf)
                tar = subprocess.run(["tar", "-x", "-C", d], stdin=arch.stdout,
                                     stderr=lf)
                arch.stdout.close()
                if arch.wait() != 0 or tar.returncode != 0:
                    raise BuildError("%s: exporting %s failed (see %s)"
                                     % (label, sha[:12], logf))
                if plant:
                    # git apply outside any repository is a plain patch: the
                    # ceiling keeps it from finding the clone around build/.
                    lf.write(("$ git apply %s\n" % plant).encode())
                    lf.flush()
                    pr = subprocess.run(
                        ["git", "apply", "-"], cwd=d, input=diff, stdout=lf,
                        stderr=subprocess.STDOUT, env=dict(
                            os.environ,
                            GIT_CEILING_DIRECTORIES=os.path.dirname(
                                os.path.abspath(d))))
                    if pr.returncode != 0:
                        raise BuildError("%s: plant %s does not apply to %s "
                                         "(see %s)" % (label, plant, sha[:12],
                                                       logf))
                env = {k: v for k, v in os.environ.items() if k not in SCRUB_ENV}
                # The daemon, and the pppd plugin it gives every pppd where
                # the ref has one (the real stack: pptpd.conf `plugin`).
                targets = ["pptpd/pptpd"]
                if os.path.exists(os.path.join(d, "plugin", "Makefile")):
                    targets.append("plugin")
                for t in targets:
                    cmd = ["make", "-C", d, "-j%d" % jobs, t] + margs
                    if root:
                        cmd = [os.path.join(repo, "scripts", "vm", "in-root"),
                               root, "--tree", d, "--"] + cmd
                    lf.write(("$ %s\n" % " ".join(shlex.quote(c) for c in cmd))
                             .encode())
                    lf.flush()
                    p = subprocess.run(cmd, stdout=lf, stderr=subprocess.STDOUT,
                                       env=env, stdin=subprocess.DEVNULL)
                    if p.returncode != 0:
                        break
            if p.returncode != 0 or not os.access(binary, os.X_OK):
                with open(logf, errors="replace") as f:
                    tail = "\n".join("    " + x for x in
                                     f.read().splitlines()[-25:])
                raise BuildError("%s (%s) does not build: make exited %d; "
                                 "last lines of %s:\n%s"
                                 % (label, sha[:12], p.returncode, logf, tail))
            with open(ok, "w") as f:
                f.write(stamp)
    conf = []
    so = os.path.join(d, "plugin", "pptpd-policy.so")
    if os.path.exists(so):
        conf.append("plugin " + so)
    conf += conf_lines(opts)
    return {"label": label, "key": file_key(label), "spec": spec,
            "kind": "ours", "commit": sha, "dirty": dirty, "make": margs,
            "plant": os.path.basename(plant) if plant else None,
            "server": [binary], "conf": conf, "build": key}
