"""Tests of network paths (`path` in stream files): parsing and its
`file:line` errors, the tc netem arguments a path becomes, the default
path streams, what measure.py does with a path (netem on while the stream
runs, off however it ends) and the ack timing read off the wire
(acksniff.py).

    python3 regress/test_path.py   (ends with "N passed, N failed")
"""

import json
import os
import struct
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import testmain  # noqa: E402

import acksniff  # noqa: E402
import measure  # noqa: E402
import stats  # noqa: E402
import streams  # noqa: E402

UDP = "kind udp\nrate 1M\n"


def parse(text, name="p"):
    return streams.parse(text, name)


class Parse(unittest.TestCase):
    def test_no_path(self):
        self.assertIsNone(parse(UDP)[0]["path"])

    def test_both_directions(self):
        p = parse(UDP + "path rate 64k delay 30ms\n")[0]["path"]
        want = {"rate": 64e3, "delay": 30.0}
        self.assertEqual(p, {"up": want, "down": want})

    def test_asymmetric_and_lines_add_up(self):
        p = parse(UDP + "path down rate 1M delay 15ms\n"
                  "path up rate 256k delay 15ms\npath loss 1%\n")[0]["path"]
        self.assertEqual(p["down"], {"rate": 1e6, "delay": 15.0,
                                     "loss": 1.0})
        self.assertEqual(p["up"], {"rate": 256e3, "delay": 15.0,
                                   "loss": 1.0})

    def test_later_term_replaces(self):
        p = parse(UDP + "path delay 10ms\npath up delay 40ms\n")[0]["path"]
        self.assertEqual(p["up"]["delay"], 40.0)
        self.assertEqual(p["down"]["delay"], 10.0)

    def test_units(self):
        p = parse(UDP + "path delay 1.5s jitter 500us reorder 5% gap 3\n"
                  )[0]["path"]["up"]
        self.assertEqual(p, {"delay": 1500.0, "jitter": 0.5,
                             "reorder": 5.0, "gap": 3})

    def test_both_streams_of_both_get_the_path(self):
        a, b = parse("kind tcp\ndirection both\npath delay 5ms\n")
        self.assertEqual(a["path"], b["path"])
        self.assertIsNot(a["path"], b["path"])

    def errors(self, text):
        with self.assertRaises(streams.StreamError) as cm:
            parse(text, "f.stream")
        return str(cm.exception)

    def test_errors_name_the_line(self):
        for line, what in (("path", "want `key value`"),
                           ("path delay", "want `path"),
                           ("path speed 1M", "unknown path term 'speed'"),
                           ("path delay 30", "bad time '30'"),
                           ("path loss 1", "bad percentage '1'"),
                           ("path loss 101%", "bad percentage"),
                           ("path rate fast", "bad rate"),
                           ("path rate 10", "out of range"),
                           ("path delay 20s", "beyond"),
                           ("path delay 5ms reorder 5% gap 0", "gap wants"),
                           ("path sideways 5ms", "unknown path term 'sideways'")):
            msg = self.errors(UDP + "# c\n" + line + "\n")
            self.assertIn("f.stream:4: ", msg, line)
            self.assertIn(what, msg, line)

    def test_terms_that_need_others(self):
        for line, what in (("path jitter 5ms", "jitter needs a delay"),
                           ("path reorder 5%", "reorder needs a delay"),
                           ("path delay 5ms gap 3", "gap needs reorder"),
                           ("path up delay 5ms\npath down jitter 1ms",
                            "path down: jitter needs a delay")):
            msg = self.errors(UDP + line + "\n")
            self.assertIn("f.stream: ", msg, line)
            self.assertIn(what, msg, line)

    def test_not_with_the_tap_link(self):
        self.assertIn("not with client host", self.errors(
            "kind tcp\nclient host\npath delay 5ms\n"))
        self.assertIn("not with client host", self.errors(
            "kind udp\nrate 8k\nsessions 5\npath delay 5ms\n"))


class Netem(unittest.TestCase):
    def test_args(self):
        self.assertEqual(
            streams.netem_args({"rate": 64e3, "delay": 30.0}),
            ["netem", "limit", str(streams.PATH_LIMIT), "delay", "30ms",
             "rate", "64000bit"])
        self.assertEqual(
            streams.netem_args({"delay": 30.0, "jitter": 2.5, "loss": 2.0,
                                "reorder": 10.0, "gap": 3}),
            ["netem", "limit", str(streams.PATH_LIMIT), "delay", "30ms",
             "2.5ms", "loss", "2%", "reorder", "10%", "gap", "3"])

    def test_describe(self):
        s = parse(UDP + "path down rate 1M\npath up rate 256k\n")[0]
        self.assertIn("path up rate 256 kbit/s; down rate 1 Mbit/s",
                      streams.describe(s))
        s = parse(UDP + "path delay 4ms loss 2%\n")[0]
        self.assertIn("path delay 4ms loss 2%,", streams.describe(s))


class Defaults(unittest.TestCase):
    """The profiles regress/README.md describes, and which run in QUICK."""

    def setUp(self):
        d = os.path.join(HERE, "streams")
        self.full = {s["name"]: s for s in streams.load_dir(d)}
        self.quick = {s["name"]: s for s in streams.load_dir(d, quick=True)}

    def test_profiles(self):
        for name in ("isdn-64k", "adsl-1M-256k.up", "adsl-1M-256k.down",
                     "lossy-wifi", "reordering"):
            self.assertIn(name, self.full)
            self.assertTrue(self.full[name]["path"], name)
        adsl = self.full["adsl-1M-256k.up"]["path"]
        self.assertEqual((adsl["down"]["rate"], adsl["up"]["rate"]),
                         (1e6, 256e3))

    def test_quick_has_the_reordering_and_the_slow_profile(self):
        self.assertIn("reordering", self.quick)
        self.assertIn("isdn-64k", self.quick)

    def test_slow_stream_fits_its_link(self):
        # More than the link carries would fill netem's queue: loss and
        # RTT would be the queue's, not the server's.
        s = self.full["isdn-64k"]
        self.assertLess(s["rate_bps"], s["path"]["up"]["rate"])

    def test_reordering_overtakes_more_than_one(self):
        # A reorder window of 1 (plants/reorder1.diff) still holds a
        # packet that overtook one other: the delay must span two gaps
        # between packets at least, or the plant would go unseen.
        s = self.full["reordering"]
        gap_ms = s["size"] * 8 / s["rate_bps"] * 1000
        self.assertGreater(s["path"]["up"]["delay"], 2 * gap_ms)


class Bed(unittest.TestCase):
    """path_on/path_off with `run` replaced: what tc is asked to do."""

    def setUp(self):
        self.calls = []
        self.shown = {}
        self.real_run = measure.run

        def fake(argv, timeout=30, check=True, ns=None):
            self.calls.append((ns, argv))
            out = self.shown.get((ns, argv[4])) \
                if argv[:3] == ["tc", "qdisc", "show"] else ""
            return measure.subprocess.CompletedProcess(argv, 0, out or "")
        measure.run = fake
        self.bed = measure.Bed("/nonexistent", True)

    def tearDown(self):
        measure.run = self.real_run

    def test_on_each_egress(self):
        self.bed.path_on({"up": {"delay": 5.0}, "down": {"rate": 1e6}})
        self.assertEqual(self.calls, [
            ("cli", ["tc", "qdisc", "replace", "dev", "rg-cli", "root",
                     "netem", "limit", str(streams.PATH_LIMIT),
                     "delay", "5ms"]),
            ("srv", ["tc", "qdisc", "replace", "dev", "rg-srv", "root",
                     "netem", "limit", str(streams.PATH_LIMIT),
                     "rate", "1000000bit"])])

    def test_one_direction_leaves_the_other_clean(self):
        self.bed.path_on({"down": {"delay": 5.0}})
        self.assertEqual([c[1][4] for c in self.calls], ["rg-srv"])

    def test_off_removes_only_netem(self):
        self.shown[("srv", "rg-srv")] = "qdisc netem 8001: root limit 100"
        self.shown[("cli", "rg-cli")] = "qdisc noqueue 0: root refcnt 2"
        self.bed.path_off()
        dels = [c for c in self.calls if c[1][2] == "del"]
        self.assertEqual(dels, [("srv", ["tc", "qdisc", "del", "dev",
                                         "rg-srv", "root"])])


class PathStream(unittest.TestCase):
    """Session.path_stream: the path is off again however the stream ends."""

    def setUp(self):
        self.events = []
        test = self

        class FakeBed:
            work = "/nonexistent"

            def path_on(self, path):
                test.events.append(("on", path))

            def path_off(self):
                test.events.append("off")

        class FakeSniff:
            def __init__(self, work):
                test.events.append("sniff")

            def stop(self):
                test.events.append("sniff-stop")
                return {"n": test.acked, "median_ms": 136.0}

        self.real_sniff = measure.AckSniff
        measure.AckSniff = FakeSniff
        self.acked = 50
        self.sess = measure.Session(FakeBed(), {"label": "A"}, "t")
        self.sess.ping = lambda n: ({"rtt": 70.5}, {"sent": n})
        self.inner = None

        def inner(s, raw, settle):
            self.events.append(("stream", s["path"]))
            if self.inner:
                raise self.inner
            return {"throughput": 0.05}, {}
        self.sess.stream_clean = inner
        self.s = parse(UDP + "path delay 30ms\n")[0]

    def tearDown(self):
        measure.AckSniff = self.real_sniff

    def run_it(self):
        real = measure.Session.stream
        sess = self.sess

        def stream(s, raw, settle):
            if s.get("path"):
                return real(sess, s, raw, settle)
            return sess.stream_clean(s, raw, settle)
        sess.stream = stream
        return sess.stream(self.s, "/nonexistent/x.json", 0.5)

    def test_metrics_and_order(self):
        m, d = self.run_it()
        self.assertEqual(m, {"throughput": 0.05, "rtt": 70.5,
                             "ack_delay": 136.0})
        self.assertEqual(d["path"], self.s["path"])
        self.assertEqual(self.events, [("on", self.s["path"]), "sniff",
                                       ("stream", None), "sniff-stop",
                                       "off"])

    def test_too_few_acks_make_no_figure(self):
        self.acked = measure.ACK_SAMPLES_MIN - 1
        m, _ = self.run_it()
        self.assertIsNone(m["ack_delay"])

    def test_setup_lost_is_run_again_once(self):
        lost = json.dumps({"intervals": [], "end": {}, "error":
                           "unable to read from stream socket: Resource "
                           "temporarily unavailable"})
        calls = []
        with tempfile.TemporaryDirectory() as tmp:
            raw = os.path.join(tmp, "x.json")

            def inner(s, raw_path, settle):
                calls.append(1)
                if len(calls) == 1:
                    with open(raw_path, "w") as f:
                        f.write(lost)
                    raise measure.SessionError("iperf3 exited with status 1")
                return {"throughput": 0.05}, {}
            self.sess.stream_clean = inner
            real = measure.Session.stream
            sess = self.sess
            sess.stream = lambda s, r, st: real(sess, s, r, st) \
                if s.get("path") else sess.stream_clean(s, r, st)
            m, d = sess.stream(self.s, raw, 0.5)
            self.assertEqual(len(calls), 2)
            self.assertEqual(d["stream_tries"], 2)
            # lost twice: the stream's error
            calls.clear()

            def always_lost(s, raw_path, settle):
                calls.append(1)
                with open(raw_path, "w") as f:
                    f.write(lost)
                raise measure.SessionError("again")
            self.sess.stream_clean = always_lost
            with self.assertRaises(measure.SessionError):
                sess.stream(self.s, raw, 0.5)
            self.assertEqual(len(calls), 2)

    def test_other_failures_are_not_run_again(self):
        self.inner = measure.SessionError("iperf3 hung")
        with self.assertRaises(measure.SessionError):
            self.run_it()
        self.assertEqual([e for e in self.events if e == ("stream", None)],
                         [("stream", None)])

    def test_setup_lost_is_told_from_other_errors(self):
        def rep(error, intervals=()):
            return json.dumps({"intervals": list(intervals), "error": error})
        self.assertTrue(measure.iperf_setup_lost(rep(
            "unable to read from stream socket: Resource temporarily "
            "unavailable")))
        self.assertFalse(measure.iperf_setup_lost(rep(
            "unable to read from stream socket", [{"sum": {}}])))
        self.assertFalse(measure.iperf_setup_lost(rep("control socket "
                                                      "has closed")))
        self.assertFalse(measure.iperf_setup_lost("not json"))

    def test_off_when_the_stream_fails(self):
        self.inner = measure.SessionError("iperf3 hung")
        with self.assertRaises(measure.SessionError):
            self.run_it()
        self.assertEqual(self.events[-2:], ["sniff-stop", "off"])


def gre_frame(seq=None, ack=None):
    flags, ver = 0x20, 0x01
    tail = b""
    if seq is not None:
        flags |= acksniff.FLAG_S
        tail += struct.pack("!I", seq)
    if ack is not None:
        ver |= acksniff.FLAG_A
        tail += struct.pack("!I", ack)
    gre = struct.pack("!BBHHH", flags, ver, acksniff.GRE_PPTP, 0, 7) + tail
    ip = bytes([0x45, 0, 0, 0, 0, 0, 0, 0, 64, acksniff.IPPROTO_GRE]) + \
        bytes(10)
    eth = bytes(12) + struct.pack("!H", acksniff.ETH_P_IP)
    return eth + ip + gre


class AckSniffTest(unittest.TestCase):
    def test_fields(self):
        self.assertEqual(acksniff.gre_fields(gre_frame(5)), (5, None))
        self.assertEqual(acksniff.gre_fields(gre_frame(None, 9)), (None, 9))
        self.assertEqual(acksniff.gre_fields(gre_frame(5, 9)), (5, 9))
        udp = bytearray(gre_frame(5))
        udp[acksniff.ETH_HLEN + 9] = 17
        self.assertIsNone(acksniff.gre_fields(bytes(udp)))
        self.assertIsNone(acksniff.gre_fields(gre_frame(5)[:30]))
        arp = bytearray(gre_frame(5))
        arp[12:14] = b"\x08\x06"
        self.assertIsNone(acksniff.gre_fields(bytes(arp)))

    def test_delays(self):
        a = acksniff.Acks()
        for i, t in enumerate((0.0, 0.1, 0.2)):
            a.sent(i, t)
        a.acked(1, 0.25)        # covers 0 and 1
        a.acked(1, 0.3)         # nothing new
        a.acked(2, 0.5)
        self.assertEqual([round(x) for x in a.delays], [250, 150, 300])
        s = a.summary()
        self.assertEqual((s["n"], s["median_ms"], s["unacked"]),
                         (3, 250.0, 0))

    def test_wraps(self):
        a = acksniff.Acks()
        a.sent(0xFFFFFFFF, 0.0)
        a.sent(0, 0.1)
        a.acked(0, 0.2)
        self.assertEqual(len(a.delays), 2)

    def test_nothing_acked(self):
        self.assertIsNone(acksniff.Acks().summary()["median_ms"])


class Metrics(unittest.TestCase):
    def test_path_rows(self):
        # rtt and ack delay have rows on udp and tcp streams (only those
        # with a path have values; report.analyse skips empty rows).
        for key in ("rtt", "ack_delay"):
            self.assertIn("udp", stats.METRIC_BY_KEY[key].kinds)
            self.assertIn("tcp", stats.METRIC_BY_KEY[key].kinds)


def main():
    return testmain.run(sys.modules[__name__], "regress path")


class SessionsStream(unittest.TestCase):
    """What a `sessions` stream counts as the server and reports."""

    def test_echo_service_is_not_the_server(self):
        procs = {10: ("pptpd", 0, 5, 500), 11: ("pppd", 0, 1, 100),
                 12: ("pptp-echo", 0, 9, 900), 13: ("iperf3", 0, 3, 300)}
        saved = measure.pids_in_netns, measure.proc_stat
        measure.pids_in_netns = lambda ino: list(procs)
        measure.proc_stat = lambda pid: procs[pid]
        try:
            snap = measure.server_snapshot(1)
        finally:
            measure.pids_in_netns, measure.proc_stat = saved
        self.assertEqual(sorted(c for c, _, _ in snap.values()),
                         ["pppd", "pptpd"])

    def test_rtt_is_the_median_round_trip(self):
        st = {"rtt": {"count": 30000, "p50_ms": 245.8, "p95_ms": 589.8}}
        self.assertEqual(measure.sessions_rtt(st), 245.8)
        self.assertIsNone(measure.sessions_rtt({}))
        self.assertIn("udp", stats.METRIC_BY_KEY["rtt"].kinds)

    def test_the_full_set_has_200_sessions(self):
        full = streams.load_dir(os.path.join(HERE, "streams"))
        quick = streams.load_dir(os.path.join(HERE, "streams"), quick=True)
        self.assertEqual(max(s.get("sessions", 1) for s in full), 200)
        # QUICK runs only streams whose clients are in the VM
        self.assertEqual(max(s.get("sessions", 1) for s in quick), 1)


if __name__ == "__main__":
    sys.exit(main())
