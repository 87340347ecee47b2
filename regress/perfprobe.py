"""perf in the test VM, as the bench bed (scripts/bed/guest.py) and
regress's REGRESS_PROFILE (measure.py) both run it: the binary, and a
whole-guest recording on the software clock (TCG has no PMU) with call
graphs."""

PERF = "/usr/bin/perf"
PERF_HZ = 499


def record_argv(data, secs, perf=None):
    """argv of `perf record` of the whole guest for `secs` seconds into
    `data`."""
    return [perf or PERF, "record", "-q", "-a", "-g", "-e", "cpu-clock",
            "-F", str(PERF_HZ), "-o", data, "--", "sleep", str(secs)]
