# SPDX-License-Identifier: MIT
"""What can go wrong, as one family of exceptions.

Every error the client raises is a BridgeError, so a script can catch them
all in one place, and each kind a user acts on differently has a class of
its own: the key was refused (AuthError), the bridge could not be reached or
broke the connection (TransportError), an answer did not come in time
(BridgeTimeoutError), a tool refused or failed (ToolError, carrying the
tool's own message; NotFoundError when what it names does not exist), or
the bridge rejected the request itself (RpcError, e.g. a tool it does not
have). A command that exits non-zero is none of these: that is a result.
No message ever holds the API key."""

from __future__ import annotations


class BridgeError(Exception):
    """Anything the client raises."""


class TransportError(BridgeError, ConnectionError):
    """The bridge could not be reached, or the connection broke or carried
    something that is not MCP."""


class AuthError(BridgeError):
    """The bridge refused the API key (HTTP 401)."""


class BridgeTimeoutError(BridgeError, TimeoutError):
    """No answer within the call's deadline."""


class RpcError(BridgeError):
    """The bridge answered the request with a JSON-RPC error (an unknown
    tool, a malformed request, a busy bridge)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"{message} (JSON-RPC error {code})")
        self.code = code
        self.message = message


class ToolError(BridgeError):
    """A tool answered with isError: its message says what was wrong and
    what would work."""

    def __init__(self, tool: str, message: str) -> None:
        super().__init__(f"{tool}: {message}")
        self.tool = tool
        self.message = message


class NotFoundError(ToolError):
    """The session (sandbox) or volume a call names does not exist, or no
    longer does."""


# The bridge says "not found" in words, not codes (bridge/session/registry.c,
# sandbox/volume.c); these are the beginnings of those sentences.
_NOT_FOUND_PREFIXES = (
    "no session '",
    "there is no session",
    "there is no volume",
)


def tool_error(tool: str, message: str) -> ToolError:
    """The exception for a tool's error result."""
    if message.startswith(_NOT_FOUND_PREFIXES):
        return NotFoundError(tool, message)
    return ToolError(tool, message)
