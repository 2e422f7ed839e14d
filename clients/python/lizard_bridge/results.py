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
    screen: str
    created: Optional[datetime]
    deadline: Optional[datetime]
    timeout_ms: int
    remaining_ms: Optional[int]
    metadata: Dict[str, str]
    size: Optional[str] = None
    reason: Optional[str] = None
    volume: Optional[str] = None
    vnc: Optional[str] = None
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
            screen=r.text("size"),
            created=r.time("created"),
            deadline=r.time("deadline"),
            timeout_ms=r.integer("timeout_ms"),
            remaining_ms=r.opt_integer("remaining_ms"),
            metadata={str(k): str(v) for k, v in metadata.items()},
            size=size if isinstance(size, str) else None,
            reason=r.opt_text("reason"),
            volume=r.opt_text("volume"),
            vnc=r.opt_text("vnc"),
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


def reader(tool: str, data: Optional[Mapping[str, Any]]) -> _Reader:
    """Typed access to a tool's data, for the results without a class method."""
    return _Reader(tool, data)
