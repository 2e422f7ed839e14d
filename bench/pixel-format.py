#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What Xvnc pays to convert pixels to a client's order.

Starts an Xvnc (1280x800) and asks it for the whole screen 40 times per
case, as raw pixels and with RRE allowed (a screen of one colour is then a
single rectangle), once in Xvnc's own B, G, R, X order and once in R, G, B,
X (what the bridge asked for before it took the server's order). Prints the
median time from request to the last byte.

Usage: python3 bench/pixel-format.py
"""
import os, shutil, socket, statistics, struct, subprocess, tempfile, time

RAW, RRE = 0, 2


def read(s, n):
    data = bytearray()
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            raise EOFError('Xvnc closed the connection')
        data += chunk
    return bytes(data)


def measure(path, rgbx, encodings, runs=40):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)  # an Xvnc that stops sending ends the run, not hangs it
    s.connect(path)
    read(s, 12)
    s.sendall(b'RFB 003.008\n')
    read(s, read(s, 1)[0])
    s.sendall(b'\x01')  # security: none
    read(s, 4)
    s.sendall(b'\x01')  # shared
    width, height = struct.unpack('>HH', read(s, 4))
    read(s, 16)
    read(s, struct.unpack('>I', read(s, 4))[0])
    if rgbx:  # 32 bpp, depth 24, little-endian, red at bit 0, blue at 16
        s.sendall(struct.pack('>BxxxBBBBHHHBBBxxx', 0, 32, 24, 0, 1, 255, 255, 255, 0, 8, 16))
    s.sendall(struct.pack('>BxH', 2, len(encodings)) + b''.join(struct.pack('>i', e) for e in encodings))
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        s.sendall(struct.pack('>BBHHHH', 3, 0, 0, 0, width, height))
        if read(s, 1)[0] != 0:
            raise ValueError('expected a framebuffer update')
        count = struct.unpack('>xH', read(s, 3))[0]
        for _ in range(count):
            _, _, w, h, encoding = struct.unpack('>HHHHi', read(s, 12))
            if encoding == RAW:
                read(s, w * h * 4)
            elif encoding == RRE:
                read(s, 4 + struct.unpack('>I', read(s, 4))[0] * 12)
            else:
                raise ValueError(f'unexpected encoding {encoding}')
        times.append((time.perf_counter() - start) * 1000)
    s.close()
    return statistics.median(times[5:])


def main():
    work = tempfile.mkdtemp(prefix='lizard-pixel-format-')
    path = os.path.join(work, 'vnc')
    display = next(d for d in range(90, 200) if not os.path.exists(f'/tmp/.X11-unix/X{d}'))
    xvnc = subprocess.Popen(['Xvnc', f':{display}', '-geometry', '1280x800', '-depth', '24',
                             '-SecurityTypes', 'None', '-rfbport', '-1', '-rfbunixpath', path],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while not os.path.exists(path):
            if xvnc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit('Xvnc did not start within 10 s')
            time.sleep(0.05)
        subprocess.run(['xsetroot', '-solid', '#336699'], env={**os.environ, 'DISPLAY': f':{display}'}, check=True)
        print('| encodings | Xvnc\'s order (B, G, R, X) | R, G, B, X | difference |')
        print('|---|---:|---:|---:|')
        for name, encodings in (('raw', [RAW]), ('raw, RRE', [RAW, RRE])):
            native, rgbx = measure(path, False, encodings), measure(path, True, encodings)
            print(f'| {name} | {native:.2f} ms | {rgbx:.2f} ms | {rgbx - native:.2f} ms |')
    finally:
        xvnc.terminate()
        try:
            xvnc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            xvnc.kill()
            xvnc.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
