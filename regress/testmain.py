"""The runner the regress/test_*.py files share: every test of a module,
ending with the plain `LABEL: N passed, N failed` line that `make unit`'s
log is read for."""
import unittest


def run(module, label):
    suite = unittest.defaultTestLoader.loadTestsFromModule(module)
    res = unittest.TextTestRunner(verbosity=1).run(suite)
    bad = len(res.failures) + len(res.errors)
    print("%s: %d passed, %d failed" % (label, res.testsRun - bad, bad))
    return 0 if res.wasSuccessful() else 1
