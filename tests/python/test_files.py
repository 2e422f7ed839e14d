# SPDX-License-Identifier: MIT
"""sandbox.fs against a real sandbox: bytes exact, text as UTF-8, files
larger than one read_file call, listings, modes, and errors that say what
was wrong. What a write put on the sandbox's disk is checked from inside
(sha256sum, stat), not only by reading it back through the client."""

from __future__ import annotations

import hashlib

from harness import OnEachBridge, both_modes
from lizard_bridge import FileEntry, ToolError


class Files(OnEachBridge):
    template = "bare"

    def sha256_inside(self, path: str) -> str:
        result = self.sandbox.process.exec_(["sha256sum", path])
        self.assertEqual(result.exit_code, 0, result.stderr)
        return str(result.stdout.split()[0])

    def test_bytes_of_all_256_values_round_trip(self) -> None:
        data = bytes(range(256)) * 3 + bytes(range(255, -1, -1))
        written = self.sandbox.fs.write("/tmp/all-bytes.bin", data)
        self.assertEqual((written.path, written.bytes), ("/tmp/all-bytes.bin", len(data)))
        self.assertEqual(self.sha256_inside("/tmp/all-bytes.bin"), hashlib.sha256(data).hexdigest())
        self.assertEqual(self.sandbox.fs.read_bytes("/tmp/all-bytes.bin"), data)

    def test_bytes_that_happen_to_be_utf8_come_back_as_bytes(self) -> None:
        data = "plain text\n".encode()
        self.sandbox.fs.write("/tmp/texty.bin", data)
        self.assertEqual(self.sandbox.fs.read_bytes("/tmp/texty.bin"), data)

    def test_text_is_written_and_read_as_utf8(self) -> None:
        text = "Hello from Lizard! héllo ✓ 🦎\nsecond line\n"
        self.sandbox.fs.write("notes/hello.txt", text)  # relative: under HOME, parents made
        size = self.sandbox.process.exec_("wc -c < /home/user/notes/hello.txt")
        self.assertEqual(size.stdout.strip(), str(len(text.encode())))
        self.assertEqual(self.sandbox.fs.read("/home/user/notes/hello.txt"), text)

    def test_a_file_larger_than_one_read_is_read_in_pieces(self) -> None:
        # 7 MiB + 5: three read_file calls of at most 3 MiB, the last short.
        made = self.sandbox.process.exec_(
            "head -c 7340037 /dev/urandom > /tmp/big.bin && sha256sum /tmp/big.bin", timeout_ms=60_000
        )
        self.assertEqual(made.exit_code, 0, made.stderr)
        data = self.sandbox.fs.read_bytes("/tmp/big.bin")
        self.assertEqual(len(data), 7340037)
        self.assertEqual(hashlib.sha256(data).hexdigest(), made.stdout.split()[0])

    def test_read_of_binary_data_as_text_says_to_use_read_bytes(self) -> None:
        self.sandbox.fs.write("/tmp/binary.bin", b"\xff\xfe\x00")
        with self.assertRaisesRegex(Exception, "read_bytes"):
            self.sandbox.fs.read("/tmp/binary.bin")

    def test_list_shows_what_was_written(self) -> None:
        self.sandbox.fs.write("/tmp/listed/a.txt", "aaa")
        self.sandbox.fs.write("/tmp/listed/b.bin", b"\x00" * 10)
        self.sandbox.process.exec_("mkdir /tmp/listed/sub")
        entries = {entry.name: entry for entry in self.sandbox.fs.list("/tmp/listed")}
        self.assertEqual(sorted(entries), ["a.txt", "b.bin", "sub"])
        self.assertIsInstance(entries["a.txt"], FileEntry)
        self.assertEqual((entries["a.txt"].type, entries["a.txt"].size, entries["a.txt"].path),
                         ("file", 3, "/tmp/listed/a.txt"))
        self.assertEqual(entries["b.bin"].size, 10)
        self.assertEqual(entries["sub"].type, "directory")

    def test_mode_is_octal_as_int_or_text(self) -> None:
        self.sandbox.fs.write("/tmp/run.sh", "#!/bin/sh\necho ran\n", mode=0o755)
        self.sandbox.fs.write("/tmp/secret.txt", "s", mode="600")
        modes = self.sandbox.process.exec_("stat -c %a /tmp/run.sh /tmp/secret.txt; /tmp/run.sh")
        self.assertEqual(modes.stdout, "755\n600\nran\n")

    def test_a_missing_file_is_a_tool_error_naming_it(self) -> None:
        with self.assertRaises(ToolError) as caught:
            self.sandbox.fs.read_bytes("/tmp/does-not-exist.txt")
        self.assertEqual(caught.exception.tool, "read_file")
        self.assertIn("/tmp/does-not-exist.txt", caught.exception.message)

    def test_write_takes_only_text_or_bytes(self) -> None:
        with self.assertRaisesRegex(TypeError, "str or bytes"):
            self.sandbox.fs.write("/tmp/x", 42)  # type: ignore[arg-type]


both_modes(Files, globals())
