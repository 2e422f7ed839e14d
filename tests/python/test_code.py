# SPDX-License-Identifier: MIT
"""sandbox.run_code against real kernels: results as dataclasses with the
seed's names, state across calls, errors, output streamed to callbacks,
charts, fresh bash processes, and contexts of their own."""

from __future__ import annotations

import base64
from typing import List

from harness import OnEachBridge, both_modes, png_pixels

from lizard_bridge import CodeContext, CodeSandbox


class Code(OnEachBridge):
    template = "interpreter"

    def test_state_survives_and_the_main_result_is_its_text(self) -> None:
        self.assertIsNone(self.sandbox.run_code("n = 6").error)
        run = self.sandbox.run_code("n * 7")
        self.assertEqual(run.results[0].data, "42")
        self.assertTrue(run.results[0].is_main_result)
        self.assertEqual(run.text, "42")
        self.assertEqual(run.language, "python")

    def test_an_exception_is_the_results_error(self) -> None:
        run = self.sandbox.run_code("int('nope')")
        assert run.error is not None
        self.assertEqual(run.error.name, "ValueError")
        self.assertEqual(run.error.message, "invalid literal for int() with base 10: 'nope'")
        self.assertIn("int('nope')", run.error.traceback)

    def test_output_reaches_the_callbacks_in_order(self) -> None:
        out: List[str] = []
        err: List[str] = []
        run = self.sandbox.run_code(
            "import sys\nprint('one', flush=True)\nprint('two', file=sys.stderr, flush=True)\nprint('three')",
            on_stdout=out.append,
            on_stderr=err.append,
        )
        self.assertEqual("".join(out), "one\nthree\n")
        self.assertEqual("".join(err), "two\n")
        self.assertEqual("".join(run.logs.stdout), "one\nthree\n")

    def test_a_chart_is_a_png_result(self) -> None:
        run = self.sandbox.run_code("import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()")
        charts = [r for r in run.results if r.png]
        self.assertEqual(len(charts), 1)
        png = charts[0].png
        assert png is not None
        width, height, _ = png_pixels(base64.b64decode(png))
        self.assertGreater(width, 100)
        self.assertIn("png", charts[0].formats())

    def test_bash_runs_fresh_each_call_and_its_exit_code_is_a_result(self) -> None:
        self.sandbox.run_code("export KEEP=1", language="bash")
        run = self.sandbox.run_code('echo "${KEEP:-fresh}"; exit 5', language="bash")
        self.assertEqual(run.logs.stdout, ["fresh\n"])
        self.assertEqual(run.exit_code, 5)

    def test_a_context_of_its_own_is_isolated(self) -> None:
        context = self.sandbox.create_code_context(cwd="/tmp")
        self.assertIsInstance(context, CodeContext)
        try:
            self.sandbox.run_code("mine = 'yes'", context=context)
            self.assertEqual(self.sandbox.run_code("mine", context=context).text, "'yes'")
            other = self.sandbox.run_code("mine")
            assert other.error is not None
            self.assertEqual(other.error.name, "NameError")
            self.assertIn(context.id, [c.id for c in self.sandbox.list_code_contexts()])
            self.sandbox.restart_code_context(context)
            again = self.sandbox.run_code("mine", context=context)
            assert again.error is not None
            self.assertEqual(again.error.name, "NameError")
        finally:
            self.sandbox.remove_code_context(context)
        self.assertNotIn(context.id, [c.id for c in self.sandbox.list_code_contexts()])

    def test_code_sandbox_defaults_to_the_interpreter_template(self) -> None:
        with CodeSandbox.create(bridge=self.bridge()) as sandbox:
            self.assertEqual(sandbox.get_info().template, "interpreter")
            self.assertIsNone(sandbox.get_info().screen)


both_modes(Code, globals())
