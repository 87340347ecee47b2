"""Analysis phase: raw.json -> comparisons, terminal table, CSV, PNG charts."""

import csv
import json
import os
import shutil
import subprocess
import sys

import stats
import streams as streamlib

PING = {"name": "ping", "kind": "ping", "direction": "",
        "description": "ICMP echo through the idle tunnel"}
DIAL = {"name": "dial", "kind": "dial", "direction": "",
        "description": "server start until the tunnel is up at both ends"}


class ReportError(Exception):
    """A results folder that cannot be reported on (exit status 2)."""


class Outcome:
    """What a report concludes, and the exit status of regress/regress:
    0 no regression, 1 regression, 2 could not measure (`failed` says
    why: the run failed or was cut short)."""

    def __init__(self, rows=None):
        self.rows = rows or []
        self.regressions = 0
        self.failed = None
        # (version, stream, metric label, rounds that would settle it)
        self.inconclusive = []
        # compared versions none of whose throughput and CPU rows was
        # decided (ROUNDS=1, or everything too noisy)
        self.undecided = []

    @property
    def status(self):
        """2 could not measure, 1 regression, 3 inconclusive (a metric
        points to a regression the rounds cannot show yet, or a version
        has no throughput or CPU row decided), 0 no regression."""
        if self.failed:
            return 2
        if self.regressions:
            return 1
        return 3 if self.inconclusive or self.undecided else 0


def load(results_dir):
    path = os.path.join(results_dir, "raw.json")
    try:
        with open(path) as f:
            raw = json.load(f)
    except OSError as e:
        raise ReportError("no results in %s: %s" % (results_dir,
                                                    e.strerror or e))
    except ValueError as e:
        raise ReportError("%s is not JSON: %s" % (path, e))
    if not isinstance(raw, dict) or not isinstance(raw.get("plan"), dict) \
            or not isinstance(raw.get("records"), list):
        raise ReportError("%s has no plan or no records" % path)
    return raw


def failure(raw):
    """Why the run of `raw` cannot give a verdict, or None: measure.py
    recorded an error (a dial, a stream or the bed failed), or a version
    has fewer sessions than the plan's rounds (a run cut short). What was
    measured is still shown, but no exit status may rest on it."""
    if raw.get("error"):
        return "the run failed: %s" % raw["error"]
    plan = raw["plan"]
    want = plan.get("rounds")
    if not want or "sessions" not in raw:
        return None
    got = {}
    for r in raw["sessions"]:
        if not r.get("warmup"):
            got[r.get("version")] = got.get(r.get("version"), 0) + 1
    short = ["%s %d" % (v["label"], got.get(v["label"], 0))
             for v in plan.get("versions", [])
             if got.get(v["label"], 0) < want]
    if short:
        return "the run was cut short: sessions of %d round(s) planned, " \
            "measured: %s" % (want, ", ".join(short))
    return None


def plain_labels(plan):
    """Labels of the `plain` pseudo-versions (no server, no tunnel)."""
    return [v["label"] for v in plan["versions"] if v.get("kind") == "plain"]


def add_baseline(raw):
    """With a `plain` version in the run: give every record of a server
    version `cpu_per_mb_added`, its guest_cpu_per_mb minus plain's for the
    same stream in the same round (rounds interleave, so that is the
    baseline nearest in time; plain's median over the rounds where that
    round has none). Records are changed in place; returns how many got
    the metric."""
    plains = plain_labels(raw["plan"])
    if not plains:
        return 0
    ref = {}      # stream -> {round: plain's guest CPU per MB}
    for r in raw["records"]:
        v = r["metrics"].get("guest_cpu_per_mb")
        if r["version"] == plains[0] and v is not None:
            ref.setdefault(r["stream"], {})[r["round"]] = v
    n = 0
    for r in raw["records"]:
        v = r["metrics"].get("guest_cpu_per_mb")
        if r["version"] in plains or v is None or r["stream"] not in ref:
            continue
        by_round = ref[r["stream"]]
        base = by_round.get(r["round"])
        if base is None:
            base = stats.median(list(by_round.values()))
        r["metrics"]["cpu_per_mb_added"] = v - base
        n += 1
    return n


def host_loads(raw):
    """{(stream, version): {round: the host's load besides the bed, in
    cores}} of the slots that have it (hostbusy.py; none before it)."""
    out = {}
    for r in raw["records"]:
        other = (r.get("host_load") or {}).get("other_cores")
        if other is not None:
            out.setdefault((r["stream"], r["version"]), {})[r["round"]] = \
                other
    return out


def host_busy(row, base, loads):
    """A row of a stream whose client runs on the host: each version
    whose slot and the baseline's, in some round, saw the host's other
    load more than stats.HOST_UNEQUAL_CORES apart is not voted there
    (HOST_BUSY; `host_pairs`: the rounds' (base, version) loads). Rows
    without the loads (raw.json from before) keep their verdict."""
    name = row["stream"]["name"]
    b = loads.get((name, base), {})
    for lab, c in row["cmp"].items():
        if lab == base or c["verdict"] == stats.NO_TUNNEL:
            continue
        o = loads.get((name, lab), {})
        pairs = [(b.get(r), o.get(r)) for r in sorted(set(b) | set(o))]
        if stats.host_unequal(pairs):
            c.update(verdict=stats.HOST_BUSY, noisy=False,
                     host_pairs=[p for p in pairs if None not in p],
                     reason="the host's load besides the bed differed by "
                     "more than %g core in a round" %
                     stats.HOST_UNEQUAL_CORES)


def analyse(raw, threshold, cpu_threshold=stats.CPU_THRESHOLD):
    """Per stream and metric: the rounds of every version and the comparison
    of each version with the first (server CPU per MB against
    `cpu_threshold`, the rest against `threshold`). Returns a list of
    rows. A `plain` version is shown last and compared with nothing
    (verdict NO_TUNNEL); the metrics that need it (Metric.with_plain) only
    show with it. A stream whose client runs on the host is not voted in
    a version whose slots saw unequal host load (host_busy)."""
    plan = raw["plan"]
    plains = plain_labels(plan)
    labels = [v["label"] for v in plan["versions"]
              if v["label"] not in plains] + plains
    base = labels[0]
    loads = host_loads(raw)
    values = {}   # (stream, metric, label) -> [per-round values]
    for r in raw["records"]:
        for k, v in r["metrics"].items():
            values.setdefault((r["stream"], k, r["version"]), []).append(
                (r["round"], v))
    # The dial-in is the session's, not a stream's (measure.py: up_s),
    # and so is a first dial that failed (tries 2: it worked on retry).
    for r in raw.get("sessions", []):
        if not r.get("warmup") and r.get("up_s") is not None:
            values.setdefault(("dial", "up_s", r["version"]), []).append(
                (r["round"], r["up_s"]))
        if not r.get("warmup") and r.get("tries"):
            values.setdefault(("dial", "dial_failed", r["version"]),
                              []).append((r["round"], r["tries"] - 1))
    rows = []
    for s in [DIAL, PING] + plan["streams"]:
        for m in stats.METRICS:
            if s["kind"] not in m.kinds or (m.with_plain and not plains):
                continue
            per, by_round = {}, {}
            for lab in labels:
                got = sorted(values.get((s["name"], m.key, lab), []))
                per[lab] = [v for _, v in got]
                by_round[lab] = dict(got)
            if not any(any(x is not None for x in xs) for xs in per.values()):
                continue
            # Round for round (None where a version has no value), so that
            # round i of each version, run side by side, is compared.
            rounds = sorted({r for lab in labels for r in by_round[lab]})
            aligned = {lab: [by_round[lab].get(r) for r in rounds]
                       for lab in labels}
            row = {"stream": s, "metric": m, "values": per, "cmp": {}}
            for lab in labels:
                row["cmp"][lab] = stats.compare(
                    aligned[base], aligned[lab], m.better,
                    cpu_threshold if m.key == "cpu_per_mb" else threshold,
                    m.floor,
                    noise=(s.get("noise") or {}).get(m.key, 0.0),
                    paired=True)
                if lab in plains:
                    row["cmp"][lab].update(verdict=stats.NO_TUNNEL,
                                           change=None, base_median=None,
                                           noisy=False, p=None)
            if m.key == "dial_failed":
                dial_verdicts(row, base)
            if streamlib.client_on_host(s):
                host_busy(row, base, loads)
            rows.append(row)
    return labels, rows


def dial_verdicts(row, base):
    """The `failed first dials` row: per version, how many sessions'
    first dial failed (measure.py retried it once, so the run went on).
    Not a statistic: on this bed (fixed configs, an idle link, the
    guest's deterministic clock) a dial never fails by chance, and a
    version that fails one dial in two would still pass 3 rounds with
    retries 42 % of the time. So any failed first dial of a compared
    version is a regression; the baseline's are shown (and said after
    the table) but are not the compared versions' fault."""
    total = {lab: sum(x for x in xs if x) for lab, xs in
             row["values"].items()}
    for lab, c in row["cmp"].items():
        if c["verdict"] == stats.NO_TUNNEL:
            continue
        bad = total.get(lab, 0)
        c.update(median=float(bad), base_median=float(total.get(base, 0)),
                 spread=None, base_spread=None, change=None, noisy=False,
                 p=None, verdict=stats.REGRESSION if bad and lab != base
                 else stats.SAME,
                 reason="a first dial failed" if bad else "every first "
                 "dial worked")


def dial_lines(raw, labels):
    """One line per version: sessions, dial tries, failed first dials
    (and the first failure's message)."""
    out = []
    for lab in labels:
        ss = [r for r in raw.get("sessions", []) if r.get("version") == lab
              and not r.get("warmup") and r.get("tries")]
        if not ss:
            continue
        failed = [r for r in ss if r["tries"] > 1]
        ln = "dials: %s %d session(s), %d tries, %d failed first dial(s)" % (
            lab, len(ss), sum(r["tries"] for r in ss), len(failed))
        if failed:
            ln += " (round %s: %s)%s" % (
                failed[0].get("round"),
                (failed[0].get("first_failure") or "?")[:160],
                " -- the baseline's: no verdict on it" if lab == labels[0]
                else "")
        out.append(ln)
    return out


# ----------------------------------------------------------------- terminal
class Style:
    def __init__(self, enable):
        self.on = enable

    def __call__(self, text, code):
        return "\033[%sm%s\033[0m" % (code, text) if self.on else text


def _cell(metric, cmp):
    med = cmp["median"]
    if med is None:
        return "-"
    sp = cmp["spread"]
    s = metric.format(med)
    if sp is not None and sp != float("inf"):
        s += " ±%.1f%%" % sp
    return s


def _change(cmp):
    c = cmp["change"]
    if c is None:
        if cmp["median"] is not None and cmp["base_median"] == 0 and \
                cmp["median"] != 0:
            return "new"
        return ""
    return "%+.1f%%" % c


def table(labels, rows, out=sys.stdout, color=None):
    if color is None:
        color = out.isatty() and not os.environ.get("NO_COLOR")
    st = Style(color)
    head = ["stream / metric", "unit"] + [labels[0]]
    for lab in labels[1:]:
        head += [lab, "change", "verdict"]
    lines = []
    last = None
    for row in rows:
        s, m = row["stream"], row["metric"]
        if s["name"] != last:
            last = s["name"]
            desc = s["description"] if s["kind"] in ("ping", "dial") else \
                streamlib.describe(s)
            lines.append(("group", "%s  (%s)" % (s["name"], desc)))
        name = m.label + (" *" if m.key == "cpu_per_mb" else "")
        cells = ["  " + name, m.unit, _cell(m, row["cmp"][labels[0]])]
        marks = []
        for lab in labels[1:]:
            c = row["cmp"][lab]
            verdict = verdict_text(c)
            cells += [_cell(m, c), _change(c), verdict]
            marks.append(c["verdict"])
        lines.append(("row", cells, marks, m.key == "cpu_per_mb"))
    widths = [len(h) for h in head]
    for ln in lines:
        if ln[0] == "row":
            for i, c in enumerate(ln[1]):
                widths[i] = max(widths[i], len(c))

    def fmt(cells):
        parts = []
        for i, c in enumerate(cells):
            # name, unit: left; values and changes: right; verdicts: left
            verdict = i > 2 and (i - 2) % 3 == 0
            left = i < 2 or verdict
            parts.append(c.ljust(widths[i]) if left else c.rjust(widths[i]))
        return "  ".join(parts).rstrip()

    w = len(fmt(head))
    print(st(fmt(head), "1"), file=out)
    print("-" * w, file=out)
    for ln in lines:
        if ln[0] == "group":
            print(st(ln[1], "1"), file=out)
            continue
        _, cells, marks, bold = ln
        text = fmt(cells)
        if "regression" in marks:
            text = st(text, "31;1")
        elif stats.INCONCLUSIVE in marks:
            text = st(text, "33;1")
        elif "improvement" in marks:
            text = st(text, "32")
        elif bold:
            text = st(text, "1")
        print(text, file=out)
    print("-" * w, file=out)


def _rounds(c):
    if c.get("rounds"):
        return "%d rounds" % c["rounds"]
    return "more than %d rounds" % max(stats.MAX_ROUNDS, 2 * len(
        c.get("pairs") or [])) if len(c.get("pairs") or []) > 1 else \
        "more rounds"


def verdict_text(c):
    """The verdict cell: the verdict, with the rounds that would settle an
    undecided one; `?` only for a pooled comparison's noisy change."""
    v = c["verdict"]
    if v == stats.HOST_BUSY:
        return v
    if v in (stats.INCONCLUSIVE, stats.TOO_NOISY):
        return "%s (%s)" % (v, _rounds(c).replace("more than ", ">")
                            .replace(" rounds", "").replace("more", "?"))
    return v + ("?" if c["noisy"] else "")


def _ci(c):
    if not c.get("ci"):
        return ""
    return ", 95 %% interval %+.1f .. %+.1f %%" % tuple(c["ci"])


def verdict_lines(labels, rows):
    """Summary sentences: every regression, improvement and inconclusive
    metric, and per version the metrics too noisy to vote and the streams
    not voted for the host's unequal load."""
    out = []
    for lab in labels[1:]:
        noisy = []
        busy = {}     # stream -> the rounds' (base, lab) host loads
        for row in rows:
            c = row["cmp"][lab]
            m = row["metric"]
            what = "%s %s" % (row["stream"]["name"], m.label)
            if c["verdict"] == stats.HOST_BUSY:
                busy.setdefault(row["stream"]["name"], c["host_pairs"])
            if c["verdict"] == stats.TOO_NOISY:
                noisy.append("%s (%s)" % (what, _rounds(c)))
            if c["verdict"] == stats.INCONCLUSIVE:
                out.append((c["verdict"], "%s INCONCLUSIVE: %s %s -> %s %s "
                            "(%s%s): %s would settle it" % (
                                lab, what, m.format(c["base_median"]),
                                m.format(c["median"]), m.unit,
                                _change(c) or "changed", _ci(c),
                                _rounds(c))))
            if c["verdict"] not in (stats.REGRESSION, stats.IMPROVEMENT):
                continue
            out.append((c["verdict"], "%s %s: %s %s -> %s %s (%s%s)" % (
                lab, c["verdict"].upper(), what,
                m.format(c["base_median"]), m.format(c["median"]), m.unit,
                _change(c) or "changed", _ci(c))))
        if noisy:
            out.append((stats.TOO_NOISY, "%s too noisy to vote on "
                        "(reported, not voted; the rounds that would "
                        "resolve each): %s" % (lab, "; ".join(noisy))))
        if busy:
            out.append((stats.HOST_BUSY, "%s %s (reported, not voted; the "
                        "host's load besides the bed per round, %s / %s, "
                        "in cores, more than %g core apart in a round): "
                        "%s" % (
                            lab, stats.HOST_BUSY, labels[0], lab,
                            stats.HOST_UNEQUAL_CORES, "; ".join(
                                "%s %s" % (name, " ".join(
                                    "%.2f/%.2f" % p for p in pairs))
                                for name, pairs in busy.items()))))
    return out


def host_load_lines(raw, labels):
    """Per version, the host's load besides the bed over its slots: median
    and range in cores, and apart on the streams whose client runs on the
    host (the ones it reaches). Nothing for a raw.json without it."""
    streams = {s["name"]: s for s in raw["plan"].get("streams", [])}
    out, ncpu = [], set()
    for lab in labels:
        every, host = [], []
        for r in raw["records"]:
            h = r.get("host_load") or {}
            if r["version"] != lab or h.get("other_cores") is None:
                continue
            ncpu.add(h.get("ncpu"))
            every.append(h["other_cores"])
            if streamlib.client_on_host(streams.get(r["stream"], {})):
                host.append(h["other_cores"])
        if every:
            out.append("  %s %s over %d slot(s)%s" % (
                lab, _load_range(every), len(every),
                "; on host-client streams %s" %
                _load_range(host) if host else ""))
    if not out:
        return []
    return ["host load besides the bed (cores busy, median and range; %s "
            "CPUs):" % "/".join(str(n) for n in sorted(ncpu, key=str))] + out


def _load_range(xs):
    return "%.2f (%.2f-%.2f)" % (stats.median(xs), min(xs), max(xs))


def undecided_versions(labels, rows, plains=()):
    """Compared versions none of whose throughput and server CPU rows got
    a verdict (regression, improvement or same): a run that decided
    nothing about them cannot say "no regression" (ROUNDS=1)."""
    out = []
    for lab in labels[1:]:
        if lab in plains:
            continue
        key = [row["cmp"][lab]["verdict"] for row in rows
               if row["metric"].key in ("throughput", "cpu_per_mb")]
        if key and not any(v in (stats.REGRESSION, stats.IMPROVEMENT,
                                 stats.SAME) for v in key):
            out.append(lab)
    return out


def max_spread(labels, rows, metrics=("throughput", "cpu_per_mb"),
               declared=True):
    """Largest round-to-round spread of the key metrics (the suite's noise);
    declared=False skips the metrics a stream file declares noisy."""
    best = None
    for row in rows:
        if row["metric"].key not in metrics:
            continue
        if not declared and (row["stream"].get("noise") or {}).get(
                row["metric"].key):
            continue
        for lab in labels:
            sp = row["cmp"][lab]["spread"]
            if sp is not None and sp != float("inf") and \
                    (best is None or sp > best[0]):
                best = (sp, row["stream"]["name"], row["metric"].label, lab)
    return best


# ----------------------------------------------------------------- files
def read_summary(results_dir):
    """summary.csv of a finished run, as write_csv wrote it: a dict per
    row; None when the folder has none (the run failed before its
    report). For regress/expect, regress/bisect and regress/calibrate."""
    path = os.path.join(results_dir, "summary.csv")
    if not os.path.exists(path):
        return None
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def write_csv(results_dir, raw, labels, rows):
    summ = os.path.join(results_dir, "summary.csv")
    with open(summ, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["stream", "kind", "direction", "metric", "unit", "better",
                    "version", "rounds", "median", "min", "max", "spread_pct",
                    "change_pct", "verdict", "noisy", "p_value", "values",
                    "ci_low_pct", "ci_high_pct", "rounds_to_resolve"])
        for row in rows:
            s, m = row["stream"], row["metric"]
            for lab in labels:
                xs = [x for x in row["values"][lab] if x is not None]
                c = row["cmp"][lab]
                w.writerow([s["name"], s["kind"], s.get("direction", ""),
                            m.key, m.unit, m.better, lab, len(xs),
                            _num(c["median"]), _num(min(xs) if xs else None),
                            _num(max(xs) if xs else None), _num(c["spread"]),
                            _num(c["change"]) if lab != labels[0] else "",
                            c["verdict"] if lab != labels[0] else "baseline",
                            int(c["noisy"]), _num(c["p"]),
                            ";".join(_num(x) for x in xs)] +
                           ([_num(x) for x in c["ci"]] if c.get("ci") and
                            lab != labels[0] else ["", ""]) +
                           [_num(c.get("rounds")) if lab != labels[0]
                            else ""])
    rounds = os.path.join(results_dir, "rounds.csv")
    with open(rounds, "w", newline="") as f:
        w = csv.writer(f)
        keys = [m.key for m in stats.METRICS]
        w.writerow(["round", "version", "stream", "kind"] + keys +
                   ["server_cpu_s", "bytes", "vm_busy_pct",
                    "host_other_cores"])
        for r in raw["records"]:
            d = r.get("detail", {})
            w.writerow([r["round"], r["version"], r["stream"], r["kind"]] +
                       [_num(r["metrics"].get(k)) for k in keys] +
                       [_num(d.get("server_cpu_s")), d.get("bytes", ""),
                        _num(d.get("vm_busy_pct")),
                        _num((r.get("host_load") or {}).get(
                            "other_cores"))])
    return summ, rounds


def _num(x):
    if x is None:
        return ""
    if isinstance(x, float):
        return "%.6g" % x
    return str(x)


CHART_METRICS = {"udp": ("throughput", "cpu_per_mb", "cpu_per_mb_added",
                         "loss"),
                 "tcp": ("throughput", "cpu_per_mb", "cpu_per_mb_added",
                         "retrans"),
                 "ping": ("rtt",), "dial": ("up_s",)}


def charts(results_dir, labels, rows, log=print):
    """One PNG per stream: a panel per key metric, a bar per version (the
    median) with the range of the rounds and each round as a point."""
    gp = shutil.which("gnuplot")
    if not gp:
        log("report: gnuplot not found, no charts (apt-get install "
            "gnuplot-nox)")
        return []
    cdir = os.path.join(results_dir, "charts")
    os.makedirs(cdir, exist_ok=True)
    by_stream = {}
    for row in rows:
        by_stream.setdefault(row["stream"]["name"], []).append(row)
    made = []
    for name, srows in by_stream.items():
        s = srows[0]["stream"]
        want = [r for r in srows if r["metric"].key in CHART_METRICS[s["kind"]]]
        if not want:
            continue
        base = os.path.join(cdir, name)
        script = ["set terminal pngcairo noenhanced size %d,380 font 'sans,9'"
                  % (330 * len(want) + 40),
                  "set output '%s.png'" % base,
                  "set multiplot layout 1,%d title \"%s\"" % (
                      len(want), _gq("%s: %s" % (name, streamlib.describe(s)
                                                 if s["kind"] not in ("ping", "dial")
                                                 else s["description"]))),
                  "set style fill solid 0.35 border -1",
                  "set boxwidth 0.6", "set grid ytics", "set key off",
                  "set xtics rotate by -20", "set offsets 0.5,0.5,0,0",
                  "set yrange [0:*]"]
        for i, row in enumerate(want):
            m = row["metric"]
            dat = "%s.%s.dat" % (base, m.key)
            with open(dat, "w") as f:
                f.write("# x label median min max\n")
                for x, lab in enumerate(labels):
                    xs = [v for v in row["values"][lab] if v is not None]
                    if not xs:
                        continue
                    f.write("%d \"%s\" %g %g %g\n" % (
                        x, lab.replace('"', "'"), stats.median(xs), min(xs),
                        max(xs)))
                f.write("\n\n# x value (one line per round)\n")
                for x, lab in enumerate(labels):
                    for v in row["values"][lab]:
                        if v is not None:
                            f.write("%d %g\n" % (x, v))
            title = "%s (%s)%s" % (m.label, m.unit,
                                   ", lower is better" if m.better ==
                                   stats.LOWER else ", higher is better")
            script += [
                "set title \"%s\"" % _gq(title),
                "plot '%s' index 0 using 1:3:xtic(2) with boxes lc rgb "
                "'#4a7ebb', '' index 0 using 1:3:4:5 with yerrorbars lc "
                "rgb 'black' pt -1, '' index 1 using 1:2 with points pt 7 "
                "ps 0.6 lc rgb '#c0392b'" % dat]
        script.append("unset multiplot")
        gpf = base + ".gp"
        with open(gpf, "w") as f:
            f.write("\n".join(script) + "\n")
        p = subprocess.run([gp, gpf], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0:
            log("report: gnuplot failed for %s: %s" % (name, p.stdout[-300:]))
            continue
        made.append(base + ".png")
    return made


def _gq(text):
    return text.replace("\\", "\\\\").replace('"', '\\"')


def bed_lines(plan):
    """What the table's figures were measured on, when it is not the
    default bed (one vCPU, -icount, no probes): their noise is another
    one, or (REGRESS_PROFILE) they carry the probes' cost."""
    out = []
    smp = plan.get("smp", 1)
    if smp != 1:
        out.append("* measured on %d vCPUs without -icount: the guest keeps "
                   "the host's clock, so\n  the host's load moves the "
                   "figures (regress/README.md, \"Two vCPUs\")." % smp)
    if plan.get("threaded_napi") is False:
        out.append("* REGRESS_NAPI=0: the veth receives in softirq on its "
                   "sender's CPU, so one\n  flow may cross CPUs and arrive "
                   "out of order (regress/README.md,\n  \"Two vCPUs\").")
    if plan.get("profile"):
        out.append("* profiled (REGRESS_PROFILE=%s): the probes cost guest "
                   "CPU during the\n  streams; compare these versions with "
                   "each other, not with another run.\n  Profiles: "
                   "iperf/*.trace.txt, *.perf*.txt." % ",".join(
                       plan["profile"]))
    return out


def report(results_dir, threshold, log=print, out=sys.stdout,
           cpu_threshold=stats.CPU_THRESHOLD):
    """Analyse a results folder; print the table; write CSV + charts.
    Returns an Outcome (regressions, rows, exit status); ReportError when
    the folder has no readable raw.json."""
    raw = load(results_dir)
    res = Outcome()
    res.failed = failure(raw)
    add_baseline(raw)
    labels, rows = analyse(raw, threshold, cpu_threshold)
    table(labels, rows, out=out)
    print("* server CPU per MB: CPU time of every server-side process "
          "(pptpd, Poptop's pptpctrl,\n  pppd) per megabyte carried through "
          "the tunnel; it shows a server regression\n  even when something "
          "else sets the tunnel's speed. Cells: median of the rounds\n"
          "  ±(max-min)/median; change: mean of the per-round changes "
          "(round i of each\n  version ran side by side). Verdicts: a "
          "paired t-test with the threshold\n  (regress/README.md, "
          "\"Verdicts\"): `inconclusive (N)`: beyond the threshold\n  "
          "the worse way, not shown by the pairs yet, N rounds would "
          "settle it (exit 3);\n  `too noisy (N)`: the pairs scatter more "
          "than the threshold can be told\n  from, reported, not voted.",
          file=out)
    if plain_labels(raw["plan"]):
        print("  VM CPU per MB: the whole guest's CPU (user+nice+system+irq+"
              "softirq of\n  /proc/stat) per MB of payload; `plain` runs the "
              "same stream over plain IP\n  with no server. CPU per MB added: "
              "a version's VM CPU per MB minus plain's\n  in the same round, "
              "the CPU its server and tunnel add, kernel work included.",
              file=out)
    if any(c["verdict"] == stats.HOST_BUSY for row in rows
           for c in row["cmp"].values()):
        print("  `%s`: a stream whose client runs on the host, where "
              "the two\n  versions' slots of a round saw the host's load "
              "besides the bed more than\n  %g core apart: reported, not "
              "voted (regress/README.md, \"The host's load\")."
              % (stats.HOST_BUSY, stats.HOST_UNEQUAL_CORES), file=out)
    lines = verdict_lines(labels, rows)
    host_lines = host_load_lines(raw, labels)
    spread = max_spread(labels, rows)
    calm = max_spread(labels, rows, declared=False)
    summ, rounds = write_csv(results_dir, raw, labels, rows)
    pngs = charts(results_dir, labels, rows, log=log)
    bed = bed_lines(raw["plan"])
    for ln in bed:
        print(ln, file=out)
    with open(os.path.join(results_dir, "table.txt"), "w") as f:
        table(labels, rows, out=f, color=False)
        for ln in bed:
            f.write(ln + "\n")
        for _, ln in lines:
            f.write(ln + "\n")
        for ln in host_lines:
            f.write(ln + "\n")
    print("", file=out)
    for ln in dial_lines(raw, labels) + host_lines:
        print(ln, file=out)
    if spread:
        print("largest spread between rounds: %.1f %% (%s, %s, %s)"
              % spread, file=out)
    if calm and calm != spread:
        print("  without the metrics declared noisy: %.1f %% (%s, %s, %s)"
              % calm, file=out)
    n_reg = 0
    for kind, ln in lines:
        print(ln, file=out)
        n_reg += kind == stats.REGRESSION
    for lab in labels[1:]:
        for row in rows:
            c = row["cmp"][lab]
            if c["verdict"] == stats.INCONCLUSIVE:
                res.inconclusive.append((lab, row["stream"]["name"],
                                         row["metric"].label, c["rounds"]))
    res.undecided = undecided_versions(labels, rows,
                                       plain_labels(raw["plan"]))
    for lab in res.undecided:
        print("%s UNDECIDED: no throughput or CPU row could be decided "
              "(ROUNDS=%s); no verdict of \"no regression\" (exit 3)"
              % (lab, raw["plan"].get("rounds", "?")), file=out)
    if res.inconclusive and not n_reg:
        print("INCONCLUSIVE (exit 3): rerun with ROUNDS=%d" % max(
            r or 0 for _, _, _, r in res.inconclusive), file=out)
    if res.failed:
        print("NO VERDICT: %s\n  (the table shows what was measured before "
              "that; exit status 2)" % res.failed, file=out)
    print("results: %s (raw.json, summary.csv, rounds.csv, %d charts)"
          % (results_dir, len(pngs)), file=out)
    res.regressions = n_reg
    res.rows = rows
    return res
