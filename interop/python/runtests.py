"""Runs every test_*.py here with unittest, prints "ok"/"not ok" per test
and ends with the line "N passed, N failed" (exit 1 when some failed)."""

from __future__ import annotations

import sys
import unittest
from pathlib import Path


class _Result(unittest.TextTestResult):
    def addSuccess(self, test):  # noqa: N802 (unittest's names)
        super().addSuccess(test)
        print(f"  ok - {test.id()}", flush=True)

    def addFailure(self, test, err):  # noqa: N802
        super().addFailure(test, err)
        print(f"  not ok - {test.id()}", flush=True)

    def addError(self, test, err):  # noqa: N802
        super().addError(test, err)
        print(f"  not ok - {test.id()}", flush=True)


def main() -> int:
    here = Path(__file__).resolve().parent
    loader = unittest.TestLoader()
    pattern = sys.argv[1] if len(sys.argv) > 1 else "test_*.py"
    suite = loader.discover(str(here), pattern=pattern, top_level_dir=str(here))
    runner = unittest.TextTestRunner(stream=sys.stderr, verbosity=0, resultclass=_Result)
    res = runner.run(suite)
    failed = len(res.failures) + len(res.errors)
    passed = res.testsRun - failed - len(res.skipped)
    if res.testsRun == 0 or loader.errors:
        for e in loader.errors:
            print(e, file=sys.stderr)
        print("0 passed, 0 failed")
        return 2
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
