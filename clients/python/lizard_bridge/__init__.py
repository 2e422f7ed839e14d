# SPDX-License-Identifier: MIT
"""A Python client for lizard-bridge, shaped like the hosted desktop
sandbox SDK it stands in for: a script written for that one runs here with
its import and constructor changed.

    from lizard_bridge import Bridge

    bridge = Bridge()                  # LIZARD_API_URL, LIZARD_API_KEY
    with bridge.create("desktop") as sandbox:
        sandbox.fs.write("/tmp/hello.txt", "Hello")
        print(sandbox.process.exec_("cat /tmp/hello.txt").stdout)
        png = sandbox.desktop.screenshot()

Bridge.local() starts `lizard-bridge stdio` instead of talking to a daemon.
Standard library only."""

from lizard_bridge._mcp import ToolResult
from lizard_bridge.bridge import Bridge
from lizard_bridge.desktop import Desktop
from lizard_bridge.errors import (
    AuthError,
    BridgeError,
    BridgeTimeoutError,
    NotFoundError,
    RpcError,
    ToolError,
    TransportError,
)
from lizard_bridge.results import (
    CodeContext,
    ComputerResult,
    CursorPosition,
    Execution,
    ExecutionError,
    ExecResult,
    ExposedPort,
    FileEntry,
    Logs,
    Result,
    SandboxInfo,
    ScreenSize,
    StreamInfo,
    Volume,
    VolumeInfo,
    SnapshotInfo,
    TemplateInfo,
    WaitResult,
    WriteInfo,
)
from lizard_bridge.sandbox import CodeSandbox, Filesystem, Process, Sandbox

__version__ = "0.1.0"

__all__ = [
    "AuthError",
    "Bridge",
    "BridgeError",
    "CodeContext",
    "CodeSandbox",
    "BridgeTimeoutError",
    "ComputerResult",
    "CursorPosition",
    "Desktop",
    "ExecResult",
    "Execution",
    "ExposedPort",
    "ExecutionError",
    "FileEntry",
    "Logs",
    "Filesystem",
    "NotFoundError",
    "Process",
    "Result",
    "RpcError",
    "Sandbox",
    "SandboxInfo",
    "ScreenSize",
    "StreamInfo",
    "ToolError",
    "ToolResult",
    "TransportError",
    "Volume",
    "VolumeInfo",
    "SnapshotInfo",
    "TemplateInfo",
    "WaitResult",
    "WriteInfo",
]
