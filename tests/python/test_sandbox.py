# SPDX-License-Identifier: MIT
"""A sandbox's lifetime through the client: the context manager kills it
(also when the block raised), create's options reach the session, pause
and resume, set_timeout, connect and list, and volumes that outlive a
sandbox."""

from __future__ import annotations

import os
import secrets
import unittest

from harness import OnEachBridge, both_modes, shared
from lizard_bridge import Bridge, NotFoundError, Sandbox, SandboxInfo, ToolError


class Lifetime(OnEachBridge):
    def assert_gone(self, sandbox_id: str) -> None:
        with self.assertRaises(NotFoundError):
            self.bridge().connect(sandbox_id)
        self.assertNotIn(sandbox_id, [info.sandbox_id for info in self.bridge().list()])

    def test_the_bridge_names_the_built_in_templates(self) -> None:
        # What the seed examples ask for before they run: were it missing,
        # they would all say SKIP.
        self.assertLessEqual({"base", "bare", "desktop", "interpreter"}, set(self.bridge().templates()))

    def test_the_context_manager_kills_the_sandbox_when_the_block_raises(self) -> None:
        with self.assertRaisesRegex(ValueError, "inside the block"):
            with self.bridge().create("bare") as sandbox:
                sandbox_id = sandbox.sandbox_id
                self.assertEqual(sandbox.get_info().state, "ready")
                raise ValueError("inside the block")
        self.assert_gone(sandbox_id)

    def test_the_context_manager_kills_the_sandbox_at_the_end_of_the_block(self) -> None:
        with self.bridge().create("bare") as sandbox:
            sandbox_id = sandbox.id
            self.assertIn(sandbox_id, [info.sandbox_id for info in self.bridge().list()])
        self.assert_gone(sandbox_id)

    def test_a_block_that_killed_its_sandbox_itself_ends_quietly(self) -> None:
        with self.bridge().create("bare") as sandbox:
            sandbox.kill()
        self.assert_gone(sandbox.sandbox_id)

    def test_create_options_reach_the_session(self) -> None:
        with self.bridge().create("bare", timeout_ms=120_000, metadata={"owner": "python", "run": "7"},
                                  envs={"FROM_CREATE": "every command"}, screen="800x600", network=False) as sandbox:
            info = sandbox.get_info()
            self.assertIsInstance(info, SandboxInfo)
            self.assertEqual((info.template, info.screen, info.timeout_ms), ("bare", "800x600", 120_000))
            self.assertEqual(info.metadata, {"owner": "python", "run": "7"})
            self.assertIsNotNone(info.deadline)
            self.assertEqual(sandbox.process.exec_("echo $FROM_CREATE").stdout, "every command\n")
            self.assertEqual(sandbox.desktop.size().width, 800)
            # network=False: loopback only, so no interface but lo.
            links = sandbox.process.exec_("tail -n +3 /proc/net/dev | cut -d: -f1")
            self.assertEqual(links.stdout.split(), ["lo"])

    def test_timeout_ms_zero_never_expires_and_set_timeout_sets_a_deadline(self) -> None:
        with self.bridge().create("bare", timeout_ms=0) as sandbox:
            info = sandbox.get_info()
            self.assertEqual((info.timeout_ms, info.deadline), (0, None))
            later = sandbox.set_timeout(60_000)
            self.assertEqual(later.timeout_ms, 60_000)
            self.assertIsNotNone(later.deadline)
            self.assertLessEqual(later.remaining_ms or 0, 60_000)
            with self.assertRaises(ToolError) as caught:
                sandbox.set_timeout(10)
            self.assertIn("timeout_ms", caught.exception.message)

    def test_pause_freezes_and_resume_continues(self) -> None:
        with self.bridge().create("bare") as sandbox:
            sandbox.desktop.launch("sh -c 'echo $$ > /tmp/pid; while :; do date +%s%N > /tmp/tick; sleep 0.05; done'")
            self.assertEqual(sandbox.pause().state, "paused")
            with self.assertRaises(ToolError) as caught:
                sandbox.process.exec_("true")
            self.assertIn("paused", caught.exception.message)
            self.assertEqual(sandbox.resume().state, "ready")
            # The loop started before the pause still runs: its process kept.
            first = sandbox.fs.read("/tmp/tick")
            check = sandbox.process.exec_("sleep 0.3; cat /tmp/tick; kill -0 $(cat /tmp/pid) && echo alive")
            self.assertNotEqual(check.stdout.splitlines()[0], first.strip())
            self.assertTrue(check.stdout.endswith("alive\n"), check.stdout)

    def test_connect_to_an_unknown_id_is_not_found(self) -> None:
        with self.assertRaises(NotFoundError) as caught:
            self.bridge().connect("s-00000000")
        self.assertEqual(caught.exception.tool, "session_info")

    def test_connect_gives_a_handle_on_the_same_sandbox(self) -> None:
        with self.bridge().create("bare") as sandbox:
            sandbox.fs.write("/tmp/mark", "same one")
            again = self.bridge().connect(sandbox.sandbox_id)
            self.assertEqual(again.fs.read("/tmp/mark"), "same one")

    def test_a_volume_outlives_its_sandbox(self) -> None:
        name = f"py-{os.getpid()}-{secrets.token_hex(3)}"
        volume = self.bridge().create_volume(name, size="unlimited")
        try:
            self.assertEqual((volume.name, volume.limit_bytes), (name, None))
            with self.bridge().create("bare", volume=name) as first:
                first.fs.write("/workspace/kept.txt", "still here")
                listed = {v.name: v for v in self.bridge().list_volumes()}
                self.assertEqual(listed[name].session, first.sandbox_id)
            with self.bridge().create("bare", volume=name) as second:
                self.assertEqual(second.fs.read("/workspace/kept.txt"), "still here")
                self.assertEqual(second.get_info().volume, name)
        finally:
            self.bridge().delete_volume(name)
        self.assertNotIn(name, [v.name for v in self.bridge().list_volumes()])

    def test_a_snapshot_restores_and_a_fork_goes_on_on_its_own(self) -> None:
        if os.geteuid() != 0:
            self.skipTest("snapshots need a writable root, which needs a root daemon")
        with self.bridge().create("base") as source:
            source.fs.write("/etc/py-snapshot", "in the root")
            source.process.exec_("echo home > ~/home.txt")
            snap = source.snapshot()
            self.assertEqual((snap.template, snap.session), ("base", source.sandbox_id))
            self.assertGreater(snap.bytes, 0)
            try:
                self.assertIn(snap.snapshot_id, [s.snapshot_id for s in self.bridge().list_snapshots()])
                with Sandbox.restore(snap, bridge=self.bridge()) as restored:
                    self.assertEqual(restored.fs.read("/etc/py-snapshot"), "in the root")
                    self.assertEqual(restored.process.exec_("cat ~/home.txt").stdout, "home\n")
                with self.bridge().create(snap.snapshot_id) as again:
                    self.assertEqual(again.fs.read("/etc/py-snapshot"), "in the root")
            finally:
                self.bridge().delete_snapshot(snap.snapshot_id)
            self.assertNotIn(snap.snapshot_id, [s.snapshot_id for s in self.bridge().list_snapshots()])
            with source.fork() as fork:
                self.assertEqual(fork.fs.read("/etc/py-snapshot"), "in the root")
                fork.fs.write("/tmp/only-fork", "fork")
                source.fs.write("/tmp/only-source", "source")
                self.assertEqual(fork.process.exec_("ls /tmp/only-*").stdout, "/tmp/only-fork\n")
                self.assertEqual(source.process.exec_("ls /tmp/only-*").stdout, "/tmp/only-source\n")

    def test_a_built_template_starts_sandboxes_that_have_its_files(self) -> None:
        if os.geteuid() != 0:
            self.skipTest("templates need a writable root, which needs a root daemon")
        name = f"py-tpl-{os.getpid()}-{secrets.token_hex(3)}"
        log: list = []
        built = self.bridge().build_template(name, files={"/etc/py-template": "from python\n", "/srv/raw.bin": bytes([0, 1, 255])},
                                             commands=["echo made-by-command > /srv/made"], on_log=log.append)
        try:
            self.assertEqual((built.name, built.built_in, built.base, built.start), (name, False, "host", "base"))
            self.assertIn("$ echo made-by-command > /srv/made\n", "".join(log))
            self.assertIn(name, [t.name for t in self.bridge().list_templates()])
            with self.bridge().create(name) as sandbox:
                self.assertEqual(sandbox.fs.read("/etc/py-template"), "from python\n")
                self.assertEqual(sandbox.process.exec_("cat /srv/made; od -An -tu1 /srv/raw.bin", user="root").stdout.split(),
                                 ["made-by-command", "0", "1", "255"])
                with self.assertRaises(ToolError):
                    self.bridge().delete_template(name)
        finally:
            self.bridge().delete_template(name)
        self.assertNotIn(name, [t.name for t in self.bridge().list_templates()])


both_modes(Lifetime, globals())


class ClassMethods(unittest.TestCase):
    """Sandbox.create / connect / list, the seed's way in (a daemon found
    through the environment)."""

    def bridge(self) -> Bridge:
        return shared.bridge("daemon")

    def test_sandbox_create_without_a_bridge_uses_the_environment(self) -> None:
        daemon = shared.get_daemon()
        saved = {name: os.environ.get(name) for name in ("LIZARD_API_URL", "LIZARD_API_KEY")}
        os.environ.update(LIZARD_API_URL=daemon.url, LIZARD_API_KEY=daemon.key)
        try:
            with Sandbox.create("bare", metadata={"via": "class"}) as sandbox:
                self.assertEqual(sandbox.get_info().metadata, {"via": "class"})
                listed = [info.sandbox_id for info in Sandbox.list()]
                self.assertIn(sandbox.sandbox_id, listed)
                self.assertEqual(Sandbox.connect(sandbox.sandbox_id).get_info().metadata, {"via": "class"})
            with self.assertRaises(NotFoundError):
                Sandbox.connect(sandbox.sandbox_id)
            # The bridge it made for itself went with it.
            with self.assertRaisesRegex(Exception, "closed"):
                sandbox.get_info()
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value

    def test_a_template_the_bridge_lacks_is_refused_not_replaced(self) -> None:
        missing = "no-such-template"
        with self.assertRaises(ToolError) as caught:
            self.bridge().create(missing)
        self.assertIn(missing, caught.exception.message)
