# SPDX-License-Identifier: MIT
"""sandbox.desktop: the screen, mouse, keyboard, clipboard and browser of a
session, one method per tool of the bridge.

Coordinates are the bridge's: screenshot pixels, (0, 0) top left (large
screens come scaled, and every coordinate is in that scaled space). Input
of one desktop runs in the order sent, so a click followed by type
reaches the window the click focused. Each method waits as long as its
tool may take on the bridge (a drag up to about 16 s, open_url up to
30 s for a cold browser) on top of the bridge's own timeout."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Mapping, Optional, Sequence, Tuple, Union

from lizard_bridge.errors import TransportError
from lizard_bridge.results import (
    ComputerResult,
    CursorPosition,
    ScreenSize,
    StreamInfo,
    WaitResult,
    reader,
)

if TYPE_CHECKING:
    from lizard_bridge.sandbox import Sandbox

Point = Tuple[int, int]
Keys = Union[str, Sequence[str]]

# How long tools may run on the bridge, beyond the round trip.
_INPUT_SECONDS = 20.0
_OPEN_SECONDS = 45.0


def _keys(keys: Keys) -> str:
    """press takes presses separated by spaces; a list is those presses."""
    return keys if isinstance(keys, str) else " ".join(keys)


class Desktop:
    """The graphical side of one sandbox."""

    def __init__(self, sandbox: "Sandbox") -> None:
        self._sandbox = sandbox

    def _call(self, tool: str, seconds: float = 0.0, **arguments: Any) -> Any:
        return self._sandbox._call(tool, arguments, seconds=seconds)

    # -- watching --

    def start(self, *, ice_servers: Optional[Sequence[Mapping[str, Any]]] = None) -> StreamInfo:
        """Links for a browser (start_stream): info.url controls the
        desktop, info.view_only_url only shows it. A new start replaces
        the links and disconnects viewers of the old ones. The daemon serves
        the viewer page; so does a Bridge.local() child (stdio --viewer).

        ice_servers: STUN and TURN servers for the pages' WebRTC video, as
        RTCPeerConnection takes them ({"urls": "stun:host:3478"}, or
        {"urls": ["turn:host:3478"], "username": ..., "credential": ...});
        at most 8. One host or a LAN needs none. The pages get them when
        they join, never in a link; bad ones raise ToolError naming the
        field."""
        servers = [dict(server) for server in ice_servers] if ice_servers is not None else None
        return StreamInfo.from_data(self._call("start_stream", ice_servers=servers).structured)

    def stop(self) -> None:
        """Revokes the links (stop_stream); their viewers are disconnected."""
        self._call("stop_stream")

    def screenshot(
        self,
        region: Optional[Tuple[int, int, int, int]] = None,
        *,
        format: str = "png",
        quality: Optional[int] = None,
        settle: Optional[bool] = None,
        show_cursor: Optional[bool] = None,
    ) -> bytes:
        """The screen as PNG (or JPEG) bytes, the pointer drawn in.
        region (x1, y1, x2, y2) zooms into part of it at full resolution;
        settle waits until the screen stops changing first."""
        result = self._call(
            "screenshot",
            _INPUT_SECONDS if settle else 0.0,
            region=list(region) if region is not None else None,
            format=format,
            quality=quality,
            settle=settle,
            show_cursor=show_cursor,
        )
        if not result.images:
            raise TransportError("screenshot: the bridge's answer holds no image")
        return bytes(result.images[0][1])

    def cursor(self) -> CursorPosition:
        """Where the pointer is (cursor_position)."""
        r = reader("cursor_position", self._call("cursor_position").structured)
        return CursorPosition(r.integer("x"), r.integer("y"))

    def size(self) -> ScreenSize:
        """The screen's size in screenshot coordinates (screen_size)."""
        r = reader("screen_size", self._call("screen_size").structured)
        return ScreenSize(r.integer("width"), r.integer("height"), r.opt_integer("native_width"), r.opt_integer("native_height"))

    def wait(
        self, ms: Optional[int] = None, *, quiet_ms: Optional[int] = None, timeout_ms: Optional[int] = None
    ) -> WaitResult:
        """wait: ms fixed, or without ms until the screen has been still for
        quiet_ms (default 300), at most timeout_ms (default 5000)."""
        longest = (ms if ms is not None else (timeout_ms or 5000)) / 1000.0
        r = reader("wait", self._call("wait", longest, ms=ms, quiet_ms=quiet_ms, timeout_ms=timeout_ms).structured)
        settled = r.data.get("settled")
        return WaitResult(r.text("mode"), r.integer("waited_ms"), r.integer("updates"), settled if isinstance(settled, bool) else None)

    # -- the mouse --

    def click(
        self,
        x: Optional[int] = None,
        y: Optional[int] = None,
        *,
        button: str = "left",
        count: int = 1,
        modifiers: Optional[str] = None,
    ) -> None:
        """Clicks at (x, y), or where the pointer is. count 2 double-clicks;
        modifiers ("ctrl", "ctrl+shift") are held during the click."""
        self._call("click", _INPUT_SECONDS, x=x, y=y, button=button, count=count, modifiers=modifiers)

    def double_click(self, x: Optional[int] = None, y: Optional[int] = None, *, button: str = "left") -> None:
        self.click(x, y, button=button, count=2)

    def right_click(self, x: Optional[int] = None, y: Optional[int] = None) -> None:
        self.click(x, y, button="right")

    def move(self, x: int, y: int) -> None:
        """Moves the pointer (move_mouse); a held button drags."""
        self._call("move_mouse", _INPUT_SECONDS, x=x, y=y)

    def mouse_down(self, x: Optional[int] = None, y: Optional[int] = None, *, button: str = "left") -> None:
        """Presses and holds a button until mouse_up."""
        self._call("mouse_down", _INPUT_SECONDS, x=x, y=y, button=button)

    def mouse_up(self, x: Optional[int] = None, y: Optional[int] = None, *, button: str = "left") -> None:
        self._call("mouse_up", _INPUT_SECONDS, x=x, y=y, button=button)

    def drag(self, start: Point, end: Point, *via: Point, button: str = "left") -> None:
        """Presses at start, moves through via (if any) to end, releases:
        moves windows, selects text, drags and drops."""
        points = [start, *via, end]
        self._call("drag", _INPUT_SECONDS, path=[[int(x), int(y)] for x, y in points], button=button)

    def scroll(
        self,
        direction: str = "down",
        amount: int = 3,
        *,
        x: Optional[int] = None,
        y: Optional[int] = None,
        modifiers: Optional[str] = None,
    ) -> None:
        """Turns the wheel amount clicks up, down, left or right at (x, y),
        or where the pointer is."""
        self._call("scroll", _INPUT_SECONDS, direction=direction, amount=amount, x=x, y=y, modifiers=modifiers)

    # -- the keyboard --

    def type(self, text: str) -> None:
        """Types any Unicode text into the focused window; \\n is Return,
        \\t is Tab."""
        self._call("type", _INPUT_SECONDS + len(text) / 100.0, text=text)

    def press(self, keys: Keys) -> None:
        """Presses keys: "Return", "ctrl+shift+t", several presses separated
        by spaces ("ctrl+a Delete") or given as a list."""
        self._call("press", _INPUT_SECONDS, keys=_keys(keys))

    def hold_key(self, keys: Keys, duration_ms: int = 1000) -> None:
        """Holds keys down for duration_ms (at most 60000)."""
        self._call("hold_key", _INPUT_SECONDS + duration_ms / 1000.0, keys=_keys(keys), duration_ms=duration_ms)

    # -- clipboard, programs, the browser --

    def clipboard(self) -> str:
        """The desktop's clipboard text (clipboard_get)."""
        return reader("clipboard_get", self._call("clipboard_get").structured).text("text")

    def set_clipboard(self, text: str) -> None:
        """Puts text on the desktop's clipboard (clipboard_set)."""
        self._call("clipboard_set", _INPUT_SECONDS, text=text)

    def open_url(self, url: str, *, wait: bool = True) -> None:
        """Opens url in the desktop's Chromium (started on first use, new
        tabs after). With wait (the default) it returns once the page has
        been drawn and the screen has settled, so that the next click
        finds it; wait=False returns as soon as the browser was told."""
        self._call("open_url", _OPEN_SECONDS, url=url, screenshot=True if wait else None)

    def launch(self, command: str, *, wait: bool = False) -> str:
        """Starts a program (/bin/sh -c, as the sandbox's user) that keeps
        running, e.g. "xterm"; returns the bridge's sentence with its pid.
        wait: return once its window has been drawn (up to 10 s). One that
        exits at once with a non-zero status is a ToolError."""
        return str(self._call("launch", _OPEN_SECONDS if wait else _INPUT_SECONDS, command=command,
                              screenshot=True if wait else None).text)

    def computer(self, action: str, **arguments: Any) -> ComputerResult:
        """Anthropic's computer-use tool as the bridge offers it: action and
        its arguments (coordinate, text, ...) as that schema names them."""
        args: Dict[str, Any] = {"action": action, **arguments}
        result = self._sandbox._call("computer", args, seconds=_INPUT_SECONDS)
        image = bytes(result.images[0][1]) if result.images else None
        return ComputerResult(result.text, image)
