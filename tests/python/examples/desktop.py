# SPDX-License-Identifier: MIT
from lizard_bridge import Bridge

lizard = Bridge()

# Desktop (computer use)
with lizard.create("desktop") as sandbox:
    info = sandbox.desktop.start()  # open info.url in a browser
    sandbox.desktop.open_url("https://example.com")
    sandbox.desktop.click(640, 400)
    sandbox.desktop.type("hello")
    sandbox.desktop.press("Return")
    png: bytes = sandbox.desktop.screenshot()
