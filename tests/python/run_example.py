# SPDX-License-Identifier: MIT
"""Runs one of the seed's example scripts as a script, and says afterwards
what its variables held.

usage: run_example.py EXAMPLE.py daemon|local SUMMARY.json

`daemon` runs the file as it is (Bridge() finds the daemon through
LIZARD_API_URL and LIZARD_API_KEY); `local` first points its constructor
at Bridge.local() (harness.local_variant) and checks that no other line
changed. The script's output goes to stdout as it would; the summary (its
results, sandboxes, bytes) lets the test check what the script did not
print, such as the screenshot the desktop example takes."""

from __future__ import annotations

import dataclasses
import json
import sys
import traceback
from pathlib import Path
from typing import Any, Dict

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402
from lizard_bridge import Sandbox  # noqa: E402


def describe(value: Any) -> Any:
    if isinstance(value, Sandbox):
        return {"sandbox": value.sandbox_id}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: describe(getattr(value, field.name)) for field in dataclasses.fields(value)
                if field.name != "raw"}
    if isinstance(value, (bytes, bytearray)):
        entry: Dict[str, Any] = {"bytes": len(value)}
        try:
            width, height, _ = harness.png_pixels(bytes(value))
            entry["png"] = {"width": width, "height": height, "colours": harness.png_colours(bytes(value))}
        except (ValueError, IndexError) as e:
            entry["png_error"] = str(e)
        return entry
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [describe(item) for item in value]
    return repr(value)


def main() -> int:
    script, mode, summary_path = sys.argv[1:4]
    original = Path(script).read_text()
    source = original if mode == "daemon" else harness.local_variant(original)
    changed = [
        (a, b) for a, b in zip(original.splitlines(), source.splitlines()) if a != b
    ]
    for before, after in changed:
        if not (before.startswith("from lizard_bridge import") or "Bridge()" in before or ".create(" in before):
            print(f"the local variant changed a line that is neither import nor constructor: {before!r} -> {after!r}",
                  file=sys.stderr)
            return 2
    names: Dict[str, Any] = {"__name__": "__main__", "__file__": script}
    status = 0
    try:
        exec(compile(source, script, "exec"), names)
    except BaseException:
        traceback.print_exc()
        status = 1
    sys.stdout.flush()
    summary = {name: describe(value) for name, value in names.items()
               if not name.startswith("__") and not callable(value) and not isinstance(value, type(sys))}
    summary["changed_lines"] = [list(pair) for pair in changed]
    Path(summary_path).write_text(json.dumps(summary))
    return status


if __name__ == "__main__":
    sys.exit(main())
