# SPDX-License-Identifier: MIT
"""What the Python client's tests share: a real daemon, a real local bridge,
the seed's example scripts run as scripts, and a PNG reader.

The daemon is `lizard-bridge serve` (LIZARD_BRIDGE_BIN, else the build's)
on a free loopback port with a random key and a data directory of its own,
started once for the whole run and stopped at its end; Bridge.local()
likewise runs once for the tests that can share it. Tests that kill a
bridge start their own. run.py puts the whole run in a network namespace
holding only loopback when it can, since the seed's desktop example opens
https://example.com: there the request goes nowhere. Sandboxes reach no
address but the namespace's own."""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import zlib
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CLIENT = ROOT / "clients" / "python"
EXAMPLES = HERE / "examples"
if str(CLIENT) not in sys.path:
    sys.path.insert(0, str(CLIENT))

from lizard_bridge import Bridge  # noqa: E402

BRIDGE_BIN = os.environ.get("LIZARD_BRIDGE_BIN") or str(ROOT / "build" / "lizard-bridge")
MODES = ("daemon", "local")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for(probe: Any, timeout: float = 10.0, interval: float = 0.05) -> Any:
    """Polls an observable condition until it holds or the deadline passes;
    returns the last value either way, for the assertion to show."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(interval)


class Daemon:
    """`lizard-bridge serve` on a free loopback port, for real."""

    def __init__(self, extra_args: Tuple[str, ...] = ()) -> None:
        self.dir = tempfile.mkdtemp(prefix=f"lizard-py-{os.getpid()}-")
        self.key = "py-test-" + secrets.token_hex(16)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = os.path.join(self.dir, "daemon.log")
        env = {**os.environ, "LIZARD_API_KEY": self.key, "LIZARD_LOG": "info"}
        self._log = open(self.log_path, "wb")
        self.process = subprocess.Popen(
            ["setpriv", "--pdeathsig", "TERM", "--", BRIDGE_BIN, "serve",
             "--listen", f"127.0.0.1:{self.port}", "--data-dir", os.path.join(self.dir, "data"), *extra_args],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._log, env=env,
        )
        up = wait_for(lambda: b"serving MCP on" in self.log() or self.process.poll() is not None, 20.0)
        if not up or self.process.poll() is not None:
            self.stop()
            raise RuntimeError(f"the daemon did not start: {self.log().decode(errors='replace')}")

    def log(self) -> bytes:
        try:
            with open(self.log_path, "rb") as f:
                return f.read()
        except FileNotFoundError:
            return self._last_log

    _last_log = b""

    def bridge(self, **kwargs: Any) -> Bridge:
        return Bridge(self.url, self.key, **kwargs)

    def stop(self) -> Optional[int]:
        """SIGTERM, then SIGKILL after 10 s; the exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()
        self._last_log = self.log()
        shutil.rmtree(self.dir, ignore_errors=True)
        return self.process.returncode


def local_args(directory: str) -> List[str]:
    return ["--data-dir", os.path.join(directory, "data")]


class Shared:
    """The daemon and the local bridge the tests share, made on first use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.daemon: Optional[Daemon] = None
        self._bridges: Dict[str, Bridge] = {}
        self._local_dir: Optional[str] = None

    @property
    def local_dir(self) -> str:
        """A directory for local bridges' data, made on first use."""
        with self._lock:
            if self._local_dir is None:
                self._local_dir = tempfile.mkdtemp(prefix=f"lizard-py-local-{os.getpid()}-")
            return self._local_dir

    def get_daemon(self) -> Daemon:
        with self._lock:
            if self.daemon is None:
                self.daemon = Daemon()
            return self.daemon

    def bridge(self, mode: str) -> Bridge:
        if mode == "daemon":
            daemon = self.get_daemon()
        directory = self.local_dir if mode == "local" else ""
        with self._lock:
            if mode not in self._bridges:
                self._bridges[mode] = (
                    daemon.bridge() if mode == "daemon" else Bridge.local(BRIDGE_BIN, args=local_args(directory))
                )
            return self._bridges[mode]

    def close(self) -> List[str]:
        """Stops everything; what did not go away, as sentences."""
        problems = []
        for bridge in self._bridges.values():
            bridge.close()
        self._bridges.clear()
        if self.daemon is not None:
            status = self.daemon.stop()
            if status not in (0, -signal.SIGTERM):
                problems.append(f"the daemon exited with status {status}: {self.daemon.log()[-2000:].decode(errors='replace')}")
        if self._local_dir is not None:
            shutil.rmtree(self._local_dir, ignore_errors=True)
        return problems


shared = Shared()


def network_isolation() -> Tuple[bool, str]:
    """Whether this process's network namespace holds only loopback (run.py
    makes one), and why not when it does not."""
    with open("/proc/self/net/dev") as f:
        interfaces = [line.split(":")[0].strip() for line in f.readlines()[2:]]
    if interfaces == ["lo"]:
        return True, ""
    why = os.environ.get("LIZARD_PY_NO_NETNS", "run.py was not run (it makes the namespace)")
    return False, f"no network namespace with only loopback ({why}); interfaces here: {', '.join(interfaces)}"


# -- the seed's examples --

def local_variant(source: str) -> str:
    """The example with its constructor pointed at Bridge.local(): Bridge()
    becomes Bridge.local(), and X.create( of a sandbox class gets the local
    bridge (then the import names Bridge too). Nothing else changes."""
    out = []
    for line in source.splitlines(keepends=True):
        if line.startswith("from lizard_bridge import ") and "Bridge" not in line.split("import", 1)[1].replace("CodeSandbox", ""):
            line = line.replace("import ", "import Bridge, ", 1)
        line = line.replace("Bridge()", "Bridge.local()")
        line = re.sub(r"\b(CodeSandbox|Sandbox)\.create\(", r"\1.create(bridge=Bridge.local(), ", line)
        out.append(line)
    return "".join(out)


def run_example(name: str, mode: str, timeout: float = 180.0) -> Tuple[subprocess.CompletedProcess[str], Dict[str, Any]]:
    """Runs examples/NAME.py as a script of its own (run_example.py) against
    the shared daemon or a local bridge of its own; its output and a summary
    of what its variables held at the end."""
    env = {**os.environ, "PYTHONPATH": str(CLIENT), "LIZARD_BRIDGE_BIN": BRIDGE_BIN}
    if mode == "daemon":
        daemon = shared.get_daemon()
        env.update(LIZARD_API_URL=daemon.url, LIZARD_API_KEY=daemon.key)
    else:
        env.pop("LIZARD_API_URL", None)
        env.pop("LIZARD_API_KEY", None)
    with tempfile.NamedTemporaryFile(suffix=".json") as summary:
        done = subprocess.run(
            [sys.executable, str(HERE / "run_example.py"), str(EXAMPLES / f"{name}.py"), mode, summary.name],
            env=env, capture_output=True, text=True, timeout=timeout,
        )
        text = Path(summary.name).read_text()
    return done, json.loads(text) if text else {}


# -- PNG, read by hand (the standard library has no image module) --

def png_pixels(data: bytes) -> Tuple[int, int, List[bytes]]:
    """Width, height and the unfiltered rows of an 8-bit RGB or RGBA PNG;
    raises ValueError for anything that is not a whole, valid one."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"no PNG signature: {data[:8]!r}")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        crc = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])[0]
        if zlib.crc32(kind + body) != crc:
            raise ValueError(f"bad CRC in {kind!r}")
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
        pos += 12 + length
    if header is None:
        raise ValueError("no IHDR")
    width, height, depth, colour = header[:4]
    channels = {2: 3, 6: 4}.get(colour)
    if depth != 8 or channels is None:
        raise ValueError(f"depth {depth} colour type {colour} is not 8-bit RGB(A)")
    raw = zlib.decompress(idat)
    stride = width * channels
    if len(raw) != height * (stride + 1):
        raise ValueError(f"{len(raw)} bytes of pixels for {width}x{height}")
    rows: List[bytes] = []
    previous = bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        row = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            left = row[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                row[i] = (row[i] + left) & 255
            elif kind == 2:
                row[i] = (row[i] + up) & 255
            elif kind == 3:
                row[i] = (row[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                row[i] = (row[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
            elif kind != 0:
                raise ValueError(f"filter {kind} in row {y}")
        rows.append(bytes(row))
        previous = row
    return width, height, rows


def png_colours(data: bytes, step: int = 7) -> int:
    """How many different pixel values a sample of the image holds."""
    width, height, rows = png_pixels(data)
    channels = len(rows[0]) // width
    seen = set()
    for y in range(0, height, step):
        row = rows[y]
        for x in range(0, width, step):
            seen.add(row[x * channels : x * channels + 3])
    return len(seen)


class OnEachBridge(unittest.TestCase):
    """A test class's tests run once against the daemon and once against
    the local bridge: both_modes makes the two subclasses and takes the
    base itself out of its module, so it does not run a third time."""

    mode = "daemon"
    template: Optional[str] = None  # a sandbox the class's tests share, if set
    sandbox: Any = None

    @classmethod
    def setUpClass(cls) -> None:
        if cls.template is not None:
            cls.sandbox = cls.bridge().create(cls.template, timeout_ms=600_000)

    @classmethod
    def tearDownClass(cls) -> None:
        if cls.sandbox is not None:
            cls.sandbox.kill()
            cls.sandbox = None

    @classmethod
    def bridge(cls) -> Bridge:
        return shared.bridge(cls.mode)


def both_modes(base: type, module_globals: Dict[str, Any]) -> None:
    """Makes NameOverDaemon and NameOverLocal test cases from base."""
    for mode in MODES:
        name = f"{base.__name__}Over{mode.capitalize()}"
        module_globals[name] = type(name, (base,), {"mode": mode, "__module__": module_globals["__name__"]})
    del module_globals[base.__name__]
