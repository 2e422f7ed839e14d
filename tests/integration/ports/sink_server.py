# SPDX-License-Identifier: MIT
# Runs inside a session for tests/integration/ports-bounds.test.mjs: a
# service that accepts connections and never reads from them, so whatever
# is sent to it piles up in front of it.
import socket
import sys
import time

listener = socket.socket()
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(('127.0.0.1', int(sys.argv[1])))
listener.listen(16)
held = []
while True:
    connection, _ = listener.accept()
    held.append(connection)
    time.sleep(0.01)
