# SPDX-License-Identifier: MIT
"""The MCP session over a transport: initialize once, then tools/call.

It picks request ids and progress tokens, hands a call's progress to its
callback, and turns answers into a ToolResult or an exception: a JSON-RPC
error is an RpcError, a result with isError a ToolError carrying the
tool's message. A call that runs out of time, or whose callback raises,
is cancelled on the bridge (notifications/cancelled) so that the command
behind it stops too. When the daemon has forgotten the MCP session (its
404), the session initializes again and sends the call once more, which
is safe: a 404 means the call never ran. tools/list is asked once and
kept, so that a script can ask which tools and templates this bridge
has."""

from __future__ import annotations

import base64
import binascii
import itertools
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

from lizard_bridge._transport import Deadline, JsonObject, SessionExpired, Transport
from lizard_bridge.errors import BridgeError, RpcError, TransportError, tool_error

PROTOCOL_VERSION = "2025-11-25"
CLIENT_NAME = "lizard-bridge-python"
CLIENT_VERSION = "0.1.0"

OnProgress = Callable[[JsonObject], None]


@dataclass(frozen=True)
class ToolResult:
    """What a tool answered: its data (structuredContent, for tools that
    declare an outputSchema), its text blocks joined, and its images as
    (MIME type, bytes)."""

    structured: Optional[Dict[str, Any]]
    text: str
    images: List[Tuple[str, bytes]] = field(default_factory=list)


def _tool_result(tool: str, result: Any) -> ToolResult:
    if not isinstance(result, dict) or not isinstance(result.get("content"), list):
        raise TransportError(f"{tool}: the bridge's result has no content list")
    texts: List[str] = []
    images: List[Tuple[str, bytes]] = []
    for block in result["content"]:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif block.get("type") == "image" and isinstance(block.get("data"), str):
            try:
                data = base64.b64decode(block["data"], validate=True)
            except (binascii.Error, ValueError):
                raise TransportError(f"{tool}: the bridge sent an image that is not base64") from None
            images.append((str(block.get("mimeType", "")), data))
    text = "\n".join(texts)
    if result.get("isError") is True:
        raise tool_error(tool, text or "failed without a message")
    structured = result.get("structuredContent")
    return ToolResult(structured if isinstance(structured, dict) else None, text, images)


class McpSession:
    """One MCP session with a bridge. Thread-safe; initializes on first use."""

    def __init__(self, transport: Transport, timeout: float) -> None:
        self.transport = transport
        self.timeout = timeout
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._initialized = False
        self._tools: Optional[List[JsonObject]] = None
        self.server_info: JsonObject = {}

    def _next_id(self) -> int:
        with self._lock:
            return next(self._ids)

    def _initialize(self, deadline: Deadline) -> None:
        message = {
            "jsonrpc": "2.0",
            "id": self._next_id(),
            "method": "initialize",
            "params": {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": CLIENT_NAME, "version": CLIENT_VERSION},
            },
        }
        response = self.transport.request(message, deadline, None, "initialize")
        result = self._result(response, "initialize")
        version = result.get("protocolVersion") if isinstance(result, dict) else None
        if not isinstance(version, str):
            raise TransportError(f"initialize: {self.transport.description} named no protocol version")
        self.transport.set_protocol_version(version)
        info = result.get("serverInfo")
        self.server_info = info if isinstance(info, dict) else {}
        self.transport.notify({"jsonrpc": "2.0", "method": "notifications/initialized"}, deadline)

    def ensure_initialized(self, deadline: Optional[Deadline] = None) -> None:
        with self._lock:
            if self._initialized:
                return
        # Two threads may both initialize; the second one's MCP session
        # wins, which is harmless.
        self._initialize(deadline or Deadline(self.timeout))
        with self._lock:
            self._initialized = True

    def _result(self, response: JsonObject, what: str) -> Any:
        error = response.get("error")
        if isinstance(error, dict):
            code = error.get("code")
            message = error.get("message")
            raise RpcError(code if isinstance(code, int) else 0, f"{what}: {message}")
        if "result" not in response:
            raise TransportError(f"{what}: {self.transport.description} answered neither result nor error")
        return response["result"]

    def request(
        self,
        method: str,
        params: JsonObject,
        deadline: Deadline,
        what: str,
        on_progress: Optional[OnProgress] = None,
    ) -> Any:
        """A request whose progress (when on_progress is given) goes to
        on_progress; cancelled on the bridge when it times out or the
        callback raises."""
        self.ensure_initialized(deadline)
        for attempt in (1, 2):
            request_id = self._next_id()
            message: JsonObject = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": dict(params)}
            token = f"py-{request_id}"
            on_notification = None
            if on_progress is not None:
                message["params"]["_meta"] = {"progressToken": token}
                callback = on_progress

                def on_notification(notification: JsonObject) -> None:
                    notification_params = notification.get("params")
                    if (
                        notification.get("method") == "notifications/progress"
                        and isinstance(notification_params, dict)
                        and notification_params.get("progressToken") == token
                    ):
                        callback(notification_params)

            try:
                response = self.transport.request(message, deadline, on_notification, what)
            except SessionExpired:
                if attempt == 2:
                    raise TransportError(f"{what}: {self.transport.description} keeps forgetting the MCP session") from None
                with self._lock:
                    self._initialized = False
                self.ensure_initialized(deadline)
                continue
            except BaseException:
                self._cancel(request_id, what)
                raise
            return self._result(response, what)
        raise AssertionError("unreachable")

    def _cancel(self, request_id: int, what: str) -> None:
        try:
            self.transport.notify(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": {"requestId": request_id, "reason": f"the client gave up on {what}"},
                },
                Deadline(2.0),
            )
        except (BridgeError, SessionExpired):
            pass  # the bridge is gone or busy; nothing left to stop

    def call_tool(
        self,
        name: str,
        arguments: JsonObject,
        *,
        seconds: Optional[float] = None,
        on_progress: Optional[OnProgress] = None,
    ) -> ToolResult:
        """Calls a tool; `seconds` is how long the call itself may take
        (beyond the session's own timeout for the round trip)."""
        args = {key: value for key, value in arguments.items() if value is not None}
        deadline = Deadline(self.timeout + (seconds or 0.0))
        result = self.request("tools/call", {"name": name, "arguments": args}, deadline, name, on_progress)
        return _tool_result(name, result)

    def list_tools(self) -> List[JsonObject]:
        """The bridge's tools as tools/list gives them (asked once)."""
        with self._lock:
            if self._tools is not None:
                return self._tools
        tools: List[JsonObject] = []
        cursor: Optional[str] = None
        deadline = Deadline(self.timeout)
        while True:
            params: JsonObject = {"cursor": cursor} if cursor else {}
            result = self.request("tools/list", params, deadline, "tools/list")
            if not isinstance(result, dict) or not isinstance(result.get("tools"), list):
                raise TransportError(f"tools/list: {self.transport.description} sent no tool list")
            tools.extend(tool for tool in result["tools"] if isinstance(tool, dict))
            next_cursor = result.get("nextCursor")
            if not isinstance(next_cursor, str) or not next_cursor:
                break
            cursor = next_cursor
        with self._lock:
            self._tools = tools
        return tools

    def close(self) -> None:
        self.transport.close()
