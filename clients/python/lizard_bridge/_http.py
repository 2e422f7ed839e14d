# SPDX-License-Identifier: MIT
"""MCP's Streamable HTTP transport (2025-11-25) to `lizard-bridge serve`.

Each request is one POST to /mcp with the key as a Bearer token, answered
either as JSON or, when it carries a progressToken, as an SSE stream whose
events are the request's progress notifications and then its response.
The Mcp-Session-Id from initialize goes with every later message; a 404
for it means the daemon forgot us (it keeps 1024), and the session layer
initializes again. Connections are kept alive in a small pool so that
several threads can call at once (an on_stdout callback may itself call
the bridge while its command runs); one idle near the daemon's idle limit
is not reused, and a reused one that the daemon closed before answering
is retried once on a fresh connection. Every connect, write and read runs
against the call's deadline: a daemon that accepts and never answers is a
BridgeTimeoutError, not a hang. URLs are http://HOST:PORT[/path],
https://..., or unix:/path/to/socket; the path defaults to /mcp."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
import urllib.parse
from typing import List, Optional, Tuple

from lizard_bridge._transport import (
    MAX_REQUEST_BYTES,
    MAX_RESPONSE_BYTES,
    Deadline,
    JsonObject,
    OnNotification,
    SessionExpired,
)
from lizard_bridge.errors import AuthError, BridgeError, BridgeTimeoutError, TransportError

# The daemon closes a connection idle for --request-timeout (30 s by
# default); one idle for this long is not worth the race.
_MAX_IDLE_SECONDS = 10.0
_MAX_IDLE_CONNECTIONS = 8
_MAX_SSE_LINE = MAX_RESPONSE_BYTES
# After the response event only the end of the chunked body should follow.
_STREAM_END_SECONDS = 2.0


class _UnixHTTPConnection(http.client.HTTPConnection):
    """HTTP over a UNIX socket (serve --listen /path)."""

    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self._socket_path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(self.timeout)
            sock.connect(self._socket_path)
        except BaseException:
            sock.close()
            raise
        self.sock = sock


class Endpoint:
    """Where a daemon listens, parsed from LIZARD_API_URL's forms."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.unix_path: Optional[str] = None
        self.host = ""
        self.port: Optional[int] = None
        self.tls = False
        self.path = "/mcp"
        if url.startswith("unix:"):
            path = url[len("unix:") :]
            while path.startswith("//"):
                path = path[1:]
            if not path.startswith("/"):
                raise ValueError(f"the URL {url!r} names no absolute socket path; use unix:/path/to/socket")
            self.unix_path = path
            return
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(
                f"the URL {url!r} is not one the bridge serves; use http://HOST:PORT, "
                "https://HOST[:PORT] or unix:/path/to/socket"
            )
        if parts.username or parts.password:
            raise ValueError("the URL carries credentials; give the key as api_key or LIZARD_API_KEY instead")
        self.tls = parts.scheme == "https"
        self.host = parts.hostname
        try:
            self.port = parts.port
        except ValueError as e:
            raise ValueError(f"the URL {url!r} has a bad port: {e}") from None
        if parts.path not in ("", "/"):
            self.path = parts.path

    def connection(self, timeout: float) -> http.client.HTTPConnection:
        if self.unix_path is not None:
            return _UnixHTTPConnection(self.unix_path, timeout)
        if self.tls:
            return http.client.HTTPSConnection(self.host, self.port, timeout=timeout)
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)


def _error_text(body: bytes) -> str:
    """The daemon's {"error": "..."} sentence, or the start of the body."""
    try:
        parsed = json.loads(body.decode("utf-8"))
        if isinstance(parsed, dict) and isinstance(parsed.get("error"), str):
            return str(parsed["error"])
    except (ValueError, UnicodeDecodeError):
        pass
    return body[:200].decode("utf-8", "replace").strip()


class HttpTransport:
    """Streamable HTTP to one daemon. Thread-safe."""

    def __init__(self, url: str, api_key: str, connect_timeout: float = 10.0) -> None:
        self._endpoint = Endpoint(url)
        self._api_key = api_key
        self._connect_timeout = connect_timeout
        self.description = f"the bridge at {url}"
        self._lock = threading.Lock()
        self._idle: List[Tuple[http.client.HTTPConnection, float]] = []
        self._session_id: Optional[str] = None
        self._protocol_version: Optional[str] = None
        self._closed = False

    def __repr__(self) -> str:
        return f"HttpTransport({self._endpoint.url!r})"

    # -- connections --

    def _take(self, deadline: Deadline, what: str) -> Tuple[http.client.HTTPConnection, bool]:
        now = time.monotonic()
        with self._lock:
            if self._closed:
                raise TransportError(f"{what}: the bridge client is closed")
            while self._idle:
                conn, since = self._idle.pop()
                if now - since < _MAX_IDLE_SECONDS:
                    return conn, True
                conn.close()
        conn = self._endpoint.connection(min(self._connect_timeout, deadline.socket_timeout()))
        try:
            conn.connect()
        except socket.timeout:
            conn.close()
            raise BridgeTimeoutError(
                f"{what}: connecting to {self.description} took longer than "
                f"{min(self._connect_timeout, deadline.seconds):g} s"
            ) from None
        except OSError as e:
            conn.close()
            raise TransportError(
                f"{what}: cannot reach {self.description}: {e.strerror or e}; "
                "is `lizard-bridge serve` running there (LIZARD_API_URL)?"
            ) from None
        return conn, False

    def _give_back(self, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            if not self._closed and len(self._idle) < _MAX_IDLE_CONNECTIONS:
                self._idle.append((conn, time.monotonic()))
                return
        conn.close()

    def _headers(self, initialize: bool) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {self._api_key}",
        }
        with self._lock:
            if self._session_id and not initialize:
                headers["Mcp-Session-Id"] = self._session_id
            if self._protocol_version and not initialize:
                headers["MCP-Protocol-Version"] = self._protocol_version
        return headers

    # -- one exchange --

    def _post(
        self, body: bytes, initialize: bool, deadline: Deadline, what: str
    ) -> Tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        """POSTs and reads the status line; retries once when a kept-alive
        connection turns out to have been closed by the daemon."""
        if len(body) > MAX_REQUEST_BYTES:
            raise BridgeError(
                f"{what}: the message is {len(body)} bytes, more than the bridge takes "
                f"({MAX_REQUEST_BYTES}); send less per call"
            )
        for attempt in (1, 2):
            conn, reused = self._take(deadline, what)
            try:
                assert conn.sock is not None
                conn.sock.settimeout(deadline.socket_timeout())
                conn.request("POST", self._endpoint.path, body, self._headers(initialize))
                return conn, conn.getresponse()
            except socket.timeout:
                conn.close()
                raise BridgeTimeoutError(
                    f"{what}: {self.description} accepted the connection but did not answer "
                    f"within {deadline.seconds:g} s"
                ) from None
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as e:
                conn.close()
                if reused and attempt == 1:
                    continue
                raise TransportError(f"{what}: {self.description} closed the connection without answering ({e})") from None
            except (OSError, http.client.HTTPException) as e:
                conn.close()
                raise TransportError(f"{what}: talking to {self.description} failed: {e}") from None
        raise AssertionError("unreachable")

    def _read_body(self, conn: http.client.HTTPConnection, response: http.client.HTTPResponse, deadline: Deadline, what: str) -> bytes:
        length = response.getheader("Content-Length")
        if length is not None and (not length.isdigit() or int(length) > MAX_RESPONSE_BYTES):
            conn.close()
            raise TransportError(f"{what}: {self.description} announced a body of {length!r} bytes")
        try:
            assert conn.sock is not None
            conn.sock.settimeout(deadline.socket_timeout())
            body = response.read(MAX_RESPONSE_BYTES + 1)
        except socket.timeout:
            conn.close()
            raise BridgeTimeoutError(f"{what}: {self.description} stopped in the middle of its answer") from None
        except (OSError, http.client.HTTPException) as e:
            conn.close()
            raise TransportError(f"{what}: reading the answer of {self.description} failed: {e}") from None
        if len(body) > MAX_RESPONSE_BYTES:
            conn.close()
            raise TransportError(f"{what}: the answer of {self.description} is larger than {MAX_RESPONSE_BYTES} bytes")
        return body

    def _finish(self, conn: http.client.HTTPConnection, response: http.client.HTTPResponse) -> None:
        if response.will_close or not response.isclosed():
            conn.close()
        else:
            self._give_back(conn)

    def _check_status(
        self,
        conn: http.client.HTTPConnection,
        response: http.client.HTTPResponse,
        deadline: Deadline,
        initialize: bool,
        what: str,
    ) -> None:
        status = response.status
        if status in (200, 202):
            return
        body = self._read_body(conn, response, deadline, what)
        self._finish(conn, response)
        reason = _error_text(body)
        if status == 401:
            raise AuthError(
                f"{what}: {self.description} refused the API key (401: {reason}); "
                "give the daemon's key as api_key or LIZARD_API_KEY"
            )
        if status == 404 and not initialize:
            with self._lock:
                known = self._session_id is not None
            if known:
                raise SessionExpired()
        if status == 413:
            raise BridgeError(
                f"{what}: the message is larger than {self.description} takes "
                f"({MAX_REQUEST_BYTES} bytes); send less per call"
            )
        raise TransportError(f"{what}: {self.description} answered HTTP {status}: {reason}")

    def request(
        self,
        message: JsonObject,
        deadline: Deadline,
        on_notification: Optional[OnNotification],
        what: str,
    ) -> JsonObject:
        initialize = message.get("method") == "initialize"
        body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        conn, response = self._post(body, initialize, deadline, what)
        self._check_status(conn, response, deadline, initialize, what)
        if initialize:
            session_id = response.getheader("Mcp-Session-Id")
            with self._lock:
                self._session_id = session_id
        content_type = (response.getheader("Content-Type") or "").split(";")[0].strip().lower()
        if content_type == "text/event-stream":
            return self._read_stream(conn, response, message.get("id"), deadline, on_notification, what)
        body = self._read_body(conn, response, deadline, what)
        self._finish(conn, response)
        return self._parse_response(body, message.get("id"), what)

    def _parse_response(self, body: bytes, request_id: object, what: str) -> JsonObject:
        try:
            parsed = json.loads(body.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            raise TransportError(f"{what}: {self.description} answered something that is not JSON: {body[:100]!r}") from None
        if not isinstance(parsed, dict) or parsed.get("id") != request_id:
            raise TransportError(f"{what}: {self.description} answered with a message that is not the response: {body[:100]!r}")
        return parsed

    def _read_stream(
        self,
        conn: http.client.HTTPConnection,
        response: http.client.HTTPResponse,
        request_id: object,
        deadline: Deadline,
        on_notification: Optional[OnNotification],
        what: str,
    ) -> JsonObject:
        """Reads SSE events until the response; each notification goes to
        on_notification first. A callback that raises ends the stream (the
        connection is dropped) and the exception goes to the caller."""
        data: List[bytes] = []
        try:
            while True:
                assert conn.sock is not None
                conn.sock.settimeout(deadline.socket_timeout())
                line = response.readline(_MAX_SSE_LINE + 1)
                if not line:
                    raise TransportError(f"{what}: {self.description} ended its event stream before the response")
                if len(line) > _MAX_SSE_LINE:
                    raise TransportError(f"{what}: an event of {self.description} is larger than {_MAX_SSE_LINE} bytes")
                line = line.rstrip(b"\r\n")
                if line.startswith(b"data:"):
                    value = line[5:]
                    data.append(value[1:] if value.startswith(b" ") else value)
                    continue
                if line or not data:
                    continue  # event:, id:, retry:, comments; or an empty event
                event = b"\n".join(data)
                data = []
                message = self._parse_event(event, what)
                if "method" in message:
                    if on_notification is not None and "id" not in message:
                        on_notification(message)
                    continue
                if message.get("id") != request_id:
                    continue
                self._drain(conn, response)
                return message
        except socket.timeout:
            conn.close()
            raise BridgeTimeoutError(
                f"{what}: {self.description} sent no more events within {deadline.seconds:g} s"
            ) from None
        except (OSError, http.client.HTTPException) as e:
            conn.close()
            raise TransportError(f"{what}: the event stream of {self.description} broke: {e}") from None
        except BaseException:
            conn.close()
            raise

    def _parse_event(self, event: bytes, what: str) -> JsonObject:
        try:
            message = json.loads(event.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            raise TransportError(f"{what}: {self.description} sent an event that is not JSON: {event[:100]!r}") from None
        if not isinstance(message, dict):
            raise TransportError(f"{what}: {self.description} sent an event that is not a JSON-RPC message")
        return message

    def _drain(self, conn: http.client.HTTPConnection, response: http.client.HTTPResponse) -> None:
        """Reads the end of the stream so that the connection can be kept."""
        end = Deadline(_STREAM_END_SECONDS)
        try:
            while True:
                assert conn.sock is not None
                conn.sock.settimeout(end.socket_timeout())
                if not response.readline(_MAX_SSE_LINE):
                    break
        except (OSError, http.client.HTTPException):
            conn.close()
            return
        self._finish(conn, response)

    def notify(self, message: JsonObject, deadline: Deadline) -> None:
        what = str(message.get("method"))
        body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        conn, response = self._post(body, False, deadline, what)
        self._check_status(conn, response, deadline, False, what)
        self._read_body(conn, response, deadline, what)
        self._finish(conn, response)

    def set_protocol_version(self, version: str) -> None:
        with self._lock:
            self._protocol_version = version

    def close(self) -> None:
        """Ends the MCP session on the daemon (DELETE), briefly, then drops
        every connection."""
        with self._lock:
            if self._closed:
                return
            session_id = self._session_id
        if session_id:
            try:
                deadline = Deadline(2.0)
                conn, _ = self._take(deadline, "closing")
                assert conn.sock is not None
                conn.sock.settimeout(deadline.socket_timeout())
                headers = self._headers(False)
                conn.request("DELETE", self._endpoint.path, headers=headers)
                conn.getresponse().read()
                conn.close()
            except (BridgeError, OSError, http.client.HTTPException):
                pass  # the daemon forgets idle MCP sessions by itself
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn, _ in idle:
            conn.close()
