# SPDX-License-Identifier: MIT
# The wall clock on the desktop, for bench/viewer.mjs's glass-to-glass
# latency: a borderless X window (Tk, placed exactly: override-redirect)
# that shows the low 24 bits of the time in milliseconds as a row of black
# and white blocks, then 8 bits that check them, repainted every few
# milliseconds. A viewer page reads the row back from what it shows and
# subtracts the value from its own clock (the same machine's).
#
# Usage: python3 bench/viewer-clock.py X Y BLOCK
# (the row's top left corner on the screen, a block's side in pixels)
import sys
import time
import tkinter

BITS = 24
CHECK_BITS = 8
TICK_MS = 5


def check(value):
    """The check byte: the value's three bytes, xor'ed, then inverted, so
    that an all-black or all-white row never passes."""
    return ~(value ^ (value >> 8) ^ (value >> 16)) & 0xFF


def main():
    x, y, block = (int(a) for a in sys.argv[1:4])
    count = BITS + CHECK_BITS
    root = tkinter.Tk()
    root.overrideredirect(True)
    root.geometry(f"{count * block}x{block}+{x}+{y}")
    canvas = tkinter.Canvas(root, width=count * block, height=block, highlightthickness=0, bd=0)
    canvas.place(x=0, y=0)
    blocks = [canvas.create_rectangle(i * block, 0, (i + 1) * block, block, width=0)
              for i in range(count)]

    def tick():
        value = int(time.time() * 1000) & ((1 << BITS) - 1)
        word = value | (check(value) << BITS)
        for i, item in enumerate(blocks):
            canvas.itemconfigure(item, fill="#ffffff" if word >> i & 1 else "#000000")
        root.update_idletasks()  # on the screen now, not when Tk is idle
        root.after(TICK_MS, tick)

    tick()
    root.mainloop()


if __name__ == "__main__":
    main()
