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
  path            [up|down] netem-like terms: the link between client and
                  server for this stream (tc netem on the egress of each
                  end of the test bed's veth, only while the stream runs):
                  `rate 64k`, `delay 30ms`, `jitter 20ms` (needs delay),
                  `loss 1%`, `reorder 5%` (needs delay: the packets it
                  picks are sent at once, the rest delayed) and `gap 3`
                  (needs reorder: only every 3rd packet may be one sent
                  at once). Without `up`/`down` a line applies to both
                  directions; `path down rate 1M` and `path up rate 256k`
                  make an asymmetric link (down: server -> client).
                  Repeatable: the lines add up, a later term replacing
                  an earlier one of the same direction. Not with
                  `client host` or `sessions` (their link is the VM's tap)
  quick           yes | no: also run with QUICK=1 (default no)
  quick_duration  seconds when QUICK=1 (default: duration)
  quick_rounds    rounds of this stream when QUICK=1, at least (default:
                  the run's ROUNDS; 2..20). The other streams stop at the
                  run's ROUNDS: the later rounds dial and run only the
                  streams that ask for them. For a stream whose pairs
                  scatter too much for 3 rounds to show a 5 % change
                  (regress/README.md, "The rule's error rates").
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
        "quick_duration", "quick_rounds", "window", "pacing", "noise", "sessions", "client",
        "path", "description")
# The terms of a `path` line, each with one value, and the directions it
# names: up is the client's egress (client -> server), down the server's.
PATH_TERMS = ("rate", "delay", "jitter", "loss", "reorder", "gap")
PATH_DIRS = ("up", "down")
# netem's own queue (packets): its default of 1000 would hold seconds of
# a stream beyond a slow link's rate; 100 is about what a modem or DSL
# router buffers (about 15 s at 64 kbit/s of 1200-byte packets, which is
# why a stream on such a path must offer no more than the link carries).
PATH_LIMIT = 100
# Bounds of a path: a delay beyond 10 s outlasts any stream here, a rate
# under 1 kbit/s would not carry a dial's control traffic in time, and a
# link beyond 1 Gbit/s is no longer the bottleneck of this tunnel.
PATH_DELAY_MAX_MS = 10000
PATH_RATE_MIN, PATH_RATE_MAX = 1e3, 1e9
SESSIONS_MAX = 2000
# The most rounds a stream may ask for in QUICK (quick_rounds): beyond
# this the stream is not one for a quick run.
QUICK_ROUNDS_MAX = 20
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


def parse_ms(text):
    """Milliseconds from `30ms`, `1.5s` or `200us`."""
    m = re.fullmatch(r"([0-9]*\.?[0-9]+)(us|ms|s)", text.strip().lower())
    if not m:
        raise StreamError("bad time %r (want e.g. 30ms, 1s or 500us)" % text)
    return float(m.group(1)) * {"us": 1e-3, "ms": 1.0, "s": 1e3}[m.group(2)]


def parse_pct(text):
    m = re.fullmatch(r"([0-9]*\.?[0-9]+)%", text.strip())
    if not m or float(m.group(1)) > 100:
        raise StreamError("bad percentage %r (want e.g. 1%% or 0.5%%)"
                          % text)
    return float(m.group(1))


def parse_path_line(text, path):
    """Add one `path` line's terms to `path` ({"up": {...}, "down": {...}})."""
    words = text.split()
    dirs = PATH_DIRS
    if words and words[0] in PATH_DIRS:
        dirs = (words.pop(0),)
    if not words or len(words) % 2:
        raise StreamError("want `path [up|down] TERM VALUE ...` with terms "
                          "%s" % ", ".join(PATH_TERMS))
    terms = {}
    for term, val in zip(words[::2], words[1::2]):
        if term not in PATH_TERMS:
            raise StreamError("unknown path term %r (known: %s)"
                              % (term, ", ".join(PATH_TERMS)))
        if term == "rate":
            v = parse_rate(val, 0)
            if not PATH_RATE_MIN <= v <= PATH_RATE_MAX:
                raise StreamError("path rate %s out of range 1k..1G" % val)
        elif term in ("delay", "jitter"):
            v = parse_ms(val)
            if v > PATH_DELAY_MAX_MS:
                raise StreamError("path %s %s beyond %d ms"
                                  % (term, val, PATH_DELAY_MAX_MS))
        elif term == "gap":
            if not re.fullmatch(r"[0-9]+", val) or int(val) < 1:
                raise StreamError("path gap wants a whole number >= 1, got "
                                  "%r" % val)
            v = int(val)
        else:
            v = parse_pct(val)
        terms[term] = v
    for d in dirs:
        path.setdefault(d, {}).update(terms)


def check_path(path):
    """What netem needs of the terms together, per direction."""
    for d, t in sorted(path.items()):
        if "jitter" in t and not t.get("delay"):
            raise StreamError("path %s: jitter needs a delay" % d)
        if "reorder" in t and not t.get("delay"):
            raise StreamError("path %s: reorder needs a delay (the packets "
                              "not picked are the delayed ones)" % d)
        if "gap" in t and "reorder" not in t:
            raise StreamError("path %s: gap needs reorder" % d)


def netem_args(terms):
    """tc arguments after `tc qdisc replace dev DEV root` for one
    direction's terms: one netem qdisc (its own rate, so that delay, loss
    and rate are one queue whose order is the order of sending)."""
    a = ["netem", "limit", str(PATH_LIMIT)]
    if "delay" in terms:
        a += ["delay", "%gms" % terms["delay"]]
        if "jitter" in terms:
            a.append("%gms" % terms["jitter"])
    if "loss" in terms:
        a += ["loss", "%g%%" % terms["loss"]]
    if "reorder" in terms:
        a += ["reorder", "%g%%" % terms["reorder"]]
        if "gap" in terms:
            a += ["gap", str(terms["gap"])]
    if "rate" in terms:
        a += ["rate", "%dbit" % round(terms["rate"])]
    return a


def describe_path(path):
    """`down rate 1M delay 10ms; up rate 256k delay 10ms`, or one line
    when both directions are the same."""
    def one(t):
        out = []
        for k in PATH_TERMS:
            if k not in t:
                continue
            v = t[k]
            if k == "rate":
                v = fmt_rate(v)
            elif k in ("delay", "jitter"):
                v = "%gms" % v
            elif k in ("loss", "reorder"):
                v = "%g%%" % v
            out.append("%s %s" % (k, v))
        return " ".join(out)
    if not path:
        return ""
    if path.get("up") == path.get("down"):
        return one(path["up"])
    return "; ".join("%s %s" % (d, one(path[d])) for d in PATH_DIRS
                     if d in path)


def display_name(filename):
    base = os.path.basename(filename)
    if base.endswith(".stream"):
        base = base[:-len(".stream")]
    return re.sub(r"^[0-9]+[-_]", "", base)


def parse(text, name):
    """Parse one stream file's text; returns a list of 1 or 2 streams."""
    kv = {}
    noise = {}
    path = {}
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
        if key == "path":
            try:
                parse_path_line(val, path)
            except StreamError as e:
                raise StreamError("%s:%d: %s" % (name, lineno, e)) from None
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
        qrounds = int(kv["quick_rounds"]) if "quick_rounds" in kv else None
        if qrounds is not None and not 2 <= qrounds <= QUICK_ROUNDS_MAX:
            raise StreamError("quick_rounds must be 2..%d" % QUICK_ROUNDS_MAX)
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
        check_path(path)
        if path and (client == "host" or sessions > 1):
            raise StreamError("path is for streams from the client in the "
                              "VM (the veth); not with client host or "
                              "sessions")
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
            "quick_rounds": qrounds,
            "direction": d, "quick": quick, "window": window,
            "pacing": pacing, "noise": dict(noise), "sessions": sessions,
            "client": client,
            "path": {k: dict(v) for k, v in path.items()} or None,
            "description": kv.get("description", ""),
        })
    return out


def set_rounds(streams, rounds):
    """Give each stream its rounds (the run's, or its min_rounds if more)
    and return the run's: the most any stream has."""
    for s in streams:
        s["rounds"] = max(rounds, s.get("min_rounds") or 0)
    return max([rounds] + [s["rounds"] for s in streams])


def in_round(streams, rnd):
    """The streams that run in round `rnd` (from 1)."""
    return [s for s in streams if s.get("rounds", rnd) >= rnd]


def load_dir(path, quick=False):
    """All streams of the `*.stream` files in `path`, in file-name order.

    With quick=True only the streams marked `quick yes`, with their
    quick_duration as duration and their quick_rounds as min_rounds (the
    run gives each stream max(ROUNDS, min_rounds): set_rounds).
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
                    s["min_rounds"] = s["quick_rounds"]
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


def client_on_host(stream):
    """True when the stream's client runs on the host (`client host`, or
    `sessions` N > 1: pptp-load there), paced by the host's clock and so
    reached by the host's other load (hostbusy.py)."""
    return stream.get("client") == "host" or stream.get("sessions", 1) > 1


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
    if stream.get("path"):
        what += ", path " + describe_path(stream["path"])
    return "%s, %s, %s s" % (what, stream["direction"],
                             _num(stream["duration"]))


def fmt_rate(bps):
    for div, unit in ((1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s")):
        if bps >= div:
            return "%g %s" % (round(bps / div, 3), unit)
    return "%g bit/s" % bps
