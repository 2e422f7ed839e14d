# SPDX-License-Identifier: MIT
"""Bridge: one connection to a lizard-bridge, a daemon or a local child.

Bridge() talks Streamable HTTP to `lizard-bridge serve` at LIZARD_API_URL
(default http://127.0.0.1:7070) with LIZARD_API_KEY, the names the daemon
and `lizard-bridge call` use; it connects on first use. Bridge.local()
starts `lizard-bridge stdio` itself (no daemon needed) and stops it on
close(). The stdio bridge starts its embedded desktop, session "default",
which lives as long as it (connect("default")); create() makes new
sessions in it with create_session, as a daemon would, so every option of
create (template, timeout_ms, size, envs, ...) means the same on both.
It also serves the viewer pages on a free loopback port (stdio --viewer),
so desktop.start() gives links there too. Every call has a deadline: `timeout` seconds for the round
trip plus what the tool itself may take (an exec's timeout_ms)."""

from __future__ import annotations

import base64
import builtins
import os
import shutil
import socket
import weakref
from typing import TYPE_CHECKING, Any, Callable, Dict, Mapping, Optional, Sequence, Union

from lizard_bridge._http import HttpTransport
from lizard_bridge._mcp import McpSession, OnProgress, ToolResult
from lizard_bridge._stdio import StdioTransport
from lizard_bridge._transport import Deadline, JsonObject
from lizard_bridge.errors import AuthError, BridgeError
from lizard_bridge.results import SandboxInfo, SnapshotInfo, TemplateInfo, Volume, VolumeInfo, reader
from lizard_bridge.sandbox import Sandbox

if TYPE_CHECKING:
    from types import TracebackType

DEFAULT_URL = "http://127.0.0.1:7070"


def _free_loopback_port() -> int:
    """A port of 127.0.0.1 free just now, for the local bridge's viewer."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port
_VOLUME_SECONDS = 60.0


class Bridge:
    """A bridge to make sandboxes with. Thread-safe; a context manager
    that closes it."""

    _session: McpSession

    def __init__(
        self,
        url: Optional[str] = None,
        api_key: Optional[str] = None,
        *,
        api_url: Optional[str] = None,
        timeout: float = 60.0,
        connect_timeout: float = 10.0,
    ) -> None:
        if url is not None and api_url is not None and url != api_url:
            raise ValueError("give url or api_url, not two different ones")
        chosen = url or api_url or os.environ.get("LIZARD_API_URL") or DEFAULT_URL
        key = api_key or os.environ.get("LIZARD_API_KEY")
        if not key:
            raise AuthError(
                f"no API key for the bridge at {chosen}: set LIZARD_API_KEY or pass api_key= "
                "(the daemon prints a generated one at start when LIZARD_API_KEY was unset)"
            )
        try:
            transport = HttpTransport(chosen, key, connect_timeout=connect_timeout)
        except ValueError as e:
            raise BridgeError(str(e)) from None
        self._setup(McpSession(transport, timeout), chosen)

    def _setup(self, session: McpSession, where: str) -> None:
        self._session = session
        self._where = where
        self._closed = False

    @classmethod
    def local(
        cls,
        binary: Optional[str] = None,
        *,
        args: Sequence[str] = (),
        env: Optional[Mapping[str, str]] = None,
        timeout: float = 60.0,
        start_timeout: float = 60.0,
        viewer: bool = True,
    ) -> "Bridge":
        """Starts `lizard-bridge stdio` (binary, else LIZARD_BRIDGE_BIN,
        else lizard-bridge on PATH) and returns a bridge to it, ready: its
        desktop has started. args go to stdio (e.g. ["--size", "1024x768"]);
        env replaces the environment it gets (default: this one's, without
        LIZARD_API_KEY). viewer serves desktop.start()'s pages on a free
        port of 127.0.0.1."""
        chosen = binary or os.environ.get("LIZARD_BRIDGE_BIN") or shutil.which("lizard-bridge")
        if not chosen:
            raise BridgeError(
                "no lizard-bridge binary: pass binary=, set LIZARD_BRIDGE_BIN, or put lizard-bridge on PATH"
            )
        if env is None:
            child_env: Dict[str, str] = {k: v for k, v in os.environ.items() if k != "LIZARD_API_KEY"}
        else:
            child_env = dict(env)
        extra = ["--viewer", f"127.0.0.1:{_free_loopback_port()}"] if viewer else []
        transport = StdioTransport([chosen, "stdio", *extra, *args], child_env)
        bridge = cls.__new__(cls)
        bridge._setup(McpSession(transport, timeout), f"local:{chosen}")
        # The child goes when this object does, or at the interpreter's exit,
        # if the script never closed it.
        weakref.finalize(bridge, transport.close)
        try:
            bridge._session.ensure_initialized(Deadline(start_timeout))
        except BaseException:
            transport.close()
            raise
        return bridge

    def __repr__(self) -> str:
        return f"Bridge({self._where!r})"

    def __enter__(self) -> "Bridge":
        return self

    def __exit__(
        self,
        exc_type: Optional[type],
        exc: Optional[BaseException],
        traceback: Optional["TracebackType"],
    ) -> None:
        self.close()

    def close(self) -> None:
        """Ends the MCP session (a local bridge's process with it). Sessions
        on a daemon live on until killed or their deadline."""
        if self._closed:
            return
        self._closed = True
        self._session.close()

    # -- the tools --

    def call_tool(
        self,
        name: str,
        arguments: Optional[Mapping[str, Any]] = None,
        *,
        seconds: float = 0.0,
        on_progress: Optional[OnProgress] = None,
    ) -> ToolResult:
        """Any tool of the bridge by name; arguments that are None are left
        out. seconds: how long the tool itself may take."""
        if self._closed:
            raise BridgeError(f"{name}: this bridge was closed")
        return self._session.call_tool(name, dict(arguments or {}), seconds=seconds, on_progress=on_progress)

    def tools(self) -> builtins.list[str]:
        """The names of the bridge's tools (tools/list)."""
        return [str(tool.get("name")) for tool in self._session.list_tools()]

    def tool_schema(self, name: str) -> Optional[JsonObject]:
        """A tool's inputSchema, or None when the bridge has no such tool."""
        for tool in self._session.list_tools():
            if tool.get("name") == name:
                schema = tool.get("inputSchema")
                return schema if isinstance(schema, dict) else {}
        return None

    def templates(self) -> builtins.list[str]:
        """The names of the templates create_session takes: what
        list_templates says (built-in and built ones), or, from a bridge
        without templates of its own making, the names its schema lists."""
        if "list_templates" in self.tools():
            return [t.name for t in self.list_templates()]
        schema = self.tool_schema("create_session") or {}
        properties = schema.get("properties")
        template = properties.get("template") if isinstance(properties, dict) else None
        enum = template.get("enum") if isinstance(template, dict) else None
        return [str(name) for name in enum] if isinstance(enum, builtins.list) else []

    # -- sandboxes --

    def create(
        self,
        template: Optional[str] = None,
        *,
        timeout_ms: Optional[int] = None,
        size: Optional[str] = None,
        screen: Optional[str] = None,
        envs: Optional[Mapping[str, str]] = None,
        metadata: Optional[Mapping[str, str]] = None,
        volume: Optional[str] = None,
        network: Optional[bool] = None,
    ) -> Sandbox:
        """A new sandbox; see Sandbox.create for the options."""
        return Sandbox.create(
            template,
            timeout_ms=timeout_ms,
            size=size,
            screen=screen,
            envs=envs,
            metadata=metadata,
            volume=volume,
            network=network,
            bridge=self,
        )

    def attach(
        self,
        vnc: str,
        *,
        password: Optional[str] = None,
        timeout_ms: Optional[int] = None,
        metadata: Optional[Mapping[str, str]] = None,
    ) -> Sandbox:
        """A session on a VNC server that already runs (vnc://[:PASSWORD@]
        HOST[:PORT] or unix:///path); only the desktop tools work there."""
        arguments = {
            "vnc": vnc,
            "password": password,
            "timeout_ms": timeout_ms,
            "metadata": dict(metadata) if metadata is not None else None,
        }
        return Sandbox._created(self, self.call_tool("create_session", arguments, seconds=60.0), False)

    def connect(self, sandbox_id: str) -> Sandbox:
        """The sandbox with this id; NotFoundError when there is none."""
        return Sandbox.connect(sandbox_id, bridge=self)

    def list(self) -> builtins.list[SandboxInfo]:
        """Every session of the bridge (list_sessions)."""
        r = reader("list_sessions", self.call_tool("list_sessions").structured)
        return [SandboxInfo.from_data(item, "list_sessions") for item in r.array("sessions")]

    # -- volumes --

    def create_volume(self, name: str, size: Optional[str] = None) -> Volume:
        """A volume for create(volume=name): size "64M".."16T" (default
        10G) or "unlimited"."""
        r = reader("create_volume", self.call_tool("create_volume", {"name": name, "size": size}, seconds=_VOLUME_SECONDS).structured)
        limit = r.opt_number("limit_bytes")
        return Volume(r.text("name"), None if limit is None else int(limit))

    def list_volumes(self) -> builtins.list[VolumeInfo]:
        r = reader("list_volumes", self.call_tool("list_volumes", seconds=_VOLUME_SECONDS).structured)
        return [VolumeInfo.from_data(item) for item in r.array("volumes")]

    def delete_volume(self, name: str) -> None:
        """Deletes a volume no session has mounted, and its files."""
        self.call_tool("delete_volume", {"name": name}, seconds=_VOLUME_SECONDS)

    # -- snapshots (Sandbox.snapshot and Sandbox.fork make them) --

    def list_snapshots(self) -> builtins.list[SnapshotInfo]:
        r = reader("list_snapshots", self.call_tool("list_snapshots", seconds=_VOLUME_SECONDS).structured)
        return [SnapshotInfo.from_data(item, "list_snapshots") for item in r.array("snapshots")]

    # -- templates --

    def list_templates(self) -> builtins.list[TemplateInfo]:
        r = reader("list_templates", self.call_tool("list_templates", seconds=_VOLUME_SECONDS).structured)
        return [TemplateInfo.from_data(item) for item in r.array("templates")]

    def build_template(
        self,
        name: str,
        *,
        base: Optional[str] = None,
        start: Optional[str] = None,
        files: Optional[Mapping[str, Union[str, bytes]]] = None,
        commands: Optional[Sequence[str]] = None,
        envs: Optional[Mapping[str, str]] = None,
        on_log: Optional[Callable[[str], None]] = None,
        timeout_s: float = 3600.0,
    ) -> TemplateInfo:
        """Builds template name for create(name): from base ("host", the
        default, or a template built before), files {path inside: text or
        bytes} written as root, then commands run as root with the network
        on; start "base" (default), "bare" or "desktop". on_log gets the
        build's log as it comes. A failed build raises ToolError and leaves
        nothing."""
        listed = [
            {"path": path, "text": data} if isinstance(data, str)
            else {"path": path, "data": base64.b64encode(bytes(data)).decode("ascii")}
            for path, data in (files or {}).items()
        ]
        arguments = {
            "name": name,
            "base": base,
            "start": start,
            "files": listed or None,
            "commands": list(commands) if commands is not None else None,
            "envs": dict(envs) if envs is not None else None,
        }
        progress = (lambda p: on_log(str(p.get("message", "")))) if on_log else None
        result = self.call_tool("build_template", arguments, seconds=timeout_s, on_progress=progress)
        return TemplateInfo.from_data(result.structured, "build_template")

    def delete_template(self, name: str) -> None:
        """Deletes a built template; refused while a session or a snapshot uses it."""
        self.call_tool("delete_template", {"name": name}, seconds=_VOLUME_SECONDS)

    def delete_snapshot(self, snapshot_id: str) -> None:
        """Deletes a snapshot; sandboxes restored from it keep their copies."""
        self.call_tool("delete_snapshot", {"snapshot": snapshot_id}, seconds=_VOLUME_SECONDS)
