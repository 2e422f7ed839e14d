# SPDX-License-Identifier: MIT
"""A sandbox (the bridge's session) and its parts: process, fs, desktop.

Sandbox is a handle on a session id: every method is one tool call that
names it, so a sandbox object can be made again from its id in another
process (Sandbox.connect). As a context manager it kills the session when
the block ends, also when the block raised (then a failing kill does not
hide the block's own exception). Sandbox.create() without a bridge makes
one from LIZARD_API_URL and LIZARD_API_KEY and closes it with the
sandbox. process.exec_ streams output to callbacks through the call's
progress notifications, on the calling thread; fs moves text or exact
bytes, reading large files in pieces of the bridge's 3 MiB."""

from __future__ import annotations

import base64
import binascii
import builtins
from typing import TYPE_CHECKING, Any, Callable, Dict, Mapping, Optional, Sequence, Type, TypeVar, Union

from lizard_bridge._mcp import ToolResult
from lizard_bridge._transport import JsonObject
from lizard_bridge.desktop import Desktop
from lizard_bridge.errors import BridgeError, NotFoundError, TransportError
from lizard_bridge.results import (
    CodeContext,
    Execution,
    ExecResult,
    ExposedPort,
    FileEntry,
    SandboxInfo,
    SnapshotInfo,
    WriteInfo,
    reader,
)

if TYPE_CHECKING:
    from types import TracebackType

    from lizard_bridge.bridge import Bridge

S = TypeVar("S", bound="Sandbox")
OnChunk = Callable[[str], None]

# What read_file gives at most per call (bridge/tools/files.c).
_READ_CHUNK = 3 * 1024 * 1024
_FILE_SECONDS = 30.0
_CREATE_SECONDS = 60.0
# exec's own default limit (bridge/tools/exec.c), and a margin for its end.
_EXEC_DEFAULT_MS = 60000
_EXEC_MARGIN_SECONDS = 5.0
# run_code's: past its limit the bridge interrupts, waits 2 s, and may
# start the kernel anew.
_RUN_CODE_MARGIN_SECONDS = 40.0


def _output_callback(on_stdout: Optional[OnChunk], on_stderr: Optional[OnChunk]) -> Optional[Callable[[JsonObject], None]]:
    """Routes a call's progress messages ("stdout: ...", "stderr: ...")
    to the callbacks; None when there are none."""
    if on_stdout is None and on_stderr is None:
        return None

    def on_progress(params: JsonObject) -> None:
        message = params.get("message")
        if not isinstance(message, str):
            return
        if message.startswith("stdout: ") and on_stdout is not None:
            on_stdout(message[len("stdout: ") :])
        elif message.startswith("stderr: ") and on_stderr is not None:
            on_stderr(message[len("stderr: ") :])

    return on_progress


class Process:
    """Commands in the sandbox; each exec_ is a process of its own."""

    def __init__(self, sandbox: "Sandbox") -> None:
        self._sandbox = sandbox

    def exec_(
        self,
        cmd: Union[str, Sequence[str]],
        timeout_ms: Optional[int] = None,
        envs: Optional[Mapping[str, str]] = None,
        workdir: Optional[str] = None,
        user: Optional[str] = None,
        on_stdout: Optional[OnChunk] = None,
        on_stderr: Optional[OnChunk] = None,
        *,
        stdin: Optional[str] = None,
    ) -> ExecResult:
        """Runs cmd (a string for /bin/sh -c, or an argv list) to its end.
        timeout_ms (1000..600000, default 60000) limits this call and kills
        the command's whole tree; envs add to the sandbox's; user is "user"
        or "root" (root inside the sandbox only). on_stdout and on_stderr
        get the output in chunks as it arrives. A non-zero exit_code is a
        result, not an exception."""
        arguments: Dict[str, Any] = {
            "envs": dict(envs) if envs is not None else None,
            "workdir": workdir,
            "user": user,
            "stdin": stdin,
            "timeout_ms": timeout_ms,
        }
        if isinstance(cmd, str):
            arguments["command"] = cmd
        else:
            arguments["argv"] = [str(part) for part in cmd]
        on_progress = _output_callback(on_stdout, on_stderr)
        seconds = (timeout_ms if timeout_ms is not None else _EXEC_DEFAULT_MS) / 1000.0 + _EXEC_MARGIN_SECONDS
        result = self._sandbox._call("exec", arguments, seconds=seconds, on_progress=on_progress)
        return ExecResult.from_data(result.structured)


class Filesystem:
    """Files in the sandbox; relative paths start at HOME (/home/user)."""

    def __init__(self, sandbox: "Sandbox") -> None:
        self._sandbox = sandbox

    def write(
        self,
        path: str,
        data: Union[str, bytes, bytearray, memoryview],
        *,
        mode: Union[int, str, None] = None,
        user: Optional[str] = None,
    ) -> WriteInfo:
        """Writes text (as UTF-8) or bytes (exactly) to path, making its
        parent directories; mode is octal (0o644 or "644"). One call takes
        what fits in the bridge's 4 MiB message: about 3 MiB of bytes."""
        arguments: Dict[str, Any] = {"path": path, "user": user}
        if isinstance(mode, int):
            arguments["mode"] = format(mode, "o")
        elif mode is not None:
            arguments["mode"] = mode
        if isinstance(data, str):
            arguments["text"] = data
        elif isinstance(data, (bytes, bytearray, memoryview)):
            arguments["data"] = base64.b64encode(bytes(data)).decode("ascii")
        else:
            raise TypeError(f"fs.write takes str or bytes, not {builtins.type(data).__name__}")
        return WriteInfo.from_data(self._sandbox._call("write_file", arguments, seconds=_FILE_SECONDS).structured)

    def read_bytes(self, path: str, *, user: Optional[str] = None) -> bytes:
        """The file's bytes, exactly, in as many read_file calls as it
        takes (3 MiB each)."""
        parts: builtins.list[bytes] = []
        offset = 0
        while True:
            result = self._sandbox._call(
                "read_file", {"path": path, "offset": offset, "length": _READ_CHUNK, "user": user}, seconds=_FILE_SECONDS
            )
            r = reader("read_file", result.structured)
            encoding = r.text("encoding")
            if encoding == "utf-8":
                piece = r.text("text").encode("utf-8")
            elif encoding == "base64":
                try:
                    piece = base64.b64decode(r.text("data"), validate=True)
                except (binascii.Error, ValueError):
                    raise TransportError("read_file: the bridge sent data that is not base64") from None
            else:
                raise TransportError(f"read_file: unknown encoding {encoding!r}")
            if len(piece) != r.integer("length"):
                raise TransportError(
                    f"read_file: the bridge said {r.integer('length')} bytes at offset {offset} and sent {len(piece)}"
                )
            parts.append(piece)
            offset += len(piece)
            if len(piece) < _READ_CHUNK or offset >= r.integer("size"):
                return b"".join(parts)

    def read(self, path: str, *, user: Optional[str] = None, encoding: str = "utf-8", errors: str = "strict") -> str:
        """The file as text (UTF-8 unless told otherwise; use read_bytes for
        binary files)."""
        data = self.read_bytes(path, user=user)
        try:
            return data.decode(encoding, errors)
        except UnicodeDecodeError as e:
            raise BridgeError(
                f"{path} is not {encoding} text (byte {e.start}: {e.reason}); read it with fs.read_bytes"
            ) from None

    def list(self, path: Optional[str] = None, *, user: Optional[str] = None) -> builtins.list[FileEntry]:
        """The entries of a directory (default HOME), at most 10000."""
        r = reader("list_files", self._sandbox._call("list_files", {"path": path, "user": user}, seconds=_FILE_SECONDS).structured)
        directory = r.text("path")
        return [FileEntry.from_data(directory, entry) for entry in r.array("entries")]


class Sandbox:
    """One session of a bridge, by id."""

    def __init__(self, bridge: "Bridge", sandbox_id: str, *, owns_bridge: bool = False) -> None:
        self._bridge = bridge
        self.sandbox_id = sandbox_id
        self._owns_bridge = owns_bridge
        self._killed = False
        self.process = Process(self)
        self.fs = Filesystem(self)
        self.files = self.fs
        self.desktop = Desktop(self)

    def __repr__(self) -> str:
        return f"{builtins.type(self).__name__}({self.sandbox_id!r})"

    @property
    def id(self) -> str:
        return self.sandbox_id

    @property
    def bridge(self) -> "Bridge":
        return self._bridge

    def _call(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        *,
        seconds: float = 0.0,
        on_progress: Optional[Callable[[JsonObject], None]] = None,
    ) -> ToolResult:
        return self._bridge.call_tool(tool, {**arguments, "session": self.sandbox_id}, seconds=seconds, on_progress=on_progress)

    # -- making and finding --

    @classmethod
    def create(
        cls: Type[S],
        template: Optional[str] = None,
        *,
        timeout_ms: Optional[int] = None,
        size: Optional[str] = None,
        screen: Optional[str] = None,
        envs: Optional[Mapping[str, str]] = None,
        metadata: Optional[Mapping[str, str]] = None,
        volume: Optional[str] = None,
        network: Optional[bool] = None,
        bridge: Optional["Bridge"] = None,
    ) -> S:
        """A new sandbox from template (the bridge's default, desktop, when
        None). timeout_ms is its lifetime (default 300000, 0 = never); size
        small/medium/large; screen "WxH"; envs for every command; metadata
        comes back from get_info(); volume is mounted at /workspace;
        network False leaves only loopback. Without bridge, one is made
        from LIZARD_API_URL/LIZARD_API_KEY and closed with the sandbox."""
        from lizard_bridge.bridge import Bridge

        owns = bridge is None
        used = bridge if bridge is not None else Bridge()
        try:
            arguments = {
                "template": template,
                "timeout_ms": timeout_ms,
                "size": size,
                "screen": screen,
                "envs": dict(envs) if envs is not None else None,
                "metadata": dict(metadata) if metadata is not None else None,
                "volume": volume,
                "network": network,
            }
            return cls._created(used, used.call_tool("create_session", arguments, seconds=_CREATE_SECONDS), owns)
        except BaseException:
            if owns:
                used.close()
            raise

    @classmethod
    def _created(cls: Type[S], bridge: "Bridge", result: ToolResult, owns_bridge: bool) -> S:
        info = SandboxInfo.from_data(result.structured, "create_session")
        return cls(bridge, info.sandbox_id, owns_bridge=owns_bridge)

    @classmethod
    def connect(cls: Type[S], sandbox_id: str, *, bridge: Optional["Bridge"] = None) -> S:
        """The sandbox with this id; NotFoundError when there is none."""
        from lizard_bridge.bridge import Bridge

        owns = bridge is None
        used = bridge if bridge is not None else Bridge()
        try:
            sandbox = cls(used, sandbox_id, owns_bridge=owns)
            sandbox.get_info()
            return sandbox
        except BaseException:
            if owns:
                used.close()
            raise

    @classmethod
    def list(cls, *, bridge: Optional["Bridge"] = None) -> builtins.list[SandboxInfo]:
        """Every session of the bridge."""
        from lizard_bridge.bridge import Bridge

        if bridge is not None:
            return bridge.list()
        with Bridge() as made:
            return made.list()

    # -- its lifetime --

    def get_info(self) -> SandboxInfo:
        """State, deadline, metadata, size, resources (session_info)."""
        return SandboxInfo.from_data(self._call("session_info", {}).structured)

    def is_running(self) -> bool:
        """Whether the session exists and is neither failed nor ended."""
        try:
            return self.get_info().state not in ("failed", "ended")
        except NotFoundError:
            return False

    def set_timeout(self, timeout_ms: int) -> SandboxInfo:
        """A new lifetime from now (1000..2147483647 ms)."""
        return SandboxInfo.from_data(self._call("set_timeout", {"timeout_ms": timeout_ms}).structured, "set_timeout")

    def pause(self) -> SandboxInfo:
        """Freezes every process; memory and processes stay as they are."""
        return SandboxInfo.from_data(self._call("pause_session", {}).structured, "pause_session")

    def snapshot(self) -> SnapshotInfo:
        """Keeps the sandbox's files (its whole root, HOME, /tmp, /workspace
        but a volume) with its template, screen, envs and metadata; its
        processes are frozen for the copy, then go on. Memory and running
        programs are not kept (pause keeps them)."""
        return SnapshotInfo.from_data(self._call("snapshot_session", {}, seconds=_CREATE_SECONDS).structured)

    def fork(self) -> "Sandbox":
        """A new sandbox of the same bridge from a snapshot of this one,
        taken now; the two go on independently."""
        result = self._call("fork_session", {}, seconds=_CREATE_SECONDS)
        return Sandbox._created(self._bridge, result, False)

    @classmethod
    def restore(cls: Type[S], snapshot: Union[str, SnapshotInfo], *, bridge: Optional["Bridge"] = None,
                **options: Any) -> S:
        """A new sandbox from a snapshot (its id or SnapshotInfo); options
        as for create."""
        snapshot_id = snapshot.snapshot_id if isinstance(snapshot, SnapshotInfo) else snapshot
        return cls.create(snapshot_id, bridge=bridge, **options)

    def resume(self) -> SandboxInfo:
        return SandboxInfo.from_data(self._call("resume_session", {}).structured, "resume_session")

    def kill(self) -> None:
        """Ends the session now: its processes are stopped and its files
        removed. A bridge this sandbox made for itself is closed too."""
        try:
            self._call("kill_session", {})
            self._killed = True
        finally:
            if self._owns_bridge:
                self._bridge.close()

    # -- services inside --

    def expose_port(self, port: int) -> ExposedPort:
        """Lets the service listening on port inside the sandbox (on its
        127.0.0.1 or any address) be reached through the bridge: .url for a
        browser, .host plus .token in the .header header for scripts.
        Requests without the token get 401."""
        return ExposedPort.from_data(self._call("expose_port", {"port": port}).structured)

    def get_host(self, port: int) -> str:
        """The host name <port>-<sandbox>.localhost:<bridge port> under
        which port is reached once exposed (expose_port gives the token)."""
        return reader("get_host", self._call("get_host", {"port": port}).structured).text("host")

    def unexpose_port(self, port: int) -> None:
        """Takes an exposed port back: its connections close, and its
        requests get 404 from then on."""
        self._call("unexpose_port", {"port": port})

    # -- code --

    def run_code(
        self,
        code: str,
        language: Optional[str] = None,
        context: Optional[Union[str, CodeContext]] = None,
        envs: Optional[Mapping[str, str]] = None,
        timeout_ms: Optional[int] = None,
        on_stdout: Optional[OnChunk] = None,
        on_stderr: Optional[OnChunk] = None,
    ) -> Execution:
        """Runs code. Python (the default) runs in the sandbox's default
        context, or context, whose variables survive between calls;
        language "bash" or "javascript" runs a fresh process each call.
        timeout_ms (default 60000) limits this call: Python is interrupted
        there, and restarted (its state gone) if it does not stop. An
        exception in the code is the result's error, not an exception
        here."""
        arguments: Dict[str, Any] = {
            "code": code,
            "language": language,
            "context": context.id if isinstance(context, CodeContext) else context,
            "envs": dict(envs) if envs is not None else None,
            "timeout_ms": timeout_ms,
        }
        seconds = (timeout_ms if timeout_ms is not None else _EXEC_DEFAULT_MS) / 1000.0 + _RUN_CODE_MARGIN_SECONDS
        result = self._call("run_code", arguments, seconds=seconds, on_progress=_output_callback(on_stdout, on_stderr))
        return Execution.from_data(result.structured)

    def create_code_context(self, language: Optional[str] = None, cwd: Optional[str] = None) -> CodeContext:
        """A context of its own (python by default, bash, javascript), in
        cwd (default HOME); a Python one has a kernel running already."""
        result = self._call("create_code_context", {"language": language, "cwd": cwd}, seconds=_CREATE_SECONDS)
        return CodeContext.from_data(result.structured, "create_code_context")

    def list_code_contexts(self) -> builtins.list[CodeContext]:
        r = reader("list_code_contexts", self._call("list_code_contexts", {}).structured)
        return [CodeContext.from_data(item, "list_code_contexts") for item in r.array("contexts")]

    def restart_code_context(self, context: Union[str, CodeContext]) -> CodeContext:
        """Fresh state, same id."""
        ident = context.id if isinstance(context, CodeContext) else context
        result = self._call("restart_code_context", {"context": ident}, seconds=_CREATE_SECONDS)
        return CodeContext.from_data(result.structured, "restart_code_context")

    def remove_code_context(self, context: Union[str, CodeContext]) -> None:
        ident = context.id if isinstance(context, CodeContext) else context
        self._call("remove_code_context", {"context": ident})

    def __enter__(self: S) -> S:
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        traceback: Optional["TracebackType"],
    ) -> None:
        if self._killed:
            return
        try:
            self.kill()
        except NotFoundError:
            pass  # gone already: its deadline passed, or it was killed elsewhere
        except BridgeError as failed:
            if exc is None:
                raise
            # The block's own exception matters more; keep the kill's with it.
            if hasattr(exc, "add_note"):
                exc.add_note(f"and killing sandbox {self.sandbox_id} failed: {failed}")


class CodeSandbox(Sandbox):
    """A sandbox made for run_code: template "interpreter" unless another
    is given, its Python kernel already running when create returns."""

    @classmethod
    def create(
        cls: Type[S],
        template: Optional[str] = "interpreter",
        **options: Any,
    ) -> S:
        return super().create(template, **options)
