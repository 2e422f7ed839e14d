# SPDX-License-Identifier: MIT
"""Results as dataclasses, read from the tools' structuredContent.

The bridge checks its answers against each tool's outputSchema before it
sends them; this client still checks every field it reads where it reads
it (a proxy, another version or a broken peer may sit in between), and a
missing or mistyped field is a TransportError that names the tool and the
field. Fields the client does not know are kept in `raw`, so a newer
bridge's additions stay within reach."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Dict, List, Mapping, Optional, Type, TypeVar

from lizard_bridge.errors import TransportError

T = TypeVar("T")


class _Reader:
    """Typed access to one JSON object of a tool's answer."""

    def __init__(self, tool: str, data: Optional[Mapping[str, Any]]) -> None:
        if not isinstance(data, Mapping):
            raise TransportError(f"{tool}: the bridge's answer carries no data (structuredContent)")
        self.tool = tool
        self.data = data

    def _get(self, key: str, kind: Type[T], optional: bool) -> Optional[T]:
        value = self.data.get(key)
        if value is None and optional:
            return None
        # bool is an int in Python; a JSON true is no count.
        if isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
            return value
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value)  # type: ignore[return-value]
        raise TransportError(f"{self.tool}: the bridge's answer has no {kind.__name__} {key!r} (got {value!r})")

    def text(self, key: str) -> str:
        value = self._get(key, str, False)
        assert value is not None
        return value

    def opt_text(self, key: str) -> Optional[str]:
        return self._get(key, str, True)

    def integer(self, key: str) -> int:
        value = self._get(key, int, False)
        assert value is not None
        return value

    def opt_integer(self, key: str) -> Optional[int]:
        return self._get(key, int, True)

    def opt_number(self, key: str) -> Optional[float]:
        return self._get(key, float, True)

    def flag(self, key: str, default: bool = False) -> bool:
        value = self._get(key, bool, True)
        return default if value is None else value

    def obj(self, key: str) -> Dict[str, Any]:
        value = self._get(key, dict, True)
        return value if value is not None else {}

    def array(self, key: str) -> List[Any]:
        value = self._get(key, list, False)
        assert value is not None
        return value

    def time(self, key: str) -> Optional[datetime]:
        text = self.opt_text(key)
        if text is None:
            return None
        try:
            return datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            raise TransportError(f"{self.tool}: {key} {text!r} is not a date and time") from None


@dataclass(frozen=True)
class ExecResult:
    """A command that ran to its end. A non-zero exit_code is a result,
    not an error; exit_code is None when a signal ended the command."""

    stdout: str
    stderr: str
    exit_code: Optional[int]
    signal: Optional[str] = None
    timed_out: bool = False
    duration_ms: int = 0
    stdout_truncated: bool = False
    stderr_truncated: bool = False

    @classmethod
    def from_data(cls, data: Optional[Mapping[str, Any]]) -> "ExecResult":
        r = _Reader("exec", data)
        return cls(
            stdout=r.text("stdout"),
            stderr=r.text("stderr"),
            exit_code=r.opt_integer("exit_code"),
            signal=r.opt_text("signal"),
            timed_out=r.flag("timed_out"),
            duration_ms=r.integer("duration_ms"),
            stdout_truncated=r.flag("stdout_truncated"),
            stderr_truncated=r.flag("stderr_truncated"),
        )


@dataclass(frozen=True)
class SandboxInfo:
    """A session as session_info describes it. `screen` is its display
    (WxH), `size` the preset (small, medium, large) when it has limits."""

    sandbox_id: str
    template: str
    state: str
    screen: Optional[str]  # None for templates without one (base, interpreter)
    created: Optional[datetime]
    deadline: Optional[datetime]
    timeout_ms: int
    remaining_ms: Optional[int]
    metadata: Dict[str, str]
    size: Optional[str] = None
    reason: Optional[str] = None
    volume: Optional[str] = None
    vnc: Optional[str] = None
    access_token: Optional[str] = field(default=None, repr=False)  # for exposed ports
    exposed_ports: List[int] = field(default_factory=list)
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_data(cls, data: Optional[Mapping[str, Any]], tool: str = "session_info") -> "SandboxInfo":
        r = _Reader(tool, data)
        metadata = r.obj("metadata")
        resources = r.obj("resources")
        size = resources.get("size")
        return cls(
            sandbox_id=r.text("session"),
            template=r.text("template"),
            state=r.text("state"),
            screen=r.opt_text("size"),
            created=r.time("created"),
            deadline=r.time("deadline"),
            timeout_ms=r.integer("timeout_ms"),
            remaining_ms=r.opt_integer("remaining_ms"),
            metadata={str(k): str(v) for k, v in metadata.items()},
            size=size if isinstance(size, str) else None,
            reason=r.opt_text("reason"),
            volume=r.opt_text("volume"),
            vnc=r.opt_text("vnc"),
            access_token=r.opt_text("access_token"),
            exposed_ports=[int(p) for p in r.data.get("exposed_ports") or [] if isinstance(p, int)],
            raw=dict(r.data),
        )


@dataclass(frozen=True)
class StreamInfo:
    """Links to watch a desktop in a browser: url lets a person control it,
    view_only_url only shows it; novnc_* open it in noVNC."""

    url: str
    view_only_url: str
    novnc_url: Optional[str] = None
    novnc_view_only_url: Optional[str] = None

    @classmethod
    def from_data(cls, data: Optional[Mapping[str, Any]]) -> "StreamInfo":
        r = _Reader("start_stream", data)
        return cls(r.text("url"), r.text("view_only_url"), r.opt_text("novnc_url"), r.opt_text("novnc_view_only_url"))


@dataclass(frozen=True)
class ExposedPort:
    """A service inside a sandbox reached through the bridge (expose_port).
    url opens it in a browser (the token in it becomes a cookie of host);
    scripts send token in the request header named header, to host."""

    port: int
    host: str
    url: str
    token: str
    header: str

    @classmethod
    def from_data(cls, data: Optional[Mapping[str, Any]]) -> "ExposedPort":
        r = _Reader("expose_port", data)
        return cls(r.integer("port"), r.text("host"), r.text("url"), r.text("token"), r.text("header"))


@dataclass(frozen=True)
class FileEntry:
    """One entry of a directory listing; mtime in seconds since 1970."""

    name: str
    path: str
    type: str
    size: int
    mtime: int

    @classmethod
    def from_data(cls, directory: str, data: Any) -> "FileEntry":
        r = _Reader("list_files", data)
        name = r.text("name")
        return cls(name, directory.rstrip("/") + "/" + name, r.text("type"), r.opt_integer("size") or 0, r.opt_integer("mtime") or 0)


@dataclass(frozen=True)
class WriteInfo:
    """A file write_file wrote: its path in the sandbox and its length."""

    path: str
    bytes: int

    @classmethod
    def from_data(cls, data: Optional[Mapping[str, Any]]) -> "WriteInfo":
        r = _Reader("write_file", data)
        return cls(r.text("path"), r.integer("bytes"))


@dataclass(frozen=True)
class CursorPosition:
    """The pointer, in screenshot coordinates."""

    x: int
    y: int


@dataclass(frozen=True)
class ScreenSize:
    """The screen in screenshot coordinates; native_* only when scaled."""

    width: int
    height: int
    native_width: Optional[int] = None
    native_height: Optional[int] = None


@dataclass(frozen=True)
class WaitResult:
    """What wait saw: mode fixed or settle, how long, how often the screen
    changed, and (settle) whether it went quiet in time."""

    mode: str
    waited_ms: int
    updates: int
    settled: Optional[bool] = None


@dataclass(frozen=True)
class ComputerResult:
    """The computer tool's answer: its text and its screenshot, if any."""

    text: str
    image: Optional[bytes] = None


@dataclass(frozen=True)
class Volume:
    """A volume create_volume made; limit_bytes None: no limit."""

    name: str
    limit_bytes: Optional[int] = None


@dataclass(frozen=True)
class VolumeInfo:
    """A volume as list_volumes describes it; session is the one that has
    it mounted, or None."""

    name: str
    bytes: int
    limit_bytes: Optional[int]
    bytes_complete: bool
    session: Optional[str]
    other_daemon: bool

    @classmethod
    def from_data(cls, data: Any) -> "VolumeInfo":
        r = _Reader("list_volumes", data)
        used = r.opt_number("bytes")
        limit = r.opt_number("limit_bytes")
        return cls(
            name=r.text("name"),
            bytes=int(used or 0),
            limit_bytes=None if limit is None else int(limit),
            bytes_complete=r.flag("bytes_complete", True),
            session=r.opt_text("session"),
            other_daemon=r.flag("other_daemon"),
        )


@dataclass(frozen=True)
class SnapshotInfo:
    """A snapshot (snapshot_session, list_snapshots): a session's files and
    how it was made; restore with Sandbox.restore(snapshot_id) or
    Bridge.create(template=snapshot_id). bytes: its disk space on the host."""

    snapshot_id: str
    template: Optional[str]
    session: Optional[str]
    created: Optional[str]
    bytes: int

    @classmethod
    def from_data(cls, data: Any, tool: str = "snapshot_session") -> "SnapshotInfo":
        r = _Reader(tool, data)
        return cls(
            snapshot_id=r.text("snapshot"),
            template=r.opt_text("template"),
            session=r.opt_text("session"),
            created=r.opt_text("created"),
            bytes=int(r.opt_number("bytes") or 0),
        )


@dataclass(frozen=True)
class TemplateInfo:
    """A template (list_templates, build_template): built_in for desktop,
    bare, base and interpreter; start says what runs in its sessions; bytes
    its disk space on the host; build_ms how long its build took."""

    name: str
    built_in: bool
    start: Optional[str]
    base: Optional[str]
    bytes: int
    build_ms: Optional[int]

    @classmethod
    def from_data(cls, data: Any, tool: str = "list_templates") -> "TemplateInfo":
        r = _Reader(tool, data)
        took = r.opt_number("build_ms")
        return cls(
            name=r.text("name"),
            built_in=r.flag("built_in"),
            start=r.opt_text("start"),
            base=r.opt_text("base"),
            bytes=int(r.opt_number("bytes") or 0),
            build_ms=None if took is None else int(took),
        )


# The result forms run_code names, besides extra (any other MIME type).
_RESULT_FORMS = ("text", "html", "markdown", "svg", "png", "jpeg", "latex", "javascript")


@dataclass(frozen=True)
class Result:
    """One rich output of run_code: the last expression's value
    (is_main_result) or something displayed (a chart), in each form the
    kernel gave. png and jpeg are base64; json is the parsed value; extra
    holds any other MIME type's form by type. data is its main text form."""

    is_main_result: bool
    text: Optional[str] = None
    html: Optional[str] = None
    markdown: Optional[str] = None
    svg: Optional[str] = None
    png: Optional[str] = None
    jpeg: Optional[str] = None
    latex: Optional[str] = None
    javascript: Optional[str] = None
    json: Any = None
    extra: Dict[str, Any] = field(default_factory=dict)

    @property
    def data(self) -> Optional[str]:
        for form in (self.text, self.markdown, self.html, self.latex, self.svg):
            if form is not None:
                return form
        return None

    def formats(self) -> List[str]:
        """The forms this result has, by name."""
        names = [name for name in _RESULT_FORMS if getattr(self, name) is not None]
        return names + (["json"] if self.json is not None else []) + sorted(self.extra)

    @classmethod
    def from_data(cls, data: Any) -> "Result":
        r = _Reader("run_code", data)
        forms = {name: r.opt_text(name) for name in _RESULT_FORMS}
        return cls(is_main_result=r.flag("is_main_result"), json=r.data.get("json"), extra=r.obj("extra"), **forms)


@dataclass(frozen=True)
class Logs:
    """stdout and stderr as the chunks they came in."""

    stdout: List[str]
    stderr: List[str]


@dataclass(frozen=True)
class ExecutionError:
    """An exception in the code: name (ZeroDivisionError), value (its
    message, also as message) and the traceback as plain text."""

    name: str
    value: str
    traceback: str

    @property
    def message(self) -> str:
        return self.value


@dataclass(frozen=True)
class Execution:
    """What run_code gave: results, logs, error (None when it ran clean),
    execution_count (Python), exit_code (bash, javascript), whether the
    time limit hit, whether the context was restarted (its state is gone),
    and a note saying what happened to the context, if anything did."""

    results: List[Result]
    logs: Logs
    error: Optional[ExecutionError]
    execution_count: Optional[int]
    context: Optional[str]
    language: str
    exit_code: Optional[int] = None
    timed_out: bool = False
    restarted: bool = False
    note: Optional[str] = None
    truncated: Dict[str, Any] = field(default_factory=dict)
    duration_ms: int = 0

    @property
    def text(self) -> Optional[str]:
        """The main result's text form, if there is one."""
        for result in self.results:
            if result.is_main_result:
                return result.data
        return None

    @classmethod
    def from_data(cls, data: Optional[Mapping[str, Any]]) -> "Execution":
        r = _Reader("run_code", data)
        logs = _Reader("run_code", r.obj("logs"))
        error_data = r.data.get("error")
        error = None
        if error_data is not None:
            e = _Reader("run_code", error_data)
            error = ExecutionError(e.text("name"), e.text("value"), e.text("traceback"))
        return cls(
            results=[Result.from_data(item) for item in r.array("results")],
            logs=Logs([str(c) for c in logs.array("stdout")], [str(c) for c in logs.array("stderr")]),
            error=error,
            execution_count=r.opt_integer("execution_count"),
            context=r.opt_text("context"),
            language=r.text("language"),
            exit_code=r.opt_integer("exit_code"),
            timed_out=r.flag("timed_out"),
            restarted=r.flag("restarted"),
            note=r.opt_text("note"),
            truncated=r.obj("truncated"),
            duration_ms=r.opt_integer("duration_ms") or 0,
        )


@dataclass(frozen=True)
class CodeContext:
    """A place run_code runs in: its id, language and working directory."""

    id: str
    language: str
    cwd: str
    is_default: bool = False

    @classmethod
    def from_data(cls, data: Any, tool: str) -> "CodeContext":
        r = _Reader(tool, data)
        return cls(r.text("id"), r.text("language"), r.text("cwd"), r.flag("is_default"))


def reader(tool: str, data: Optional[Mapping[str, Any]]) -> _Reader:
    """Typed access to a tool's data, for the results without a class method."""
    return _Reader(tool, data)
