# SPDX-License-Identifier: MIT
"""What goes wrong reaches a script as a clear exception within a bounded
time: a wrong or missing key, nothing listening, a peer that accepts and
never answers or stops halfway through a stream, a bridge that dies in
the middle of a call, a tool's own error, a tool the bridge lacks. The
misbehaving HTTP peers here are fakes; everything else is the real daemon
or a real local bridge."""

from __future__ import annotations

import json
import os
import signal
import socket
import threading
import time
import unittest
from typing import Callable, List

from harness import BRIDGE_BIN, Daemon, free_port, shared, wait_for
from lizard_bridge import (
    AuthError,
    Bridge,
    BridgeError,
    BridgeTimeoutError,
    RpcError,
    ToolError,
    TransportError,
)


class FakePeer:
    """An HTTP server on loopback that misbehaves as told: handler gets each
    request's body (parsed JSON) and the socket, and answers or not."""

    def __init__(self, handler: Callable[[dict, socket.socket], None]) -> None:
        self.handler = handler
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.connections: List[socket.socket] = []
        self.requests: List[dict] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections.append(conn)
            threading.Thread(target=self._connection, args=(conn,), daemon=True).start()

    def _connection(self, conn: socket.socket) -> None:
        buffer = b""
        try:
            while True:
                while b"\r\n\r\n" not in buffer:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buffer += data
                head, buffer = buffer.split(b"\r\n\r\n", 1)
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                while len(buffer) < length:
                    buffer += conn.recv(65536)
                body, buffer = buffer[:length], buffer[length:]
                message = json.loads(body) if body else {}
                self.requests.append(message)
                self.handler(message, conn)
        except OSError:
            return

    def close(self) -> None:
        self.listener.close()
        for conn in self.connections:
            conn.close()


def reply_json(conn: socket.socket, message: dict, headers: str = "") -> None:
    body = json.dumps(message).encode()
    conn.sendall(f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
                 f"{headers}\r\n".encode() + body)


def initialize_then(on_call: Callable[[dict, socket.socket], None]) -> Callable[[dict, socket.socket], None]:
    """A peer that does MCP's handshake properly and then on_call."""

    def handler(message: dict, conn: socket.socket) -> None:
        if message.get("method") == "initialize":
            reply_json(conn, {"jsonrpc": "2.0", "id": message["id"], "result": {
                "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "fake", "version": "0"}}}, "Mcp-Session-Id: fake-session\r\n")
        elif "id" not in message:
            conn.sendall(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n")
        else:
            on_call(message, conn)

    return handler


class Errors(unittest.TestCase):
    def setUp(self) -> None:
        self.peers: List[FakePeer] = []

    def tearDown(self) -> None:
        for peer in self.peers:
            peer.close()

    def peer(self, handler: Callable[[dict, socket.socket], None]) -> FakePeer:
        peer = FakePeer(handler)
        self.peers.append(peer)
        return peer

    def assert_within(self, seconds: float, started: float) -> None:
        self.assertLess(time.monotonic() - started, seconds)

    # -- the key --

    def test_a_wrong_key_is_an_auth_error_that_says_so_and_never_shows_a_key(self) -> None:
        daemon = shared.get_daemon()
        wrong = "wrong-key-" + "9" * 20
        bridge = Bridge(daemon.url, wrong)
        with self.assertRaises(AuthError) as caught:
            bridge.create("bare")
        text = str(caught.exception)
        self.assertIn("refused the API key", text)
        self.assertIn("401", text)
        self.assertNotIn(wrong, text)
        self.assertNotIn(daemon.key, text)
        self.assertNotIn(wrong, repr(bridge))
        self.assertNotIn(daemon.key, repr(daemon.bridge()))

    def test_no_key_at_all_is_an_auth_error_at_once(self) -> None:
        saved = os.environ.pop("LIZARD_API_KEY", None)
        try:
            with self.assertRaisesRegex(AuthError, "LIZARD_API_KEY"):
                Bridge("http://127.0.0.1:1")
        finally:
            if saved is not None:
                os.environ["LIZARD_API_KEY"] = saved

    # -- nobody there, or a peer that misbehaves --

    def test_nothing_listening_is_a_transport_error_at_once(self) -> None:
        port = free_port()
        started = time.monotonic()
        with self.assertRaises(TransportError) as caught:
            Bridge(f"http://127.0.0.1:{port}", "k" * 20).list()
        self.assertIn("cannot reach the bridge at", str(caught.exception))
        self.assertIn("refused", str(caught.exception))
        self.assert_within(2, started)
        with self.assertRaisesRegex(TransportError, "cannot reach"):
            Bridge(f"unix:/tmp/lizard-py-{os.getpid()}-nothing.sock", "k" * 20).list()

    def test_a_peer_that_accepts_and_never_answers_times_out(self) -> None:
        peer = self.peer(lambda message, conn: None)
        started = time.monotonic()
        with self.assertRaises(BridgeTimeoutError) as caught:
            Bridge(peer.url, "k" * 20, timeout=1.5).list()
        self.assertIn("did not answer within", str(caught.exception))
        self.assertTrue(isinstance(caught.exception, TimeoutError))
        self.assert_within(5, started)

    def test_a_stream_that_stalls_after_its_first_event_times_out(self) -> None:
        def stall(message: dict, conn: socket.socket) -> None:
            token = message["params"]["_meta"]["progressToken"]
            event = json.dumps({"jsonrpc": "2.0", "method": "notifications/progress",
                                "params": {"progressToken": token, "progress": 1, "message": "stdout: first\n"}})
            chunk = f"event: message\ndata: {event}\n\n".encode()
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                         + f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")

        peer = self.peer(initialize_then(stall))
        bridge = Bridge(peer.url, "k" * 20, timeout=1.0)
        chunks: List[str] = []
        started = time.monotonic()
        with self.assertRaises(BridgeTimeoutError):
            bridge.call_tool("exec", {"command": "x", "timeout_ms": 1000}, seconds=1.0,
                              on_progress=lambda params: chunks.append(params["message"]))
        self.assertEqual(chunks, ["stdout: first\n"])
        self.assert_within(6, started)
        # It told the peer it gave up on the call.
        cancelled = wait_for(lambda: [m for m in peer.requests if m.get("method") == "notifications/cancelled"], 3)
        self.assertEqual(cancelled[0]["params"]["requestId"],
                         [m for m in peer.requests if m.get("method") == "tools/call"][0]["id"])

    def test_a_peer_that_closes_without_answering_is_a_transport_error(self) -> None:
        peer = self.peer(initialize_then(lambda message, conn: conn.shutdown(socket.SHUT_RDWR)))
        with self.assertRaisesRegex(TransportError, "closed the connection without answering"):
            Bridge(peer.url, "k" * 20, timeout=3).list()

    def test_a_peer_that_answers_something_else_than_json_is_a_transport_error(self) -> None:
        def garbage(message: dict, conn: socket.socket) -> None:
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\nhello")

        peer = self.peer(initialize_then(garbage))
        with self.assertRaisesRegex(TransportError, "not JSON"):
            Bridge(peer.url, "k" * 20, timeout=3).list()

    # -- the real bridge's own errors --

    def test_a_tool_error_carries_the_tools_message(self) -> None:
        for mode in ("daemon", "local"):
            with self.subTest(mode=mode), shared.bridge(mode).create("bare") as sandbox:
                with self.assertRaises(ToolError) as caught:
                    sandbox.desktop.click(5000, 10)
                self.assertEqual(caught.exception.tool, "click")
                self.assertIn("5000", caught.exception.message)
                # The sandbox still works after it.
                self.assertEqual(sandbox.process.exec_("echo fine").stdout, "fine\n")

    def test_a_tool_the_bridge_lacks_is_an_rpc_error(self) -> None:
        with self.assertRaises(RpcError) as caught:
            shared.bridge("daemon").call_tool("no_such_tool")
        self.assertEqual(caught.exception.code, -32602)
        self.assertIn("no_such_tool", str(caught.exception))

    def test_a_forgotten_mcp_session_is_started_again(self) -> None:
        daemon = shared.get_daemon()
        bridge = daemon.bridge()
        self.assertIsInstance(bridge.list(), list)
        # End the MCP session behind the client's back, as the daemon does
        # with the oldest of 1024.
        transport = bridge._session.transport
        session_id = transport._session_id  # type: ignore[attr-defined]
        import http.client

        conn = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=5)
        conn.request("DELETE", "/mcp", headers={"Authorization": f"Bearer {daemon.key}", "Mcp-Session-Id": session_id})
        self.assertEqual(conn.getresponse().status, 200)
        conn.close()
        self.assertIsInstance(bridge.list(), list)
        self.assertNotEqual(transport._session_id, session_id)  # type: ignore[attr-defined]
        bridge.close()

    # -- bridges that die --

    def test_a_local_bridge_killed_mid_call_is_a_transport_error_with_its_status(self) -> None:
        bridge = Bridge.local(BRIDGE_BIN, args=["--data-dir", shared.local_dir + "/killed"])
        try:
            sandbox = bridge.create("bare")
            transport = bridge._session.transport
            pid = transport.pid  # type: ignore[attr-defined]
            timer = threading.Timer(0.5, os.kill, (pid, signal.SIGKILL))
            timer.start()
            started = time.monotonic()
            with self.assertRaises(TransportError) as caught:
                sandbox.process.exec_("sleep 30", timeout_ms=60_000)
            timer.join()
            self.assertIn("killed by signal 9", str(caught.exception))
            self.assert_within(8, started)
            with self.assertRaisesRegex(TransportError, "killed by signal 9"):
                sandbox.get_info()
        finally:
            bridge.close()

    def test_closing_a_local_bridge_ends_its_child_and_the_childs_sandboxes(self) -> None:
        def running(marker: bytes) -> List[str]:
            found = []
            for entry in os.listdir("/proc"):
                try:
                    with open(f"/proc/{entry}/cmdline", "rb") as f:
                        if marker in f.read():
                            found.append(entry)
                except OSError:
                    pass
            return found

        bridge = Bridge.local(BRIDGE_BIN, args=["--data-dir", shared.local_dir + "/closed"])
        pid = bridge._session.transport.pid  # type: ignore[attr-defined]
        sandbox = bridge.create("bare")
        # A program of the sandbox's that would run for ever, named so the
        # host can find it.
        marker = f"lizard-close-marker-{os.getpid()}"
        sandbox.desktop.launch(f"exec python3 -c 'import time; time.sleep(1000)' {marker}")
        deadline = time.monotonic() + 10
        while not running(marker.encode()) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertNotEqual(running(marker.encode()), [])
        started = time.monotonic()
        bridge.close()
        self.assert_within(5, started)
        self.assertFalse(os.path.exists(f"/proc/{pid}/cmdline") and str(pid) in running(b"lizard-bridge"))
        deadline = time.monotonic() + 5
        while running(marker.encode()) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(running(marker.encode()), [])

    def test_a_daemon_that_stops_mid_call_is_a_transport_error(self) -> None:
        daemon = Daemon()
        try:
            bridge = daemon.bridge(timeout=20)
            sandbox = bridge.create("bare")
            timer = threading.Timer(0.5, daemon.process.send_signal, (signal.SIGTERM,))
            timer.start()
            started = time.monotonic()
            with self.assertRaises((TransportError, ToolError)) as caught:
                sandbox.process.exec_("sleep 30", timeout_ms=60_000)
            timer.join()
            self.assert_within(8, started)
            self.assertTrue(isinstance(caught.exception, BridgeError))
            self.assertEqual(daemon.process.wait(10), 0)
            with self.assertRaisesRegex(TransportError, "cannot reach"):
                sandbox.get_info()
        finally:
            daemon.stop()

    def test_a_local_bridge_that_cannot_start_says_why(self) -> None:
        started = time.monotonic()
        with self.assertRaises(TransportError) as caught:
            Bridge.local(BRIDGE_BIN, args=["--no-such-option"])
        self.assertIn("exited with status 2", str(caught.exception))
        self.assertIn("unknown or incomplete option '--no-such-option'", str(caught.exception))
        self.assert_within(5, started)

    def test_a_missing_binary_for_local_says_where_it_looked(self) -> None:
        with self.assertRaisesRegex(TransportError, "LIZARD_BRIDGE_BIN"):
            Bridge.local("/nonexistent/lizard-bridge")
        saved = os.environ.pop("LIZARD_BRIDGE_BIN", None)
        path = os.environ.get("PATH", "")
        os.environ["PATH"] = "/nonexistent"
        try:
            with self.assertRaisesRegex(BridgeError, "PATH"):
                Bridge.local()
        finally:
            os.environ["PATH"] = path
            if saved is not None:
                os.environ["LIZARD_BRIDGE_BIN"] = saved
