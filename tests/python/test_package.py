# SPDX-License-Identifier: MIT
"""The package as a package: its type hints check clean under mypy --strict
(Debian's python3-mypy), and `pip install` of clients/python works offline
into a fresh virtual environment, py.typed included."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import unittest

from harness import CLIENT

# Debian's python3-mypy is a module of Debian's Python, whatever python3
# runs these tests.
DEBIAN_PYTHON = "/usr/bin/python3"


def has_mypy() -> bool:
    if not os.path.exists(DEBIAN_PYTHON):
        return False
    return subprocess.run([DEBIAN_PYTHON, "-m", "mypy", "--version"], capture_output=True).returncode == 0


class Package(unittest.TestCase):
    def test_type_hints_check_clean_under_mypy_strict(self) -> None:
        if not has_mypy():
            self.skipTest("python3-mypy is not installed (scripts/setup.sh --tests installs it)")
        done = subprocess.run(
            [DEBIAN_PYTHON, "-m", "mypy", "--strict", "--cache-dir=/dev/null", str(CLIENT / "lizard_bridge")],
            capture_output=True, text=True, timeout=300,
        )
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn("Success: no issues found", done.stdout)

    def test_pip_installs_it_offline_into_a_venv(self) -> None:
        directory = tempfile.mkdtemp(prefix=f"lizard-py-venv-{os.getpid()}-")
        try:
            # Debian's Python, whose venv sees python3-setuptools and
            # python3-wheel; --no-build-isolation builds with those instead
            # of fetching them, and --no-index keeps pip off the network.
            if not os.path.exists(DEBIAN_PYTHON):
                self.skipTest(f"no {DEBIAN_PYTHON}: the offline install is Debian's setuptools and wheel")
            made = subprocess.run([DEBIAN_PYTHON, "-m", "venv", "--system-site-packages", directory],
                                  capture_output=True, text=True, timeout=120)
            if made.returncode != 0:
                self.skipTest(f"python3 -m venv does not work here (python3-venv?): {made.stderr.strip()}")
            python = os.path.join(directory, "bin", "python")
            build = tempfile.mkdtemp(prefix=f"lizard-py-build-{os.getpid()}-")
            source = os.path.join(build, "python")
            # A copy, so the build's egg-info and build/ stay out of the tree.
            shutil.copytree(CLIENT, source)
            # Without this machine's own pip settings (a wheel directory).
            offline = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
            offline["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
            installed = subprocess.run(
                [python, "-m", "pip", "install", "--no-index", "--no-build-isolation", "--no-cache-dir", source],
                capture_output=True, text=True, timeout=300, env=offline,
            )
            shutil.rmtree(build, ignore_errors=True)
            self.assertEqual(installed.returncode, 0, installed.stdout + installed.stderr)
            check = subprocess.run(
                [python, "-c", "import lizard_bridge, pathlib; p = pathlib.Path(lizard_bridge.__file__).parent;"
                 " print(lizard_bridge.__version__, (p / 'py.typed').exists(), p.parent.name)"],
                capture_output=True, text=True, timeout=60, cwd=directory, env={"PATH": os.environ["PATH"]},
            )
            self.assertEqual(check.stdout.strip(), "0.1.0 True site-packages", check.stderr)
        finally:
            shutil.rmtree(directory, ignore_errors=True)
