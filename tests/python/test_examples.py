# SPDX-License-Identifier: MIT
"""The seed's examples, each run as a script against the daemon and against
Bridge.local(), asserting what it printed and what its variables held at
the end (its results, its screenshot), and that its sandbox is gone.

An example that needs a template or a tool the bridge does not have is
skipped with that reason, decided by asking the bridge (tools/list: the
templates create_session's schema lists, the tools it has); nothing is
substituted, so these run for real once the bridge has what they need."""

from __future__ import annotations

import re
import unittest
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

from harness import MODES, network_isolation, run_example, shared
from lizard_bridge import NotFoundError, ToolError


@dataclass
class Example:
    name: str
    stdout: str
    templates: Tuple[str, ...] = ()
    tools: Tuple[str, ...] = ()
    check: Optional[Callable[[unittest.TestCase, Dict[str, Any], str], None]] = None
    needs: List[str] = field(default_factory=list)


def check_killed(test: unittest.TestCase, summary: Dict[str, Any], mode: str) -> None:
    """The sandbox the script held no longer exists on the daemon (a local
    bridge ended with the script, and its sandboxes with it)."""
    sandbox = summary.get("sandbox")
    test.assertIsInstance(sandbox, dict, f"the script holds no sandbox: {summary}")
    assert isinstance(sandbox, dict)
    if mode == "daemon":
        with test.assertRaises(NotFoundError):
            shared.bridge("daemon").connect(sandbox["sandbox"])


def check_create(test: unittest.TestCase, summary: Dict[str, Any], mode: str) -> None:
    test.assertEqual(summary["result"]["exit_code"], 0)
    check_killed(test, summary, mode)


def check_size(test: unittest.TestCase, summary: Dict[str, Any], mode: str) -> None:
    test.assertEqual(summary["result"]["stdout"], "1024\n")
    test.assertEqual(summary["result"]["exit_code"], 0)
    check_killed(test, summary, mode)


def check_stream(test: unittest.TestCase, summary: Dict[str, Any], mode: str) -> None:
    # What on_stdout printed (checked as the script's output) is also the
    # result's stdout: the chunks were the output, not a copy of the end.
    test.assertEqual(summary["result"]["stdout"], "hello\n")
    test.assertEqual(summary["result"]["exit_code"], 0)
    check_killed(test, summary, mode)


def check_desktop(test: unittest.TestCase, summary: Dict[str, Any], mode: str) -> None:
    info = summary["info"]
    session = summary["sandbox"]["sandbox"]
    link = rf"^http://127\.0\.0\.1:\d+/view/{re.escape(session)}#token=[0-9a-f]{{32}}$"
    test.assertRegex(info["url"], link)
    test.assertRegex(info["view_only_url"], link)
    test.assertNotEqual(info["url"], info["view_only_url"])
    png = summary["png"]
    test.assertNotIn("png_error", png)
    test.assertEqual((png["png"]["width"], png["png"]["height"]), (1280, 800))
    # open_url waited for Chromium to draw: its window, not an empty screen
    # (which has one colour and the pointer's two).
    test.assertGreater(png["png"]["colours"], 8, "the screenshot shows no browser")
    check_killed(test, summary, mode)


def check_run_python(test: unittest.TestCase, summary: Dict[str, Any], mode: str) -> None:
    test.assertEqual(summary["result"]["exit_code"], 0)
    check_killed(test, summary, mode)


EXAMPLES = [
    Example("create_sandbox", "Hello from Lizard!\n", templates=("base",), check=check_create),
    Example("code_interpreter", "42\n", templates=("interpreter",), tools=("run_code",)),
    Example("machine_size", "", templates=("base",), check=check_size),
    Example("stream_output", "hello\n", templates=("bare",), check=check_stream),
    Example("desktop", "", templates=("desktop",), tools=("start_stream", "open_url"), check=check_desktop,
            needs=["isolated network", "viewer"]),
    Example("run_python", "1024\n  0\n", templates=("interpreter",), check=check_run_python),
]


def missing(example: Example, mode: str) -> Optional[str]:
    """Why the bridge cannot run the example yet, asked of the bridge."""
    bridge = shared.bridge(mode)
    for template in example.templates:
        if template not in bridge.templates():
            return f"the {mode} bridge has no template {template} yet (create_session takes {bridge.templates()})"
    for tool in example.tools:
        if tool not in bridge.tools():
            return f"the {mode} bridge has no tool {tool} yet"
    if "isolated network" in example.needs:
        isolated, why = network_isolation()
        if not isolated:
            return f"the example opens https://example.com and {why}"
    if "viewer" in example.needs and mode == "local":
        try:
            bridge.connect("default").desktop.start()
        except ToolError as e:
            return f"desktop.start() needs a viewer page, which this bridge does not serve: {e.message}"
    return None


class SeedExamples(unittest.TestCase):
    maxDiff = None


def make_test(example: Example, mode: str) -> Callable[[SeedExamples], None]:
    def test(self: SeedExamples) -> None:
        why = missing(example, mode)
        if why:
            self.skipTest(why)
        done, summary = run_example(example.name, mode)
        self.assertEqual(done.returncode, 0, f"the script failed:\n{done.stderr}")
        self.assertEqual(summary.get("changed_lines", []) != [], mode == "local", summary.get("changed_lines"))
        self.assertEqual(done.stdout, example.stdout)
        if example.check:
            example.check(self, summary, mode)

    test.__doc__ = f"examples/{example.name}.py against the {mode} bridge"
    return test


for _example in EXAMPLES:
    for _mode in MODES:
        setattr(SeedExamples, f"test_{_example.name}_{_mode}", make_test(_example, _mode))
