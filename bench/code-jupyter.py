#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What users drive a kernel with today: jupyter_client's
BlockingKernelClient.execute_interactive against an ipykernel it starts
itself (Debian's python3-jupyter-client and python3-ipykernel), timed the
way bench/code.mjs times run_code. Prints one JSON object.

usage: code-jupyter.py ROUNDS"""

import json
import sys
import time

from jupyter_client.manager import start_new_kernel


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    started = time.monotonic()
    manager, client = start_new_kernel(kernel_name="python3")
    ready_ms = (time.monotonic() - started) * 1000
    try:
        for _ in range(20):
            client.execute_interactive("1+1", timeout=30, output_hook=lambda m: None)
        round_trips = []
        for _ in range(rounds):
            t = time.monotonic()
            reply = client.execute_interactive("1+1", timeout=30, output_hook=lambda m: None)
            round_trips.append((time.monotonic() - t) * 1000)
            assert reply["content"]["status"] == "ok"
        megabyte = []
        for _ in range(max(3, rounds // 20)):
            got = []

            def hook(message):
                if message["header"]["msg_type"] == "stream":
                    got.append(message["content"]["text"])

            t = time.monotonic()
            client.execute_interactive("import sys\nsys.stdout.write('x' * (1 << 20))\nsys.stdout.flush()",
                                       timeout=60, output_hook=hook)
            megabyte.append((time.monotonic() - t) * 1000)
            assert sum(len(g) for g in got) == 1 << 20, sum(len(g) for g in got)
        print(json.dumps({"ready_ms": ready_ms, "round_trips": round_trips, "megabyte": megabyte}))
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


main()
