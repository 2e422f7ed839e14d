# SPDX-License-Identifier: MIT
"""sandbox.expose_port, get_host and unexpose_port against a real
sandbox: a server on the sandbox's own 127.0.0.1 answers through the
bridge with the token, refuses without it, and is gone once unexposed.
Requests go to the bridge on loopback with the port's Host header."""

from __future__ import annotations

import http.client
import threading
import time
from typing import Dict, Optional, Tuple

from harness import OnEachBridge, both_modes
from lizard_bridge import BridgeError, ExposedPort

PORT = 8000


def fetch(exposed_host: str, path: str = "/", headers: Optional[Dict[str, str]] = None) -> Tuple[int, bytes]:
    """GET path from the bridge that serves exposed_host, naming it in Host."""
    bridge_port = int(exposed_host.rsplit(":", 1)[1])
    connection = http.client.HTTPConnection("127.0.0.1", bridge_port, timeout=30)
    try:
        connection.request("GET", path, headers={"Host": exposed_host, **(headers or {})})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


class Ports(OnEachBridge):
    template = "base"

    def setUp(self) -> None:
        self.sandbox.fs.write("/tmp/served/hello.txt", "hello from inside\n")
        self.server = threading.Thread(target=self.serve, daemon=True)
        self.server.start()

    def serve(self) -> None:
        """Serves until its exec's time is up or the sandbox ends (which
        fails the exec: expected here)."""
        try:
            self.sandbox.process.exec_(f"cd /tmp/served && exec python3 -m http.server {PORT} --bind 127.0.0.1", timeout_ms=120_000)
        except BridgeError:
            pass

    def wait_until_served(self, exposed: ExposedPort) -> Tuple[int, bytes]:
        deadline = time.monotonic() + 20
        while True:
            status, body = fetch(exposed.host, "/hello.txt", {exposed.header: exposed.token})
            if status != 502 or time.monotonic() > deadline:
                return status, body
            time.sleep(0.2)

    def test_an_exposed_port_answers_with_the_token_and_only_with_it(self) -> None:
        exposed = self.sandbox.expose_port(PORT)
        self.assertEqual(exposed.port, PORT)
        self.assertTrue(exposed.host.startswith(f"{PORT}-{self.sandbox.id}.localhost:"), exposed.host)
        self.assertEqual(exposed.url, f"http://{exposed.host}/?lizard_access_token={exposed.token}")
        self.assertEqual(self.sandbox.get_host(PORT), exposed.host)
        self.assertEqual(self.wait_until_served(exposed), (200, b"hello from inside\n"))
        self.assertEqual(fetch(exposed.host, "/hello.txt")[0], 401)
        info = self.sandbox.get_info()
        self.assertEqual(info.access_token, exposed.token)
        self.assertIn(PORT, info.exposed_ports)

    def test_an_unexposed_port_is_not_found(self) -> None:
        exposed = self.sandbox.expose_port(PORT)
        self.wait_until_served(exposed)
        self.sandbox.unexpose_port(PORT)
        status, body = fetch(exposed.host, "/hello.txt", {exposed.header: exposed.token})
        self.assertEqual(status, 404)
        self.assertIn(b"not exposed", body)
        self.assertNotIn(PORT, self.sandbox.get_info().exposed_ports)


both_modes(Ports, globals())
