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


def compare(base, other, better, threshold=5.0, floor=0.0, alpha=0.05,
            noise=0.0):
    """Compare the rounds of `other` against those of `base`.

    `noise` (percent) is the scatter the metric is known to have on this
    stream: the change must exceed threshold + noise.
    Returns a dict with the medians, spreads, change (percent, None when
    the baseline median is 0), verdict, and why.
    """
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
