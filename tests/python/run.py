# SPDX-License-Identifier: MIT
"""Runs the Python client's tests: python3 tests/python/run.py [--report FILE] [PATTERN...]

As root it first moves itself into a network namespace of its own that
holds only loopback (unshare --net), so that the daemon, the local bridge
and every sandbox reach nothing beyond this run: the seed's desktop example
opens https://example.com, which there goes nowhere. Where that cannot be
done, the tests that need it say SKIP and why. Then it runs every
test_*.py here with unittest (PATTERN: only tests whose id contains it),
prints each outcome, writes one JSON line per test to FILE
(name, status pass/fail/skip, details) for tests/integration/python-
client.test.mjs, stops the daemon and bridges the tests shared, and exits
non-zero when anything failed."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import traceback
import unittest
from pathlib import Path
from typing import Any, Dict, List, Optional

HERE = Path(__file__).resolve().parent


def enter_namespace() -> None:
    """Re-runs this script in a new network namespace, once."""
    if os.environ.get("LIZARD_PY_NETNS") == "1":
        up = subprocess.run(["ip", "link", "set", "lo", "up"], capture_output=True, text=True)
        if up.returncode != 0:
            print(f"run.py: cannot bring loopback up: {up.stderr.strip()}", file=sys.stderr)
            sys.exit(1)
        return
    if os.environ.get("LIZARD_PY_NO_NETNS"):
        return
    probe = subprocess.run(["unshare", "--net", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        os.environ["LIZARD_PY_NO_NETNS"] = f"unshare --net failed: {probe.stderr.strip() or probe.returncode}"
        return
    os.environ["LIZARD_PY_NETNS"] = "1"
    os.execvp("unshare", ["unshare", "--net", "--", sys.executable, str(Path(__file__).resolve()), *sys.argv[1:]])


class Recorder(unittest.TextTestResult):
    """unittest's own output, plus one record per test."""

    records: List[Dict[str, Any]]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.records = []
        self._started = 0.0

    def startTest(self, test: unittest.TestCase) -> None:
        self._started = time.monotonic()
        super().startTest(test)

    def _record(self, test: unittest.TestCase, status: str, details: str = "") -> None:
        self.records.append({
            "name": test.id().removeprefix("__main__."),
            "status": status,
            "details": details,
            "seconds": round(time.monotonic() - self._started, 2),
        })

    def addSuccess(self, test: unittest.TestCase) -> None:
        super().addSuccess(test)
        self._record(test, "pass")

    def addFailure(self, test: unittest.TestCase, err: Any) -> None:
        super().addFailure(test, err)
        self._record(test, "fail", "".join(traceback.format_exception(*err)))

    def addError(self, test: unittest.TestCase, err: Any) -> None:
        super().addError(test, err)
        self._record(test, "fail", "".join(traceback.format_exception(*err)))

    def addSkip(self, test: unittest.TestCase, reason: str) -> None:
        super().addSkip(test, reason)
        self._record(test, "skip", reason)

    def addExpectedFailure(self, test: unittest.TestCase, err: Any) -> None:
        super().addExpectedFailure(test, err)
        self._record(test, "fail", "expected failure: a test here never expects to fail")

    def addUnexpectedSuccess(self, test: unittest.TestCase) -> None:
        super().addUnexpectedSuccess(test)
        self._record(test, "fail", "unexpected success")


def selected(suite: unittest.TestSuite, patterns: List[str]) -> unittest.TestSuite:
    out = unittest.TestSuite()
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            out.addTests(selected(item, patterns))
        elif not patterns or any(p in item.id() for p in patterns):
            out.addTest(item)
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--report")
    parser.add_argument("patterns", nargs="*")
    options = parser.parse_args()
    enter_namespace()
    sys.path.insert(0, str(HERE))
    import harness  # after the namespace: its daemon starts inside

    started = time.monotonic()
    suite = selected(unittest.defaultTestLoader.discover(str(HERE), pattern="test_*.py", top_level_dir=str(HERE)),
                     options.patterns)
    runner = unittest.TextTestRunner(resultclass=Recorder, verbosity=2, stream=sys.stderr)
    result: Optional[Recorder] = None
    records: List[Dict[str, Any]] = []
    try:
        outcome = runner.run(suite)
        assert isinstance(outcome, Recorder)
        result = outcome
        records = result.records
    except BaseException:
        records.append({"name": "run.py", "status": "fail", "details": traceback.format_exc(), "seconds": 0})
    finally:
        problems = harness.shared.close()
        for problem in problems:
            records.append({"name": "run.py cleanup", "status": "fail", "details": problem, "seconds": 0})
    elapsed = time.monotonic() - started
    counts = {status: sum(1 for r in records if r["status"] == status) for status in ("pass", "fail", "skip")}
    print(f"python client: {counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped "
          f"in {elapsed:.1f} s", file=sys.stderr)
    if options.report:
        with open(options.report, "w") as f:
            for record in records:
                f.write(json.dumps(record) + "\n")
    return 1 if counts["fail"] or not records else 0


if __name__ == "__main__":
    sys.exit(main())
