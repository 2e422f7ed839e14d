# SPDX-License-Identifier: MIT
# Runs inside a session for tests/integration/ports.test.mjs: a WebSocket
# echo server (python3-websockets) on the sandbox's 127.0.0.1.
import asyncio
import sys

import websockets


async def echo(socket, *path):
    async for message in socket:
        await socket.send(message)


async def main():
    async with websockets.serve(echo, '127.0.0.1', int(sys.argv[1]), max_size=1 << 24):
        await asyncio.Future()


asyncio.run(main())
