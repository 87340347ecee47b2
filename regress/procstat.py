"""The aggregate `cpu` line of /proc/stat, read once for everything that
measures the whole system's CPU: regress/measure.py (VM CPU per MB, busy
share) and the scale bench's guest side (scripts/bed/guest.py)."""

# The line's fields, in order (proc(5)); guest and guest_nice, which
# follow, are already inside user and nice.
STAT_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq",
               "steal")
# The guest's own work: idle and iowait are no work, steal is the host's.
GUEST_BUSY = ("user", "nice", "system", "irq", "softirq")


def parse_stat_cpu(line):
    """{field: ticks} of the aggregate `cpu` line of /proc/stat."""
    parts = line.split()
    if not parts or parts[0] != "cpu":
        raise ValueError("not the cpu line of /proc/stat: %r" % line[:40])
    v = [int(x) for x in parts[1:1 + len(STAT_FIELDS)]]
    v += [0] * (len(STAT_FIELDS) - len(v))
    return dict(zip(STAT_FIELDS, v))


def read_stat_cpu(path="/proc/stat"):
    """The system's CPU ticks by kind, now (parse_stat_cpu)."""
    with open(path) as f:
        return parse_stat_cpu(f.readline())


def not_idle(ticks):
    """(ticks not idle nor waiting for I/O, all ticks) of a reading or of
    the difference of two."""
    total = sum(ticks[k] for k in STAT_FIELDS)
    return total - ticks["idle"] - ticks["iowait"], total
