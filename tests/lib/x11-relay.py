# SPDX-License-Identifier: MIT
# Makes a sandbox's X display reachable from the host as an ordinary display
# number. Local sessions have a network namespace of their own, so their X
# server's abstract socket is not in the host's; its socket file is, in the
# session's run directory. This relay listens on a free host display's
# abstract socket (Python names it exactly; Node pads the name with NULs)
# and forwards each connection to that file.
#
# Usage: python3 x11-relay.py SOCKET_PATH READY_FILE
# Writes the display number it took into READY_FILE; exits when its stdin
# closes (the test process ended).
import array
import os
import random
import socket
import sys
import threading

MAX_FDS = 16  # per message, as many as X sends at once

target, ready_file = sys.argv[1:3]
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
display = 2000 + random.randrange(50000)
while True:
    try:
        server.bind('\0/tmp/.X11-unix/X%d' % display)
        break
    except OSError:
        display += 1
server.listen(64)
with open(ready_file, 'w') as f:
    f.write(str(display))


def pump(source, sink):
    # File descriptors travel too: MIT-SHM hands a client its shared memory
    # segment as one (scrot waits for it forever otherwise).
    room = socket.CMSG_SPACE(MAX_FDS * array.array('i').itemsize)
    try:
        while True:
            data, ancillary, _, _ = source.recvmsg(65536, room)
            fds = array.array('i')
            for level, kind, payload in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    fds.frombytes(payload[:len(payload) - len(payload) % fds.itemsize])
            try:
                if not data:
                    break
                sent = 0
                if fds:
                    sent = sink.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
                sink.sendall(data[sent:])
            finally:
                for fd in fds:
                    os.close(fd)
    except OSError:
        pass
    for s in (source, sink):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def serve(client):
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(target)
    except OSError:
        client.close()
        upstream.close()
        return
    back = threading.Thread(target=pump, args=(upstream, client), daemon=True)
    back.start()
    pump(client, upstream)
    back.join()
    client.close()
    upstream.close()


def watch_parent():
    sys.stdin.read()
    os._exit(0)


threading.Thread(target=watch_parent, daemon=True).start()
while True:
    connection, _ = server.accept()
    threading.Thread(target=serve, args=(connection,), daemon=True).start()
