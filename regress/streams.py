"""Stream files: one traffic case per file under regress/streams/.

A stream file is a list of `key value` lines (`key = value` works too);
`#` starts a comment. Keys:

  kind            udp | tcp
  size            bytes per message (UDP payload / TCP write); default
                  1200 for udp, iperf3's default for tcp
  rate            offered load: bits per second with an optional K/M/G
                  suffix (e.g. 1.5M), or packets per second as `NNNpps`
                  (rate = pps * size * 8); required for udp; for tcp it
                  caps the rate (default: unlimited, a bulk transfer)
  duration        seconds of traffic (default 5)
  direction       up (client -> server, the server receives), down (server
                  -> client, iperf3 -R) or both (two streams, NAME.up and
                  NAME.down); default up
  window          socket buffer / TCP window (iperf3 -w), e.g. 64K;
                  default: the kernel's autotuning
  pacing          yes | no: with a rate, let the kernel pace every packet
                  (iperf3 --fq-rate) instead of iperf3 sending a burst
                  each millisecond (default no)
  noise           METRIC PCT: the run-to-run scatter this stream is known to
                  have on that metric (measured A-vs-A); a verdict on it
                  then needs a change beyond THRESHOLD + PCT. Repeatable,
                  e.g. `noise cpu_per_mb 10`
  sessions        N: N concurrent sessions (1..2000, default 1), each
                  carrying the stream at `rate` (so `rate` is per session),
                  driven by pptp-load from the host over the VM's tap link
                  (scripts/hostbed); udp only, direction up, down, both or
                  echo (pptp-load's echo streams: up and back)
  client          vm | host: where the single session's client runs
                  (default vm: pptp-linux + pppd + iperf3 in the VM);
                  host: pptp-load's TUN mode on the host over the tap
                  link, with iperf3 on the host (tcp or udp), so the
                  client shares none of the VM's CPU
  quick           yes | no: also run with QUICK=1 (default no)
  quick_duration  seconds when QUICK=1 (default: duration)
  description     free text for the report

The stream's name is the file name without its `.stream` suffix; files run
in name order, so a numeric prefix (`20-udp-medium.stream`) sets the order
and is dropped from the displayed name.
"""

import os
import re

KINDS = ("udp", "tcp")
DIRECTIONS = ("up", "down", "both")
KEYS = ("kind", "size", "rate", "duration", "direction", "quick",
        "quick_duration", "window", "pacing", "noise", "sessions", "client",
        "description")
SESSIONS_MAX = 2000
SUFFIX = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}


class StreamError(ValueError):
    pass


def parse_rate(text, size):
    """Bits per second from `1.5M`, `800k`, `64000` or `2000pps`."""
    t = text.strip().lower()
    m = re.fullmatch(r"([0-9]*\.?[0-9]+)\s*pps", t)
    if m:
        return float(m.group(1)) * size * 8
    m = re.fullmatch(r"([0-9]*\.?[0-9]+)\s*([kmg]?)(bit/s|bps|b)?", t)
    if not m:
        raise StreamError("bad rate %r (want e.g. 2M, 500k or 1000pps)" % text)
    return float(m.group(1)) * SUFFIX[m.group(2)]


def _yes(text):
    t = text.strip().lower()
    if t in ("yes", "y", "true", "1", "on"):
        return True
    if t in ("no", "n", "false", "0", "off"):
        return False
    raise StreamError("want yes or no, got %r" % text)


def display_name(filename):
    base = os.path.basename(filename)
    if base.endswith(".stream"):
        base = base[:-len(".stream")]
    return re.sub(r"^[0-9]+[-_]", "", base)


def parse(text, name):
    """Parse one stream file's text; returns a list of 1 or 2 streams."""
    kv = {}
    noise = {}
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"([a-z_]+)\s*(?:=\s*|\s+)(.*)", line)
        if not m:
            raise StreamError("%s:%d: want `key value`" % (name, lineno))
        key, val = m.group(1), m.group(2).strip()
        if key not in KEYS:
            raise StreamError("%s:%d: unknown key %r (known: %s)"
                              % (name, lineno, key, ", ".join(KEYS)))
        if key == "noise":
            nm = re.fullmatch(r"([a-z_]+)\s+([0-9]*\.?[0-9]+)\s*%?", val)
            if not nm:
                raise StreamError("%s:%d: want `noise METRIC PERCENT`"
                                  % (name, lineno))
            noise[nm.group(1)] = float(nm.group(2))
            continue
        kv[key] = val
    try:
        kind = kv.get("kind", "")
        if kind not in KINDS:
            raise StreamError("kind must be udp or tcp")
        size = int(kv["size"]) if "size" in kv else (1200 if kind == "udp"
                                                     else None)
        if size is not None and not 16 <= size <= 65000:
            raise StreamError("size %d out of range 16..65000" % size)
        if "rate" in kv:
            if kv["rate"].strip().lower().endswith("pps") and size is None:
                raise StreamError("a pps rate needs a size")
            rate = parse_rate(kv["rate"], size or 0)
            if rate <= 0:
                raise StreamError("rate must be > 0")
        elif kind == "udp":
            raise StreamError("udp needs a rate")
        else:
            rate = None
        duration = float(kv.get("duration", "5"))
        qdur = float(kv.get("quick_duration", duration))
        if not (0 < duration <= 600 and 0 < qdur <= 600):
            raise StreamError("duration must be in (0, 600] seconds")
        sessions = int(kv.get("sessions", "1"))
        if not 1 <= sessions <= SESSIONS_MAX:
            raise StreamError("sessions must be 1..%d" % SESSIONS_MAX)
        direction = kv.get("direction", "up")
        if sessions > 1 and kind != "udp":
            raise StreamError("sessions > 1 needs kind udp (pptp-load "
                              "streams)")
        if direction not in DIRECTIONS + (("echo",) if sessions > 1 else ()):
            raise StreamError("direction must be up, down or both%s"
                              % (" or echo" if sessions > 1 else ""))
        client = kv.get("client", "vm")
        if client not in ("vm", "host"):
            raise StreamError("client must be vm or host")
        if client == "host" and sessions > 1:
            raise StreamError("client host is for one session (a "
                              "`sessions` stream always runs on the host)")
        quick = _yes(kv.get("quick", "no"))
        pacing = _yes(kv.get("pacing", "no"))
        if pacing and rate is None:
            raise StreamError("pacing needs a rate")
        window = kv.get("window")
        if window is not None and not re.fullmatch(r"[0-9]+[KMG]?", window,
                                                   re.I):
            raise StreamError("window must be like 64K")
    except ValueError as e:  # StreamError, or int()/float() of bad text
        raise StreamError("%s: %s" % (name, e)) from None
    dirs = ["up", "down"] if direction == "both" else [direction]
    out = []
    for d in dirs:
        out.append({
            "name": name if direction != "both" else "%s.%s" % (name, d),
            "kind": kind, "size": size, "rate_bps": rate,
            "duration": duration, "quick_duration": qdur,
            "direction": d, "quick": quick, "window": window,
            "pacing": pacing, "noise": dict(noise), "sessions": sessions,
            "client": client,
            "description": kv.get("description", ""),
        })
    return out


def load_dir(path, quick=False):
    """All streams of the `*.stream` files in `path`, in file-name order.

    With quick=True only the streams marked `quick yes`, with their
    quick_duration as duration.
    """
    files = sorted(f for f in os.listdir(path) if f.endswith(".stream"))
    if not files:
        raise StreamError("no *.stream files in %s" % path)
    out = []
    seen = set()
    for f in files:
        with open(os.path.join(path, f), encoding="utf-8") as fh:
            for s in parse(fh.read(), display_name(f)):
                if s["name"] in seen:
                    raise StreamError("%s: duplicate stream name %s"
                                      % (f, s["name"]))
                seen.add(s["name"])
                if quick:
                    if not s["quick"]:
                        continue
                    s["duration"] = s["quick_duration"]
                out.append(s)
    if not out:
        raise StreamError("no stream in %s is marked for this run%s"
                          % (path, " (quick yes)" if quick else ""))
    return out


def iperf_args(stream, host, port):
    """iperf3 client arguments for one stream (without the binary)."""
    a = ["-c", host, "-p", str(port), "-J", "--get-server-output",
         "-t", _num(stream["duration"]), "--connect-timeout", "10000"]
    rate = str(int(round(stream["rate_bps"]))) if stream["rate_bps"] else None
    if stream["kind"] == "udp":
        a += ["-u", "-l", str(stream["size"])]
    elif stream["size"]:
        a += ["-l", str(stream["size"])]
    if rate and stream.get("pacing"):
        a += ["--fq-rate", rate, "-b", "0"]
    elif rate:
        a += ["-b", rate]
    if stream.get("window"):
        a += ["-w", stream["window"]]
    if stream["direction"] == "down":
        a.append("-R")
    return a


def load_args(stream, server, source, target):
    """pptp-load arguments for a many-session stream (without the binary):
    `sessions` sessions from the `source` range, each with the stream at
    its per-session rate to the echo/sink service at `target`."""
    pps = stream["rate_bps"] / (stream["size"] * 8)
    return ["--server", server, "--source", source,
            "--sessions", str(stream["sessions"]),
            "--stream", "%d,%gpps,%s,%s" % (stream["size"], pps,
                                            _num(stream["duration"]),
                                            stream["direction"]),
            "--target", target]


def _num(x):
    return str(int(x)) if float(x).is_integer() else "%g" % x


def describe(stream):
    """Short human description: `udp 1200B @ 2 Mbit/s, up, 5 s`."""
    if stream["kind"] == "udp":
        pps = stream["rate_bps"] / (stream["size"] * 8)
        what = "udp %dB @ %s (%d pkt/s)" % (stream["size"],
                                            fmt_rate(stream["rate_bps"]), pps)
    else:
        what = "tcp bulk" if not stream["rate_bps"] else \
            "tcp @ " + fmt_rate(stream["rate_bps"])
    if stream.get("pacing"):
        what += " paced"
    if stream.get("sessions", 1) > 1:
        what = "%d sessions x %s" % (stream["sessions"], what)
    elif stream.get("client") == "host":
        what += " from the host"
    return "%s, %s, %s s" % (what, stream["direction"],
                             _num(stream["duration"]))


def fmt_rate(bps):
    for div, unit in ((1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s")):
        if bps >= div:
            return "%g %s" % (round(bps / div, 3), unit)
    return "%g bit/s" % bps
