# SPDX-License-Identifier: MIT
from lizard_bridge import Bridge

lizard = Bridge()

# Run Python (each process command is a separate process)
sandbox = lizard.create("interpreter", timeout_ms=300_000)
try:
    result = sandbox.process.exec_("python -c 'print(2 ** 10)'")
    print(result.stdout, result.stderr, result.exit_code)
finally:
    sandbox.kill()
