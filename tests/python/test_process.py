# SPDX-License-Identifier: MIT
"""sandbox.process.exec_ against a real sandbox: exit codes as results,
output streamed to callbacks while the command still runs, its limits,
and its environment."""

from __future__ import annotations

import threading
import time
from typing import List

from harness import OnEachBridge, both_modes


class Process(OnEachBridge):
    template = "bare"

    def test_a_non_zero_exit_is_a_result(self) -> None:
        result = self.sandbox.process.exec_("echo out; echo err >&2; exit 3")
        self.assertEqual((result.stdout, result.stderr, result.exit_code), ("out\n", "err\n", 3))
        self.assertFalse(result.timed_out)

    def test_output_reaches_the_callbacks_while_the_command_runs(self) -> None:
        # The command waits for a file that only the on_stdout callback
        # writes, after its first chunk: it can end only if that chunk
        # arrived while it ran.
        self.sandbox.process.exec_("rm -f /tmp/go")
        chunks: List[str] = []
        errors: List[str] = []
        threads: List[str] = []

        def on_stdout(chunk: str) -> None:
            chunks.append(chunk)
            threads.append(threading.current_thread().name)
            if chunk.startswith("waiting"):
                self.sandbox.fs.write("/tmp/go", "go")

        result = self.sandbox.process.exec_(
            "echo waiting; i=0; while [ ! -e /tmp/go ]; do i=$((i+1)); [ $i -gt 200 ] && exit 9; sleep 0.05; done;"
            " echo oops >&2; echo done",
            timeout_ms=30_000,
            on_stdout=on_stdout,
            on_stderr=errors.append,
        )
        self.assertEqual(result.exit_code, 0, "the command never saw the file the callback writes")
        self.assertEqual("".join(chunks), "waiting\ndone\n")
        self.assertEqual("".join(errors), "oops\n")
        self.assertEqual(result.stdout, "waiting\ndone\n")
        self.assertEqual(set(threads), {threading.current_thread().name}, "callbacks ran on another thread")

    def test_a_callback_that_raises_stops_the_call_and_the_command(self) -> None:
        def on_stdout(chunk: str) -> None:
            raise KeyError("from the callback")

        started = time.monotonic()
        with self.assertRaisesRegex(KeyError, "from the callback"):
            self.sandbox.process.exec_("echo first; sleep 20; touch /tmp/not-cancelled", timeout_ms=30_000,
                                       on_stdout=on_stdout)
        self.assertLess(time.monotonic() - started, 10)
        # The bridge was told (notifications/cancelled): the command's tree
        # is gone before it could reach its touch.
        still = self.sandbox.process.exec_("sleep 1; pgrep -f 'sleep [2]0' || echo gone; ls /tmp/not-cancelled 2>&1")
        self.assertIn("gone", still.stdout)
        self.assertIn("No such file", still.stdout)

    def test_timeout_ms_limits_the_call(self) -> None:
        started = time.monotonic()
        result = self.sandbox.process.exec_("echo before; sleep 30", timeout_ms=1000)
        self.assertTrue(result.timed_out)
        self.assertEqual(result.stdout, "before\n")
        self.assertLess(time.monotonic() - started, 10)

    def test_envs_workdir_and_user(self) -> None:
        result = self.sandbox.process.exec_("echo $GREETING; pwd; id -u", envs={"GREETING": "hi there"},
                                            workdir="/tmp", user="root")
        self.assertEqual(result.stdout, "hi there\n/tmp\n0\n")
        plain = self.sandbox.process.exec_("pwd; id -u")
        self.assertEqual(plain.stdout, "/home/user\n1000\n")

    def test_an_argv_list_is_not_split_by_a_shell(self) -> None:
        result = self.sandbox.process.exec_(["printf", "%s|", "a b", "$HOME", "c"])
        self.assertEqual(result.stdout, "a b|$HOME|c|")

    def test_stdin_reaches_the_command(self) -> None:
        result = self.sandbox.process.exec_("tr a-z A-Z", stdin="shout\n")
        self.assertEqual(result.stdout, "SHOUT\n")


both_modes(Process, globals())
