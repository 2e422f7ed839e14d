# SPDX-License-Identifier: MIT
"""MCP over the stdin and stdout of a `lizard-bridge stdio` child.

The child speaks newline-delimited JSON-RPC. One reader thread takes its
lines and routes them: a response to the queue of the request with that
id, a progress notification to the queue of the request that carries its
token, so that the caller's own thread runs its callbacks; another keeps
the end of the child's log (stderr) for the error that says why it died.
A request's queue holds at most _MAX_QUEUED_BYTES of notifications that its
callbacks have not taken yet; beyond that the request fails instead of
the client's memory growing. Writes go through one lock, each line whole,
on a non-blocking pipe watched with select() against the call's deadline.
When the child exits, every waiting call fails at once with its status and
last log lines. close() closes its stdin, which ends the child within 2 s
(its own rule), and only then signals it; a Python process that dies
closes the pipe too, so the child never outlives its script."""

from __future__ import annotations

import collections
import json
import logging
import os
import queue
import select
import subprocess
import threading
from typing import IO, Any, Deque, Dict, List, Optional, Sequence, Tuple

from lizard_bridge._transport import (
    MAX_REQUEST_BYTES,
    MAX_RESPONSE_BYTES,
    Deadline,
    JsonObject,
    OnNotification,
)
from lizard_bridge.errors import BridgeError, BridgeTimeoutError, TransportError

_log = logging.getLogger("lizard_bridge.local")

_MAX_QUEUED_BYTES = 64 * 1024 * 1024
_LOG_LINES_KEPT = 200
_LOG_LINE_CHARS = 1000
_EXIT_SECONDS = 5.0


class _Pending:
    """One request waiting for its response, and its progress token."""

    def __init__(self, token: Optional[object]) -> None:
        self.token = token
        self.items: "queue.Queue[Tuple[str, Any]]" = queue.Queue()
        self.queued_bytes = 0
        self.overflowed = False


def _progress_token(message: JsonObject) -> Optional[object]:
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta.get("progressToken") if isinstance(meta, dict) else None


class StdioTransport:
    """A `lizard-bridge stdio` child of this process. Thread-safe."""

    def __init__(self, argv: Sequence[str], env: Optional[Dict[str, str]] = None) -> None:
        self.description = f"the local bridge ({argv[0]} stdio)"
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._pending: Dict[object, _Pending] = {}
        self._by_token: Dict[object, _Pending] = {}
        self._log_tail: Deque[str] = collections.deque(maxlen=_LOG_LINES_KEPT)
        self._ended: Optional[str] = None
        self._ended_event = threading.Event()
        try:
            self._process = subprocess.Popen(
                list(argv),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                # Its own process group: a Ctrl-C in the terminal reaches the
                # script, whose cleanup (kill in a with block) still needs it.
                start_new_session=True,
            )
        except OSError as e:
            raise TransportError(
                f"cannot start {argv[0]}: {e.strerror or e}; pass binary=, set LIZARD_BRIDGE_BIN "
                "or put lizard-bridge on PATH"
            ) from None
        assert self._process.stdin and self._process.stdout and self._process.stderr
        self._stdin: IO[bytes] = self._process.stdin
        os.set_blocking(self._stdin.fileno(), False)
        self._reader = threading.Thread(
            target=self._read_messages, args=(self._process.stdout,), name="lizard-bridge-stdio-reader", daemon=True
        )
        self._log_reader = threading.Thread(
            target=self._read_log, args=(self._process.stderr,), name="lizard-bridge-stdio-log", daemon=True
        )
        self._reader.start()
        self._log_reader.start()

    def __repr__(self) -> str:
        return f"StdioTransport(pid={self._process.pid})"

    @property
    def pid(self) -> int:
        return self._process.pid

    # -- the child's output --

    def _read_log(self, stream: IO[bytes]) -> None:
        for raw in iter(lambda: stream.readline(64 * 1024), b""):
            line = raw.decode("utf-8", "replace").rstrip("\n")[:_LOG_LINE_CHARS]
            self._log_tail.append(line)
            _log.debug("%s", line)
        stream.close()

    def _read_messages(self, stream: IO[bytes]) -> None:
        why = "closed its output"
        try:
            while True:
                line = stream.readline(MAX_RESPONSE_BYTES + 1)
                if not line:
                    break
                if len(line) > MAX_RESPONSE_BYTES:
                    why = f"sent a line of more than {MAX_RESPONSE_BYTES} bytes"
                    break
                self._route(line)
        except (OSError, ValueError) as e:
            why = f"could not be read: {e}"
        finally:
            stream.close()
            self._end(why)

    def _route(self, line: bytes) -> None:
        try:
            message = json.loads(line.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            _log.warning("the local bridge wrote a line that is not JSON: %r", line[:100])
            return
        if not isinstance(message, dict):
            return
        if "method" in message:
            if "id" in message:
                # The bridge asks nothing of its clients; say so rather than
                # leave it waiting.
                self._write_quietly({"jsonrpc": "2.0", "id": message["id"],
                                     "error": {"code": -32601, "message": "not supported by this client"}})
                return
            params = message.get("params")
            token = params.get("progressToken") if isinstance(params, dict) else None
            with self._lock:
                pending = self._by_token.get(token) if token is not None else None
                if pending is not None:
                    if pending.queued_bytes + len(line) > _MAX_QUEUED_BYTES:
                        pending.overflowed = True
                    else:
                        pending.queued_bytes += len(line)
                        pending.items.put(("notification", (message, len(line))))
            if pending is None:
                _log.debug("notification %s", message.get("method"))
            return
        with self._lock:
            pending = self._pending.get(message.get("id"))
        if pending is not None:
            pending.items.put(("response", message))

    def _end(self, why: str) -> None:
        """The child is gone or unusable: every waiting call hears why."""
        try:
            status = self._process.wait(timeout=_EXIT_SECONDS)
            what = f"exited with status {status}" if status >= 0 else f"was killed by signal {-status}"
        except subprocess.TimeoutExpired:
            what = why
        # The child has gone, so its stderr ends now; a loaded machine may
        # take a moment to run the thread that reads it.
        self._log_reader.join(timeout=_EXIT_SECONDS)
        lines = list(self._log_tail)
        # Its own complaints ("lizard-bridge: ...", "lizard-bridge error: ...")
        # say more than the end of a usage text that may follow them.
        said = [line for line in lines if "lizard-bridge:" in line or "lizard-bridge error:" in line]
        tail = "; ".join(said[-3:] if said else lines[-5:])
        reason = f"{self.description} {what}" + (f"; it said: {tail}" if tail else "")
        with self._lock:
            self._ended = reason
            waiting = list(self._pending.values())
        self._ended_event.set()
        for pending in waiting:
            pending.items.put(("ended", reason))

    # -- writing --

    def _write_line(self, message: JsonObject, deadline: Deadline, what: str) -> None:
        data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        if len(data) > MAX_REQUEST_BYTES:
            raise BridgeError(
                f"{what}: the message is {len(data)} bytes, more than the bridge takes "
                f"({MAX_REQUEST_BYTES}); send less per call"
            )
        view = memoryview(data + b"\n")
        if not self._write_lock.acquire(timeout=deadline.remaining()):
            raise BridgeTimeoutError(f"{what}: {self.description} did not take other messages within {deadline.seconds:g} s")
        try:
            fd = self._stdin.fileno()
            while view:
                with self._lock:
                    if self._ended:
                        raise TransportError(f"{what}: {self._ended}")
                _, writable, _ = select.select([], [fd], [], deadline.remaining())
                if not writable:
                    raise BridgeTimeoutError(f"{what}: {self.description} stopped reading its input")
                try:
                    view = view[os.write(fd, view):]
                except BlockingIOError:
                    continue
                except OSError as e:
                    # A child that exited closes the pipe; its reader is about
                    # to know why, which says more than EPIPE.
                    if self._ended_event.wait(min(2.0, deadline.remaining())):
                        raise TransportError(f"{what}: {self._ended}") from None
                    raise TransportError(f"{what}: writing to {self.description} failed: {e.strerror or e}") from None
        finally:
            self._write_lock.release()

    def _write_quietly(self, message: JsonObject) -> None:
        try:
            self._write_line(message, Deadline(1.0), "reply")
        except BridgeError:
            pass

    # -- the transport --

    def request(
        self,
        message: JsonObject,
        deadline: Deadline,
        on_notification: Optional[OnNotification],
        what: str,
    ) -> JsonObject:
        request_id = message.get("id")
        pending = _Pending(_progress_token(message))
        with self._lock:
            if self._ended:
                raise TransportError(f"{what}: {self._ended}")
            self._pending[request_id] = pending
            if pending.token is not None:
                self._by_token[pending.token] = pending
        try:
            self._write_line(message, deadline, what)
            while True:
                try:
                    kind, value = pending.items.get(timeout=deadline.remaining())
                except queue.Empty:
                    raise BridgeTimeoutError(
                        f"{what}: {self.description} did not answer within {deadline.seconds:g} s"
                    ) from None
                if kind == "response":
                    if pending.overflowed:
                        raise TransportError(
                            f"{what}: its callbacks fell more than {_MAX_QUEUED_BYTES} bytes behind; "
                            "progress was dropped"
                        )
                    assert isinstance(value, dict)
                    return value
                if kind == "ended":
                    raise TransportError(f"{what}: {value}")
                notification, size = value
                with self._lock:
                    pending.queued_bytes -= size
                if on_notification is not None:
                    on_notification(notification)
        finally:
            with self._lock:
                self._pending.pop(request_id, None)
                if pending.token is not None:
                    self._by_token.pop(pending.token, None)

    def notify(self, message: JsonObject, deadline: Deadline) -> None:
        self._write_line(message, deadline, str(message.get("method")))

    def set_protocol_version(self, version: str) -> None:
        pass  # stdio sends no headers

    def close(self) -> None:
        """Closes the child's stdin so that it ends by itself (it answers
        what it has read, then exits within 2 s), then makes sure."""
        with self._write_lock:
            try:
                self._stdin.close()
            except OSError:
                pass
        try:
            self._process.wait(timeout=_EXIT_SECONDS)
        except subprocess.TimeoutExpired:
            self._process.terminate()
            try:
                self._process.wait(timeout=2.0)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._reader.join(timeout=_EXIT_SECONDS)

    def running(self) -> bool:
        return self._process.poll() is None

    def log_tail(self) -> List[str]:
        """The child's last log lines (for errors and tests)."""
        return list(self._log_tail)
