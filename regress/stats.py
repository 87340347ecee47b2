"""Statistics and verdicts of the regression suite (stdlib only).

Each metric of each stream has one value per round and version. A version is
compared against the first (the baseline) with:

  change  = (median(version) - median(baseline)) / |median(baseline)|

and a verdict that fires only when the change is both large and real:

  * large: |change| > threshold (percent; plus the noise a stream file
    declares for the metric) AND the absolute difference of the
    medians exceeds the metric's floor (so 0.0 % -> 0.1 % loss is no "+inf %
    regression") AND |change| exceeds the spread (range/median) of the
    rounds of either version, so a metric whose repeats scatter by 8 % needs
    more than an 8 % change (a TCP stream's CPU cost varies more from run to
    run than a paced UDP stream's);
  * real: at least 2 rounds on each side, and the rounds of the two
    versions do not overlap (every round of one is above every round of the
    other), or, with at least 4 rounds on each side, an exact two-sided
    Mann-Whitney rank test gives p < alpha.

Otherwise the verdict is "same"; when the change was large but not real the
comparison is flagged "noisy" so the reader knows to run more rounds.

That is the pooled comparison, kept for lists that are not round for
round. The suite's rounds run side by side (round i of every version back
to back in one VM), and report.py always asks for the paired one
(compare_paired): a paired t-test of the per-round differences together
with the minimum effect, whose error rates are known at any scatter, and
five outcomes -- regression, improvement, same, inconclusive (the rounds
point to a regression that they cannot yet show: exit status 3, with the
rounds that would settle it) and too noisy (reported, not voted).
`python3 regress/stats.py --simulate` prints the rule's simulated error
rates (regress/README.md, "Verdicts").
"""

import itertools
import math
import random
import sys

REGRESSION = "regression"
IMPROVEMENT = "improvement"
SAME = "same"
# The paired rule's two undecided outcomes (compare_paired).
INCONCLUSIVE = "inconclusive"
TOO_NOISY = "too noisy"
# The cell of `plain` (no tunnel), a baseline measured beside the versions:
# it is shown, never compared.
NO_TUNNEL = "no tunnel"
# A stream whose client runs on the host, where the two versions' slots of
# some round saw clearly unequal host load besides the bed (host_unequal):
# reported, not voted, as `too noisy` is.
HOST_BUSY = "host busy unequal"

HIGHER = "higher"   # higher is better
LOWER = "lower"     # lower is better

# The smallest relative change (percent) that gives a verdict, unless
# THRESHOLD says otherwise (regress/regress, regress/history).
THRESHOLD = 5.0

# The threshold (percent) of server CPU per MB, apart from THRESHOLD's: its
# pairs agree to within about 1 % (UDP 0.3 %, TCP at a fixed rate 1-2 %,
# A-vs-A), and a 5 % cost must clear it on every stream, TCP included.
CPU_THRESHOLD = 3.0

# The paired rule's error rate: a two-sided (1 - ALPHA) t interval of the
# mean per-round difference, so a false regression (or improvement) at
# most ALPHA / 2 of the time, at any scatter.
ALPHA = 0.05
# An undecided metric that would need more rounds than this (or than
# twice the run's) to be decided is "too noisy": reported, not voted.
MAX_ROUNDS = 10


# How far apart (in cores) the host's load besides the bed may be in the
# two slots of a pair before a stream whose client runs on the host is not
# voted (hostbusy.py records it; report.py applies it). The bed needs up
# to about one core (qemu's single TCG vCPU thread; the host-side clients
# add little: pptp-load's 200 sessions, 3.5-5.4 s of CPU in 2.5 min), so
# on the 2-core host these runs share, half a core more of other work is
# what separates a bed that has its core to itself from one that waits for
# it a good part of the time. The false alarm this is for (full-set A-vs-A
# run 9) had other VM suites on the twin's slots (not measured then,
# likely a core or more): its 200 sessions took 167-191 s to come up
# against 113-131 s. A judgement, not yet a measurement: the runs before
# recorded no host load, so the spread of this figure on a quiet pair is
# not known; on a larger host the bound is cautious (it costs votes on
# those streams, never a false alarm).
HOST_UNEQUAL_CORES = 0.5


def host_unequal(pairs, bound=HOST_UNEQUAL_CORES):
    """The pairs (base's, other's host load besides the bed, in cores) of
    the rounds where both are known whose difference exceeds `bound`;
    empty when the load was alike, or unknown (raw.json from before)."""
    return [(b, o) for b, o in pairs
            if b is not None and o is not None and abs(o - b) > bound]


class Metric:
    """What a number means, which way is better, and its noise floor."""

    def __init__(self, key, label, unit, better, floor=0.0, fmt="{:.3g}",
                 kinds=("udp", "tcp"), with_plain=False):
        self.key = key
        # Shown only in a run with the `plain` baseline (VERSION=...,plain).
        self.with_plain = with_plain
        self.label = label
        self.unit = unit
        self.better = better
        self.floor = floor
        self.fmt = fmt
        self.kinds = kinds

    def format(self, value):
        if value is None:
            return "-"
        return self.fmt.format(value)


# The metrics of the report, in the order of the table. `kinds` says which
# stream kinds carry the metric ("ping" is the per-session RTT probe,
# "dial" the session's dial-in).
METRICS = [
    Metric("up_s", "dial-in time", "s", LOWER, 0.3, "{:.3g}",
           kinds=("dial",)),
    # Sessions whose first dial failed (measure.py retries once): a count,
    # not a scatter; any in a compared version is a regression
    # (report.py: dial_verdicts).
    Metric("dial_failed", "failed first dials", "dials", LOWER, 0.0,
           "{:.0f}", kinds=("dial",)),
    Metric("throughput", "throughput", "Mbit/s", HIGHER, 0.0, "{:.4g}"),
    Metric("cpu_per_mb", "server CPU per MB", "ms/MB", LOWER, 0.0, "{:.4g}"),
    # The whole guest's CPU (/proc/stat: user+nice+system+irq+softirq) per
    # MB of payload, and that minus `plain`'s in the same round: the CPU
    # the tunnel and its server add, kernel work included.
    Metric("guest_cpu_per_mb", "VM CPU per MB", "ms/MB", LOWER, 0.0,
           "{:.4g}", with_plain=True),
    Metric("cpu_per_mb_added", "CPU per MB added", "ms/MB", LOWER, 0.0,
           "{:.4g}", with_plain=True),
    Metric("loss", "loss", "%", LOWER, 0.5, "{:.3g}", kinds=("udp",)),
    Metric("ooo", "out of order", "pkts", LOWER, 10.0, "{:.0f}",
           kinds=("udp",)),
    Metric("jitter", "jitter", "ms", LOWER, 0.2, "{:.3g}", kinds=("udp",)),
    Metric("retrans", "TCP retransmits", "segs", LOWER, 10.0, "{:.0f}",
           kinds=("tcp",)),
    # The session's idle ping (stream "ping"), and on a stream with a
    # `path` the pings over that path (measure.py: path_stream); a
    # stream without a path has none, and so no row.
    Metric("rtt", "round-trip time", "ms", LOWER, 0.05, "{:.3g}",
           kinds=("ping", "udp", "tcp")),
    # On a `path` stream: the median time from a data packet of the
    # client to the server's first ack covering it (acksniff.py). The
    # floor is half the engine's ack timer (100 ms): a jitter of a few
    # timer phases is no change, a timer twice as slow is.
    Metric("ack_delay", "ack delay", "ms", LOWER, 50.0, "{:.3g}",
           kinds=("udp", "tcp")),
]
METRIC_BY_KEY = {m.key: m for m in METRICS}


def median(xs):
    xs = sorted(x for x in xs if x is not None)
    n = len(xs)
    if n == 0:
        return None
    mid = n // 2
    if n % 2:
        return float(xs[mid])
    return (xs[mid - 1] + xs[mid]) / 2.0


def spread_pct(xs):
    """Range of the rounds relative to their median, in percent.

    With 3 rounds this is the honest "how far apart were the repeats";
    None when there is nothing to spread or the median is 0.
    """
    xs = [x for x in xs if x is not None]
    if len(xs) < 2:
        return None
    m = median(xs)
    if m == 0:
        return None if max(xs) == min(xs) == 0 else math.inf
    return (max(xs) - min(xs)) / abs(m) * 100.0


def overlap(a, b):
    """True when the ranges [min a, max a] and [min b, max b] intersect."""
    return max(min(a), min(b)) <= min(max(a), max(b))


def _ranks(values):
    """Mid-ranks (1-based) of `values`, ties sharing the mean rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        r = (i + j) / 2.0 + 1.0
        for k in range(i, j + 1):
            ranks[order[k]] = r
        i = j + 1
    return ranks


def mann_whitney_p(a, b, max_exact=200000):
    """Exact two-sided p-value of the Mann-Whitney U test.

    Enumerates every way of splitting the pooled (mid-ranked) values into
    groups of len(a) and len(b), so ties are handled exactly. Falls back to
    the normal approximation when that would be more than `max_exact`
    splits. Returns 1.0 when either side is empty.
    """
    na, nb = len(a), len(b)
    if na == 0 or nb == 0:
        return 1.0
    pooled = list(a) + list(b)
    ranks = _ranks(pooled)
    n = na + nb
    mean_ra = na * (n + 1) / 2.0
    obs = abs(sum(ranks[:na]) - mean_ra)
    total = math.comb(n, na)
    if total <= max_exact:
        extreme = 0
        for idx in itertools.combinations(range(n), na):
            if abs(sum(ranks[i] for i in idx) - mean_ra) >= obs - 1e-9:
                extreme += 1
        return extreme / total
    # Normal approximation with tie correction.
    ties = {}
    for r in ranks:
        ties[r] = ties.get(r, 0) + 1
    tie_term = sum(t ** 3 - t for t in ties.values()) / (n * (n - 1))
    var = na * nb / 12.0 * ((n + 1) - tie_term)
    if var <= 0:
        return 1.0
    z = (obs - 0.5) / math.sqrt(var)
    return max(0.0, min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2.0))))


def t_within(t, df):
    """P(|T| < t) for Student's t with `df` (an integer >= 1) degrees of
    freedom: the closed forms by the parity of df (with theta =
    atan(t / sqrt(df)), a finite series in cos(theta)^2)."""
    if t <= 0:
        return 0.0
    th = math.atan(t / math.sqrt(df))
    c2 = math.cos(th) ** 2
    if df % 2:
        term, acc = 1.0, 1.0 if df > 1 else 0.0
        for k in range(1, (df - 1) // 2):
            term *= c2 * (2 * k) / (2 * k + 1)
            acc += term
        if df == 1:
            return 2 * th / math.pi
        return 2 / math.pi * (th + math.sin(th) * math.cos(th) * acc)
    term, acc = 1.0, 1.0
    for k in range(1, df // 2):
        term *= c2 * (2 * k - 1) / (2 * k)
        acc += term
    return math.sin(th) * acc


_T_CACHE = {}


def t_quantile(q, df):
    """The t with P(|T| < t) = q (df degrees of freedom), by bisection."""
    key = (q, df)
    if key not in _T_CACHE:
        lo, hi = 0.0, 1.0
        while t_within(hi, df) < q:
            hi *= 2
        for _ in range(100):
            mid = (lo + hi) / 2
            if t_within(mid, df) < q:
                lo = mid
            else:
                hi = mid
        _T_CACHE[key] = (lo + hi) / 2
    return _T_CACHE[key]


def half_width(s, n, alpha=ALPHA):
    """Half the (1 - alpha) t interval of a mean of n values with sample
    standard deviation s."""
    return t_quantile(1 - alpha, n - 1) * s / math.sqrt(n)


def rounds_to_resolve(s, effect, alpha=ALPHA, most=1000):
    """Fewest rounds n whose (1 - alpha) interval is narrower than
    `effect` on each side, if the pairs keep scattering by s: then the
    rule decides (regression or same) whatever the truth. None beyond
    `most`."""
    if effect <= 0:
        return None
    if s == 0:
        return 2
    for n in range(2, most + 1):
        if half_width(s, n, alpha) < effect:
            return n
    return None


def pairs_of(base, other):
    """(base, other) of the rounds both versions have, in round order;
    None when the lists are not round for round (different lengths)."""
    if len(base) != len(other):
        return None
    return [(b, o) for b, o in zip(base, other)
            if b is not None and o is not None]


def compare(base, other, better, threshold=5.0, floor=0.0, alpha=0.05,
            noise=0.0, paired=False):
    """Compare the rounds of `other` against those of `base`.

    `noise` (percent) is the scatter the metric is known to have on this
    stream: the change must exceed threshold + noise.
    With `paired`, `base` and `other` are round for round (round i of each
    ran next to each other) and the verdict is the paired one
    (compare_paired, whatever the number of complete pairs: with fewer
    than 2 it is "too noisy"); otherwise, and when the lists are not
    round for round, the rounds are pooled.
    Returns a dict with the medians, spreads, change (percent, None when
    the baseline median is 0), verdict, and why.
    """
    if paired:
        pairs = pairs_of(base, other)
        if pairs is not None:
            return compare_paired(pairs, better, threshold, floor, alpha,
                                  noise)
    base = [x for x in base if x is not None]
    other = [x for x in other if x is not None]
    res = {
        "base_median": median(base), "median": median(other),
        "base_spread": spread_pct(base), "spread": spread_pct(other),
        "change": None, "verdict": SAME, "noisy": False, "p": None,
        "separated": False, "reason": "",
    }
    if not base or not other:
        res["reason"] = "no data"
        return res
    mb, mo = res["base_median"], res["median"]
    diff = mo - mb
    scatter = max([x for x in (res["base_spread"], res["spread"])
                   if x is not None] or [0.0])
    if mb != 0:
        res["change"] = diff / abs(mb) * 100.0
        large = abs(res["change"]) > threshold + noise and abs(diff) > floor
        within_noise = abs(res["change"]) <= scatter
    else:
        large = abs(diff) > floor
        within_noise = False
    separated = not overlap(base, other)
    if not separated and len(base) >= 4 and len(other) >= 4:
        res["p"] = mann_whitney_p(base, other)
        separated = res["p"] < alpha
    res["separated"] = separated
    if not large:
        res["reason"] = "within threshold"
        return res
    if len(base) < 2 or len(other) < 2:
        # One round says nothing about the scatter: never a verdict.
        res["noisy"] = True
        res["reason"] = "a single round"
        return res
    if within_noise:
        res["noisy"] = True
        res["reason"] = "change within the spread of the rounds"
        return res
    if not separated:
        res["noisy"] = True
        res["reason"] = "rounds overlap"
        return res
    worse = diff < 0 if better == HIGHER else diff > 0
    res["verdict"] = REGRESSION if worse else IMPROVEMENT
    res["reason"] = "beyond threshold, rounds apart"
    return res


def compare_paired(pairs, better, threshold=5.0, floor=0.0, alpha=ALPHA,
                   noise=0.0):
    """The verdict from rounds run side by side: round i of the baseline
    and round i of the other version ran one after the other in the same
    VM, so whatever drifts between rounds moves both alike. With the
    differences d_i = other_i - base_i, counted in the "worse" direction
    (so d > 0 is worse whichever way the metric is better):

      E      = max((threshold + noise) % of |median(base)|, floor)
               the minimum effect that matters;
      mean   = mean(d_i), s = their standard deviation, n pairs;
      CI     = mean -+ t(1 - alpha/2, n - 1) * s / sqrt(n)   (95 %)

      regression    CI above 0 and mean > E: the change is both real
                    (a paired t-test) and large (beyond the threshold);
      improvement   the same the other way;
      same          |mean| <= E and the CI inside -2 E .. 2 E: a change
                    of 2 E or more is ruled out;
      inconclusive  the mean and the median of the d_i are beyond E the
                    worse way, but the CI reaches 0: rerun with the
                    rounds that would narrow the CI below E (rounds);
      too noisy     the rest: the pairs scatter more than the rule can
                    resolve at this n, or would need more than
                    max(MAX_ROUNDS, 2n) rounds (rounds; None: more than
                    that, or a single pair). Reported, not voted.

    Error rates, with normal scatter of any size (the t statistic does not
    depend on it): a false regression at most alpha / 2 = 2.5 % of the
    time; "same" for a real change of 2 E or more at most 2.5 %. Power and
    the share left undecided depend on the scatter: simulate() and
    regress/README.md. The medians, spreads and the percent change (the
    mean of the d_i in percent of the baseline's median, in the metric's
    own direction) are reported as in compare().
    """
    base = [b for b, _ in pairs]
    other = [o for _, o in pairs]
    n = len(pairs)
    res = {
        "base_median": median(base), "median": median(other),
        "base_spread": spread_pct(base), "spread": spread_pct(other),
        "change": None, "verdict": TOO_NOISY, "noisy": False, "p": None,
        "separated": False, "reason": "", "paired": True, "pairs": [],
        "pair_spread": None, "ci": None, "effect": None, "rounds": None,
    }
    if n == 0:
        res["reason"] = "no data"
        return res
    mb = res["base_median"]
    sign = -1.0 if better == HIGHER else 1.0
    diffs = [o - b for b, o in pairs]
    worse = [sign * d for d in diffs]
    scale = abs(mb) / 100.0 if mb else None
    effect = max((threshold + noise) * scale if scale else 0.0, floor)
    mean = sum(worse) / n
    if scale:
        rel = [d / scale for d in diffs]
        res["pairs"] = rel
        res["change"] = sum(rel) / n
        res["pair_spread"] = max(rel) - min(rel)
        res["effect"] = effect / scale
    if n < 2:
        res["reason"] = "a single round: nothing to measure the scatter by"
        return res
    sd = math.sqrt(sum((x - mean) ** 2 for x in worse) / (n - 1))
    hw = half_width(sd, n, alpha)
    lo, hi = mean - hw, mean + hw
    if scale:
        res["ci"] = sorted((sign * lo / scale, sign * hi / scale))
    if sd > 0:
        tstat = abs(mean) / (sd / math.sqrt(n))
        res["p"] = 1.0 - t_within(tstat, n - 1)
    else:
        res["p"] = 0.0 if mean else 1.0
    res["separated"] = lo > 0 or hi < 0
    res["rounds"] = rounds_to_resolve(sd, effect, alpha,
                                      max(MAX_ROUNDS, 2 * n))
    if lo > 0 and mean > effect:
        res["verdict"] = REGRESSION
        res["reason"] = "beyond the threshold, and the pairs show it " \
            "(t interval above 0)"
    elif hi < 0 and -mean > effect:
        res["verdict"] = IMPROVEMENT
        res["reason"] = "beyond the threshold, and the pairs show it " \
            "(t interval below 0)"
    elif abs(mean) <= effect and (abs(mean) + hw < 2 * effect or
                                  (hw == 0 and mean == 0)):
        res["verdict"] = SAME
        res["reason"] = "within the threshold, with an interval that " \
            "rules out twice the threshold"
    elif mean > effect and median(worse) > effect and \
            res["rounds"] is not None:
        res["verdict"] = INCONCLUSIVE
        res["reason"] = "a change beyond the threshold the worse way that " \
            "the pairs do not show yet"
    else:
        res["verdict"] = TOO_NOISY
        res["reason"] = "the pairs scatter more than the threshold can " \
            "be told from"
    return res


def simulate(sigma, delta=0.0, n=3, threshold=CPU_THRESHOLD, trials=20000,
             seed=1, outliers=0.0):
    """Share of each outcome of compare_paired for a metric whose rounds
    scatter with a normal sigma (percent of its value, each version's
    round on its own), when the other version is `delta` percent worse,
    n rounds. `outliers`: that share of rounds scatter five times as
    much (heavier tails than normal). Seeded: the same numbers each run."""
    rng = random.Random(seed)
    out = {v: 0 for v in (REGRESSION, IMPROVEMENT, SAME, INCONCLUSIVE,
                          TOO_NOISY)}

    def draw():
        k = 5.0 if outliers and rng.random() < outliers else 1.0
        return rng.gauss(0.0, sigma * k)
    for _ in range(trials):
        pairs = [(100.0 + draw(), 100.0 + delta + draw()) for _ in range(n)]
        out[compare_paired(pairs, LOWER, threshold)["verdict"]] += 1
    return {k: v / trials for k, v in out.items()}


def simulation_table(n_list=(3, 5), sigmas=(0.25, 0.5, 1, 2, 3, 5, 10),
                     threshold=CPU_THRESHOLD, trials=20000):
    """The table of regress/README.md: per n and sigma, the outcomes
    A-vs-A (no change) and with a change of 5 % and of 2 x threshold."""
    lines = ["| rounds | sigma | A-vs-A: regression / inconclusive / same / "
             "too noisy | +5 %%: regression / inconclusive / same / too "
             "noisy | +%g %%: same |" % (2 * threshold),
             "| --- | --- | --- | --- | --- |"]

    def pct(x):
        return "%.1f" % (100 * x)
    for n in n_list:
        for sg in sigmas:
            a = simulate(sg, 0.0, n, threshold, trials)
            b = simulate(sg, 5.0, n, threshold, trials, seed=2)
            c = simulate(sg, 2 * threshold, n, threshold, trials, seed=3)
            lines.append("| %d | %g %% | %s / %s / %s / %s | %s / %s / %s / "
                         "%s | %s |" % (
                             n, sg, pct(a[REGRESSION]), pct(a[INCONCLUSIVE]),
                             pct(a[SAME]), pct(a[TOO_NOISY]),
                             pct(b[REGRESSION]), pct(b[INCONCLUSIVE]),
                             pct(b[SAME]), pct(b[TOO_NOISY]), pct(c[SAME])))
    return "\n".join(lines)


if __name__ == "__main__":
    if sys.argv[1:] == ["--simulate"]:
        print(simulation_table())
    else:
        print("usage: python3 regress/stats.py --simulate", file=sys.stderr)
        sys.exit(2)
