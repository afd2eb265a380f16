"""A skipped test is never reported as a pass: the Python suites' unittest main. Meson counts a test program that
exits 77 as SKIP, so a run in which a test skipped (and none failed) lists each skip with its reason and exits 77.
A check that depends on what a machine has is therefore its own meson test, so that its skip hides no pass of the
others: that test names it, and the others' test leaves it out with --except.

usage (the test program's own arguments first, then): [TEST_NAME ...] [--except TEST_ID_PATTERN ...]
  TEST_NAME         unittest names in __main__ to run (Class, Class.test_method); default: all of them
  --except PATTERN  leaves out the tests whose id (__main__.Class.test_method) matches the fnmatch PATTERN
"""
import fnmatch
import sys
import unittest

MESON_SKIP = 77


def selected(names, excepted):
    loader = unittest.defaultTestLoader
    module = sys.modules["__main__"]
    suite = loader.loadTestsFromNames(names, module) if names else loader.loadTestsFromModule(module)

    def flatten(tests):
        for test in tests:
            if isinstance(test, unittest.TestSuite):
                yield from flatten(test)
            else:
                yield test

    kept = [t for t in flatten(suite) if not any(fnmatch.fnmatch(t.id(), "__main__." + p) for p in excepted)]
    return unittest.TestSuite(kept)


def main(argv, verbosity=2):
    """Runs the tests argv names (see the module's usage); exits 0, 1 on a failure, or 77 when a test skipped."""
    names, excepted = [], []
    args = iter(argv)
    for arg in args:
        if arg == "--except":
            excepted.append(next(args, ""))
        else:
            names.append(arg)
    result = unittest.TextTestRunner(verbosity=verbosity, stream=sys.stderr).run(selected(names, excepted))
    if not result.wasSuccessful():
        sys.exit(1)
    if result.skipped:
        for test, reason in result.skipped:
            print(f"SKIPPED {test.id()}: {reason}")
        print(f"{len(result.skipped)} test(s) skipped, none failed: reported to meson as SKIP (exit {MESON_SKIP}), "
              "not as a pass")
        sys.exit(MESON_SKIP)
    if not result.testsRun:
        print("no test matched: reported as a failure", file=sys.stderr)
        sys.exit(1)
    sys.exit(0)
