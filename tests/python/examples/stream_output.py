# SPDX-License-Identifier: MIT
from lizard_bridge import Bridge

lizard = Bridge()
# The seed shows this snippet inside a sandbox of any template; "bare" is
# the smallest the bridge has.
with lizard.create("bare") as sandbox:
    # Stream command output
    result = sandbox.process.exec_(
        'printf "hello\\n"',
        timeout_ms=30_000,
        on_stdout=lambda chunk: print(chunk, end=""),
        on_stderr=lambda chunk: print(chunk, end=""),
    )
