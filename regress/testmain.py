"""The runner the regress/test_*.py files share: every test of a module,
ending with the plain `LABEL: N passed, N failed` line that `make unit`'s
log is read for."""
import io
import json
import os
import tempfile
import unittest


def run(module, label):
    suite = unittest.defaultTestLoader.loadTestsFromModule(module)
    res = unittest.TextTestRunner(verbosity=1).run(suite)
    bad = len(res.failures) + len(res.errors)
    print("%s: %d passed, %d failed" % (label, res.testsRun - bad, bad))
    return 0 if res.wasSuccessful() else 1


def report_of(report, raw, threshold=5.0):
    """Run regress/report.py's report() on `raw` (a raw.json's content) in
    a scratch results folder: (regressions, terminal text, rows, the
    folder's files by name with their text)."""
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "raw.json"), "w") as f:
            json.dump(raw, f)
        out = io.StringIO()
        res = report.report(d, threshold, log=lambda *_: None, out=out)
        n, rows = res.regressions, res.rows
        files = {}
        for name in os.listdir(d):
            path = os.path.join(d, name)
            if name.endswith((".csv", ".txt")):
                with open(path) as f:
                    files[name] = f.read()
            else:
                files[name] = None
    return n, out.getvalue(), rows, files
