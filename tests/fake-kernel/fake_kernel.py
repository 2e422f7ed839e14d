# SPDX-License-Identifier: MIT
"""A Jupyter kernel that misbehaves on purpose: it answers kernel_info and
execute_request like a kernel, but to every execute it first sends a stream
message signed with a key that is not the connection file's, then a
genuine one. A client that checks signatures shows only the genuine text.
Binds the connection file's ipc sockets; pyzmq comes with ipykernel."""
import datetime
import hashlib
import hmac
import json
import sys
import threading
import uuid

import zmq

conn = json.load(open(sys.argv[1]))
key = conn["key"].encode()
wrong_key = b"not-the-key"
session = uuid.uuid4().hex
context = zmq.Context()


def endpoint(name):
    return "ipc://%s-%d" % (conn["ip"], conn[name + "_port"])


def sign(k, frames):
    mac = hmac.new(k, digestmod=hashlib.sha256)
    for f in frames:
        mac.update(f)
    return mac.hexdigest().encode()


def send(socket, msg_type, content, parent, idents=(), k=key, topic=None):
    header = {"msg_id": uuid.uuid4().hex, "session": session, "username": "fake",
              "date": datetime.datetime.utcnow().isoformat() + "Z",
              "msg_type": msg_type, "version": "5.3"}
    frames = [json.dumps(x).encode() for x in (header, parent, {}, content)]
    prefix = list(idents) if idents else ([topic.encode()] if topic else [])
    socket.send_multipart(prefix + [b"<IDS|MSG>", sign(k, frames)] + frames)


shell = context.socket(zmq.ROUTER)
shell.bind(endpoint("shell"))
iopub = context.socket(zmq.PUB)
iopub.bind(endpoint("iopub"))
control = context.socket(zmq.ROUTER)
control.bind(endpoint("control"))
stdin = context.socket(zmq.ROUTER)
stdin.bind(endpoint("stdin"))
heartbeat = context.socket(zmq.REP)
heartbeat.bind(endpoint("hb"))


def echo():
    while True:
        heartbeat.send(heartbeat.recv())


threading.Thread(target=echo, daemon=True).start()

poller = zmq.Poller()
poller.register(shell, zmq.POLLIN)
poller.register(control, zmq.POLLIN)
count = 0
while True:
    for socket, _ in poller.poll():
        frames = socket.recv_multipart()
        at = frames.index(b"<IDS|MSG>")
        idents, header = frames[:at], json.loads(frames[at + 2])
        kind = header["msg_type"]
        send(iopub, "status", {"execution_state": "busy"}, header, topic="status")
        if kind == "kernel_info_request":
            send(socket, "kernel_info_reply",
                 {"status": "ok", "language_info": {"name": "fake"}}, header, idents)
        elif kind == "execute_request":
            count += 1
            send(iopub, "stream", {"name": "stdout", "text": "forged\n"}, header,
                 k=wrong_key, topic="stream")
            send(iopub, "stream", {"name": "stdout", "text": "genuine\n"}, header,
                 topic="stream")
            send(socket, "execute_reply", {"status": "ok", "execution_count": count},
                 header, idents)
        send(iopub, "status", {"execution_state": "idle"}, header, topic="status")
