# SPDX-License-Identifier: MIT
"""What the MCP session needs from a transport, and the deadline every wait
carries.

A transport moves JSON-RPC messages: request() sends one request and
returns its response, handing each notification that belongs to that
request (progress, matched by the request's progressToken) to a callback
on the calling thread before the response comes back, so a script's
on_stdout runs in the script's own thread. Two transports implement it:
Streamable HTTP to a daemon (_http.py) and a `lizard-bridge stdio` child
(_stdio.py). Every blocking step takes a Deadline, so no call can wait
longer than its caller allowed."""

from __future__ import annotations

import time
from typing import Any, Callable, Dict, Optional, Protocol

JsonObject = Dict[str, Any]
OnNotification = Callable[[JsonObject], None]

# Largest message the bridge takes (MCP_STDIO_MAX_MESSAGE, and HTTP bodies).
MAX_REQUEST_BYTES = 4 * 1024 * 1024
# Largest message this client accepts: a 3 MiB read_file carries its data
# twice as base64 (structuredContent and text), a screenshot less.
MAX_RESPONSE_BYTES = 64 * 1024 * 1024


class Deadline:
    """A point in monotonic time after which a wait gives up."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._at = time.monotonic() + seconds

    def remaining(self) -> float:
        """Seconds left, never negative."""
        return max(0.0, self._at - time.monotonic())

    def expired(self) -> bool:
        return self.remaining() <= 0.0

    def socket_timeout(self) -> float:
        """For settimeout(): a little more than nothing, since 0 would make
        the socket non-blocking rather than expire it."""
        return max(0.001, self.remaining())


class SessionExpired(Exception):
    """The daemon no longer knows our Mcp-Session-Id (HTTP 404): initialize
    again and resend. Internal; never reaches a script."""


class Transport(Protocol):
    """One connection to a bridge, shared by the threads of a script."""

    #: Names the bridge in messages: its URL, or the local binary.
    description: str

    def request(
        self,
        message: JsonObject,
        deadline: Deadline,
        on_notification: Optional[OnNotification],
        what: str,
    ) -> JsonObject:
        """Sends a request and returns its response; `what` names the call
        in errors ("tools/call exec")."""
        ...

    def notify(self, message: JsonObject, deadline: Deadline) -> None:
        """Sends a notification; waits only until it is sent."""
        ...

    def set_protocol_version(self, version: str) -> None:
        """The version initialize settled on, for the transports that send
        it with every message (MCP-Protocol-Version over HTTP)."""
        ...

    def close(self) -> None:
        ...
