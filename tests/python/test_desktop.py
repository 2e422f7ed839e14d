# SPDX-License-Identifier: MIT
"""sandbox.desktop against a real local desktop (Xvnc + openbox), one per
bridge shared by these tests. What the input methods did is read from X
programs inside the desktop: xev's event log for clicks, wheel, drags and
held keys, a cat behind an xterm for typed text."""

from __future__ import annotations

import re
import urllib.request
from typing import List, Tuple

from harness import OnEachBridge, both_modes, png_colours, png_pixels, wait_for
from lizard_bridge import ComputerResult, CursorPosition, ScreenSize, StreamInfo, ToolError, WaitResult


class Desktop(OnEachBridge):
    template = "desktop"

    def start_xev(self, name: str) -> str:
        """xev in a large window at the top left that covers the screen's
        centre; returns its log's path once it is mapped."""
        log = f"/tmp/{name}.log"
        self.sandbox.desktop.launch(
            f"stdbuf -oL xev -geometry 1200x760+0+0 -event button -event keyboard -event structure > {log}"
        )
        mapped = wait_for(lambda: "MapNotify" in self.read(log), 15)
        self.assertTrue(mapped, f"xev did not map its window: {self.read(log)!r}")
        self.sandbox.desktop.click(640, 400)  # focus it
        wait_for(lambda: any(e[0] == "ButtonRelease" for e in self.all_events(log)), 5)
        return log

    def read(self, path: str) -> str:
        try:
            return str(self.sandbox.fs.read(path))
        except ToolError:
            return ""

    def all_events(self, log: str) -> List[Tuple[str, int, int, str]]:
        """(kind, x, y, detail) of each button and key event xev logged."""
        out = []
        for block in self.read(log).split("\n\n"):
            block = block.strip()
            where = re.search(r"\((-?\d+),(-?\d+)\), root", block)
            detail = re.search(r"(button \d+|keysym 0x[0-9a-f]+, \w+)", block)
            if where and detail:
                out.append((block.split(" ", 1)[0], int(where.group(1)), int(where.group(2)), detail.group(1)))
        return out

    def events(self, log: str, after: int, kind: str, count: int) -> List[Tuple[int, int, str]]:
        """The (x, y, detail) of the events of a kind among those past the
        first `after`, once there are `count` of them."""

        def found() -> List[Tuple[int, int, str]]:
            new = [(x, y, detail) for k, x, y, detail in self.all_events(log)[after:] if k == kind]
            return new if len(new) >= count else []

        return list(wait_for(found, 10) or found())

    def test_screenshot_is_a_png_of_the_screen(self) -> None:
        size = self.sandbox.desktop.size()
        self.assertIsInstance(size, ScreenSize)
        self.assertEqual((size.width, size.height), (1280, 800))
        png = self.sandbox.desktop.screenshot()
        width, height, _ = png_pixels(png)
        self.assertEqual((width, height), (1280, 800))
        zoomed = self.sandbox.desktop.screenshot(region=(0, 0, 100, 50))
        self.assertEqual(png_pixels(zoomed)[:2], (100, 50))
        jpeg = self.sandbox.desktop.screenshot(format="jpeg")
        self.assertEqual(jpeg[:3], b"\xff\xd8\xff")

    def test_move_puts_the_pointer_where_cursor_says(self) -> None:
        self.sandbox.desktop.move(123, 456)
        self.assertEqual(self.sandbox.desktop.cursor(), CursorPosition(123, 456))

    def test_clicks_wheel_and_drag_reach_a_program(self) -> None:
        log = self.start_xev("xev-mouse")
        seen = len(self.all_events(log))
        desktop = self.sandbox.desktop
        desktop.double_click(640, 400)
        presses = self.events(log, seen, "ButtonPress", 2)
        self.assertEqual([p[2] for p in presses], ["button 1", "button 1"])
        self.assertEqual(presses[0][:2], presses[1][:2])

        seen = len(self.all_events(log))
        desktop.scroll("down", 2, x=640, y=400)
        self.assertEqual([p[2] for p in self.events(log, seen, "ButtonPress", 2)], ["button 5", "button 5"])

        seen = len(self.all_events(log))
        desktop.drag((600, 380), (700, 450))
        press = self.events(log, seen, "ButtonPress", 1)[0]
        release = self.events(log, seen, "ButtonRelease", 1)[0]
        self.assertEqual((release[0] - press[0], release[1] - press[1]), (100, 70))
        self.assertEqual(desktop.cursor(), CursorPosition(700, 450))

        seen = len(self.all_events(log))
        desktop.mouse_down(650, 410, button="right")
        desktop.mouse_up(650, 410, button="right")
        self.assertEqual(self.events(log, seen, "ButtonRelease", 1)[0][2], "button 3")

        seen = len(self.all_events(log))
        desktop.hold_key("shift", 200)
        keys = self.events(log, seen, "KeyRelease", 1)
        self.assertIn("Shift_L", keys[0][2])

    def test_type_and_press_reach_the_focused_window(self) -> None:
        desktop = self.sandbox.desktop
        desktop.launch("xterm -geometry 60x8+0+0 -e sh -c 'touch /tmp/xterm-ready; cat > /tmp/typed.txt'")
        self.assertTrue(wait_for(lambda: "xterm-ready" in [e.name for e in self.sandbox.fs.list("/tmp")], 15))
        desktop.wait(quiet_ms=300, timeout_ms=5000)
        desktop.click(100, 60)
        desktop.type("héllo wörld\n")
        desktop.type("second")
        desktop.press("Return")
        desktop.press(["ctrl+d"])
        typed = wait_for(lambda: self.read("/tmp/typed.txt") == "héllo wörld\nsecond\n" and self.read("/tmp/typed.txt"), 10)
        self.assertEqual(typed, "héllo wörld\nsecond\n")

    def test_clipboard_round_trips_unicode(self) -> None:
        text = "copied ✓ lizard 🦎"
        self.sandbox.desktop.set_clipboard(text)
        self.assertEqual(self.sandbox.desktop.clipboard(), text)

    def test_wait_settles(self) -> None:
        result = self.sandbox.desktop.wait(quiet_ms=200, timeout_ms=3000)
        self.assertIsInstance(result, WaitResult)
        self.assertEqual(result.mode, "settle")
        fixed = self.sandbox.desktop.wait(150)
        self.assertEqual(fixed.mode, "fixed")
        self.assertGreaterEqual(fixed.waited_ms, 150)

    def test_computer_answers_with_a_screenshot(self) -> None:
        result = self.sandbox.desktop.computer("screenshot")
        self.assertIsInstance(result, ComputerResult)
        assert result.image is not None
        self.assertEqual(png_pixels(result.image)[:2], (1280, 800))

    def test_launch_of_a_failing_command_is_a_tool_error(self) -> None:
        with self.assertRaises(ToolError) as caught:
            self.sandbox.desktop.launch("echo broken >&2; exit 3")
        self.assertIn("3", caught.exception.message)

    def test_open_url_waits_for_the_page_to_be_drawn(self) -> None:
        # A page of the sandbox's own: no network needed.
        self.sandbox.fs.write("/tmp/page.html", "<body style='background:#c03030'><h1>lizard page</h1></body>")
        self.sandbox.desktop.open_url("file:///tmp/page.html")
        png = self.sandbox.desktop.screenshot()
        _, _, rows = png_pixels(png)
        channels = len(rows[0]) // 1280
        centre = rows[500][640 * channels : 640 * channels + 3]
        self.assertEqual(centre, bytes([0xC0, 0x30, 0x30]), f"the page's colour is not on screen: {centre!r}")
        self.assertGreater(png_colours(png), 8)

    def test_start_gives_viewer_links_that_serve_the_page(self) -> None:
        # The local bridge serves them too (stdio --viewer on loopback).
        info = self.sandbox.desktop.start()
        self.assertIsInstance(info, StreamInfo)
        self.assertNotEqual(info.url, info.view_only_url)
        page = info.url.split("#", 1)[0]
        no_proxy = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with no_proxy.open(page, timeout=10) as response:
            self.assertEqual(response.status, 200)
            self.assertIn("text/html", response.headers.get("Content-Type", ""))
        again = self.sandbox.desktop.start()
        self.assertNotEqual(again.url, info.url)  # new links replace the old
        self.sandbox.desktop.stop()

    def test_start_takes_ice_servers_and_refuses_bad_ones(self) -> None:
        servers = [
            {"urls": "stun:stun.example.org:3478"},
            {"urls": ["turn:turn.example.org:3478"], "username": "viewer", "credential": "py-secret-7f"},
        ]
        info = self.sandbox.desktop.start(ice_servers=servers)
        self.assertIsInstance(info, StreamInfo)
        self.assertNotIn("py-secret", info.url + info.view_only_url)  # the page gets them, not the link
        with self.assertRaises(ToolError) as refused:
            self.sandbox.desktop.start(ice_servers=[{"urls": "http://stun.example.org"}])
        self.assertIn("ice_servers[0].urls must start with stun:, turn: or turns:", str(refused.exception))
        with self.assertRaises(ToolError) as refused:
            self.sandbox.desktop.start(ice_servers=[{"urls": "turn:turn.example.org", "username": "viewer"}])
        self.assertIn("needs both username and credential", str(refused.exception))
        self.sandbox.desktop.stop()


both_modes(Desktop, globals())
