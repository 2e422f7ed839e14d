# SPDX-License-Identifier: MIT
# Runs inside a session for tests/integration/ports.test.mjs: an HTTP/1.1
# server (keep-alive) on the sandbox's 127.0.0.1 (or the address given
# after the port) that says what reached it.
#   GET  /headers            the request line and headers, as JSON
#   POST /upload             reads the body (Content-Length or chunked),
#                            answers its length and SHA-256
#   GET  /download?n=N       N bytes of a known pattern
#   GET  /sse                three server-sent events, then the end
#   GET  /chunked            a chunked answer
import hashlib
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

BLOCK = bytes(range(256)) * 256  # 64 KiB


class Handler(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, *args):
        pass

    def reply(self, status, body, content_type='application/json'):
        self.send_response(status)
        self.send_header('Content-Type', content_type)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        url = urlparse(self.path)
        if url.path == '/headers':
            body = {'path': self.path, 'headers': [[k, v] for k, v in self.headers.items()]}
            self.reply(200, json.dumps(body).encode())
        elif url.path == '/download':
            n = int(parse_qs(url.query)['n'][0])
            self.send_response(200)
            self.send_header('Content-Type', 'application/octet-stream')
            self.send_header('Content-Length', str(n))
            self.end_headers()
            while n > 0:
                piece = BLOCK[:min(n, len(BLOCK))]
                self.wfile.write(piece)
                n -= len(piece)
        elif url.path == '/sse':
            self.send_response(200)
            self.send_header('Content-Type', 'text/event-stream')
            self.send_header('Connection', 'close')
            self.end_headers()
            for i in range(3):
                self.wfile.write(f'data: event {i}\n\n'.encode())
                self.wfile.flush()
            self.close_connection = True
        elif url.path == '/chunked':
            self.send_response(200)
            self.send_header('Transfer-Encoding', 'chunked')
            self.end_headers()
            for piece in (b'hello ', b'chunked ', b'world'):
                self.wfile.write(b'%x\r\n%s\r\n' % (len(piece), piece))
            self.wfile.write(b'0\r\n\r\n')
        else:
            self.reply(404, b'{"error":"no such path"}')

    def do_POST(self):
        digest = hashlib.sha256()
        total = 0
        if self.headers.get('Transfer-Encoding', '').lower() == 'chunked':
            while True:
                size = int(self.rfile.readline().split(b';')[0], 16)
                if size == 0:
                    while self.rfile.readline() not in (b'\r\n', b'\n', b''):
                        pass
                    break
                left = size
                while left:
                    piece = self.rfile.read(min(left, 65536))
                    digest.update(piece)
                    left -= len(piece)
                total += size
                self.rfile.readline()
        else:
            left = int(self.headers.get('Content-Length', '0'))
            while left:
                piece = self.rfile.read(min(left, 65536))
                if not piece:
                    break
                digest.update(piece)
                total += len(piece)
                left -= len(piece)
        self.reply(200, json.dumps({'bytes': total, 'sha256': digest.hexdigest()}).encode())


ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer.request_queue_size = 512
ADDRESS = sys.argv[2] if len(sys.argv) > 2 else '127.0.0.1'  # the bench's: 0.0.0.0
ThreadingHTTPServer((ADDRESS, int(sys.argv[1])), Handler).serve_forever()
