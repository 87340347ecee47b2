"""The aggregate `cpu` line of /proc/stat, read once for everything that
measures the whole system's CPU: regress/measure.py (VM CPU per MB, busy
share), regress/hostbusy.py (the host's load beside the bed) and the scale
bench's guest side (scripts/bed/guest.py); and a process's own line,
/proc/PID/stat (measure.py's server CPU, hostbusy.py's bed)."""

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


# Fields of /proc/PID/stat after `(comm)`, as indexes of pid_stat()'s list
# (proc(5) numbers them from 1: state is field 3, so index = field - 3).
PID_PPID = 1
PID_UTIME, PID_STIME = 11, 12
# The CPU of the children the process has waited for (and of theirs):
# where a child's time goes when it is reaped.
PID_CUTIME, PID_CSTIME = 13, 14


def pid_stat(pid, proc="/proc"):
    """(comm, [the fields after comm]) of /proc/PID/stat, or None when the
    process is gone. comm runs from the first `(` to the last `)`: a
    process may put either in its name."""
    try:
        with open("%s/%d/stat" % (proc, pid)) as f:
            s = f.read()
    except OSError:
        return None
    return s[s.index("(") + 1:s.rindex(")")], s[s.rindex(")") + 2:].split()
