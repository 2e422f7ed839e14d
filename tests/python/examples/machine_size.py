# SPDX-License-Identifier: MIT
from lizard_bridge import Bridge

lizard = Bridge()

# Machine size
with lizard.create("base", size="large") as sandbox:
    result = sandbox.process.exec_("python -c 'print(2 ** 10)'")
