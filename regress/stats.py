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

That is the pooled comparison. The suite's rounds run side by side (round i
of every version back to back in one VM), and report.py asks for the
paired one (compare_paired) wherever both versions have 3 rounds or more
in common: per-round differences, each of the same sign and together
beyond their own range.
"""

import itertools
import math

REGRESSION = "regression"
IMPROVEMENT = "improvement"
SAME = "same"
# The cell of `plain` (no tunnel), a baseline measured beside the versions:
# it is shown, never compared.
NO_TUNNEL = "no tunnel"

HIGHER = "higher"   # higher is better
LOWER = "lower"     # lower is better

# The threshold (percent) of server CPU per MB, apart from THRESHOLD's: its
# pairs agree to within about 1 % (UDP 0.3 %, TCP at a fixed rate 1-2 %,
# A-vs-A), and a 5 % cost must clear it on every stream, TCP included.
CPU_THRESHOLD = 3.0

# Fewest rounds of both versions for the paired verdict: with 3 pairs all
# of one sign happen by chance 1 time in 4, so the change must also beat
# the threshold and the pairs' own scatter; with fewer, pooled rules.
MIN_PAIRS = 3
# From this many pairs on, one or more dissenting pairs may be outvoted
# (exact sign test, p < alpha) instead of every pair agreeing.
SIGN_TEST_PAIRS = 6


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
    Metric("rtt", "round-trip time", "ms", LOWER, 0.05, "{:.3g}",
           kinds=("ping",)),
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


def sign_test_p(pos, neg):
    """Exact two-sided sign test: p of a split at least as uneven as
    pos:neg among pos+neg fair coin flips (ties left out beforehand)."""
    n = pos + neg
    if n == 0:
        return 1.0
    k = min(pos, neg)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2.0 ** n
    return min(1.0, 2.0 * tail)


def pairs_of(base, other):
    """(base, other) of the rounds both versions have, in round order;
    None when the lists are not round for round (different lengths)."""
    if len(base) != len(other):
        return None
    return [(b, o) for b, o in zip(base, other)
            if b is not None and o is not None]


def compare(base, other, better, threshold=5.0, floor=0.0, alpha=0.05,
            noise=0.0, paired=False, min_pairs=MIN_PAIRS):
    """Compare the rounds of `other` against those of `base`.

    `noise` (percent) is the scatter the metric is known to have on this
    stream: the change must exceed threshold + noise.
    With `paired`, `base` and `other` are round for round (round i of each
    ran next to each other) and, given `min_pairs` complete rounds, the
    verdict is the paired one (compare_paired); otherwise, and without
    `paired`, the rounds are pooled.
    Returns a dict with the medians, spreads, change (percent, None when
    the baseline median is 0), verdict, and why.
    """
    if paired:
        pairs = pairs_of(base, other)
        if pairs is not None and len(pairs) >= min_pairs:
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


def compare_paired(pairs, better, threshold=5.0, floor=0.0, alpha=0.05,
                   noise=0.0):
    """The verdict from rounds run side by side: round i of the baseline
    and round i of the other version ran one after the other in the same
    VM, so whatever drifts between rounds (the host's load, the guest's
    caches) moves both alike. Per round:

      d_i = (other_i - base_i) / |median(base)|      (percent)

    change = median(d_i), and a verdict only when all of these hold:

      * |change| > threshold + noise, and the median absolute difference
        of the pairs exceeds the metric's floor;
      * every pair agrees in sign with the change, and |change| exceeds
        the range (max - min) of the d_i: the pairs' own scatter, so pairs
        of +2 %, +4 % and +7 % give none. (Half the range would pass three
        draws of one sign from any wide noise 9 % of the time; the whole
        range, under 4.5 %; and where each version's rounds scatter by
        sigma = 0.8 % it still finds a 5 % change 49 times in 50.)
      * from SIGN_TEST_PAIRS pairs on, instead: an exact sign test of the
        pairs with p < alpha (a dissenting pair may be outvoted).

    A change beyond the threshold that fails the other two is "noisy".
    The pooled medians and spreads are reported as in compare().
    """
    base = [b for b, _ in pairs]
    other = [o for _, o in pairs]
    res = {
        "base_median": median(base), "median": median(other),
        "base_spread": spread_pct(base), "spread": spread_pct(other),
        "change": None, "verdict": SAME, "noisy": False, "p": None,
        "separated": False, "reason": "", "paired": True, "pairs": [],
        "pair_spread": None,
    }
    mb = res["base_median"]
    diffs = [o - b for b, o in pairs]
    mdiff = median(diffs)
    if mb != 0:
        rel = [x / abs(mb) * 100.0 for x in diffs]
        res["pairs"] = rel
        res["change"] = median(rel)
        res["pair_spread"] = max(rel) - min(rel)
        large = abs(res["change"]) > threshold + noise and \
            abs(mdiff) > floor
        within_noise = abs(res["change"]) <= res["pair_spread"] and \
            len(pairs) < SIGN_TEST_PAIRS
        center = res["change"]
    else:
        large = abs(mdiff) > floor
        within_noise = False
        center = mdiff
    pos = sum(1 for d in diffs if d > 0)
    neg = sum(1 for d in diffs if d < 0)
    agree = pos if center > 0 else neg
    if len(pairs) >= SIGN_TEST_PAIRS:
        res["p"] = sign_test_p(pos, len(pairs) - pos) if center > 0 else \
            sign_test_p(len(pairs) - neg, neg)
        consistent = center != 0 and res["p"] < alpha
    else:
        consistent = center != 0 and agree == len(pairs)
    res["separated"] = consistent
    if not large:
        res["reason"] = "within threshold"
        return res
    if not consistent:
        res["noisy"] = True
        res["reason"] = "the rounds' pairs disagree"
        return res
    if within_noise:
        res["noisy"] = True
        res["reason"] = "change within the scatter of the pairs"
        return res
    worse = mdiff < 0 if better == HIGHER else mdiff > 0
    res["verdict"] = REGRESSION if worse else IMPROVEMENT
    res["reason"] = "beyond threshold, every pair agrees"
    return res
