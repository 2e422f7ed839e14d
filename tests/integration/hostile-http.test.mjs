// Unauthenticated peers at the TCP level: connections that never send a
// request, stop halfway through one, or speak TLS to the plain port. None of
// them may take the daemon down; /healthz answers after each.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import http from 'node:http';
import { startDaemon, sleep } from './lib.mjs';

let daemon;

before(async () => {
  daemon = await startDaemon();
});

after(async () => {
  await daemon?.stop();
});

function healthz() {
  return new Promise((resolve, reject) => {
    const req = http.get(new URL('/healthz', daemon.url), (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.setTimeout(2000, () => req.destroy(new Error('/healthz did not answer in 2 s')));
    req.on('error', reject);
  });
}

// Connects, sends bytes (maybe none), then closes; resolves when closed.
function rawConnection(bytes, { holdMs = 0 } = {}) {
  const { hostname, port } = new URL(daemon.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: hostname, port: Number(port) }, async () => {
      if (bytes.length) socket.write(bytes);
      if (holdMs) await sleep(holdMs);
      socket.end();
    });
    socket.on('error', () => {});
    socket.on('close', resolve);
    socket.setTimeout(10000, () => reject(new Error('socket never closed')));
    socket.resume();
  });
}

async function assertAlive() {
  assert.equal(daemon.child.exitCode, null, 'the daemon exited');
  assert.equal(daemon.child.signalCode, null, 'the daemon was killed by a signal');
  assert.equal(await healthz(), 200);
}

test('connect and close without a request leaves the daemon serving', async () => {
  for (let i = 0; i < 20; i++) await rawConnection(Buffer.alloc(0));
  await sleep(200);
  await assertAlive();
});

test('half a request line, then close, leaves the daemon serving', async () => {
  await rawConnection(Buffer.from('GET /heal'), { holdMs: 200 });
  await rawConnection(Buffer.from('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le'), { holdMs: 200 });
  await sleep(200);
  await assertAlive();
});

test('a TLS ClientHello on the plain port is closed quietly', async () => {
  // A TLS 1.2 record header and the start of a ClientHello handshake.
  const hello = Buffer.from([0x16, 0x03, 0x01, 0x00, 0x2f, 0x01, 0x00, 0x00, 0x2b, 0x03, 0x03,
    ...Array(32).fill(0x42), 0x00, 0x00, 0x02, 0x00, 0x2f, 0x01, 0x00]);
  await rawConnection(hello, { holdMs: 200 });
  await sleep(200);
  await assertAlive();
});
