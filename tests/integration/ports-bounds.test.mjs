// SPDX-License-Identifier: MIT
// The port proxy's bounds, each against a peer that misbehaves on purpose:
// a head too large, a head that never ends, a connection left idle, more
// connections to one session than allowed and more than the daemon holds,
// a service that never reads what is sent to it. After each, the proxy
// still serves.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import WebSocket from 'ws';
import { startDaemon } from '../lib/bridge.mjs';
import { httpClient } from '../lib/mcp.mjs';
import { sleep, waitFor } from '../lib/process.mjs';
import { portRequest, sessionServing, waitForService } from '../lib/ports.mjs';

const ECHO = 8001;
const WS = 8765;
const SINK = 8002;
const IDLE_S = 2;
const UPGRADED_IDLE_S = 6;
const PER_SESSION = 4;
const TOTAL = 24;

let daemon, client, session, echo, ws, sink, token;
const port = () => Number(daemon.listen.split(':')[1]);

before(async () => {
  daemon = await startDaemon({
    args: ['--port-idle-timeout', String(IDLE_S), '--port-upgraded-idle-timeout', String(UPGRADED_IDLE_S),
      '--max-port-connections', String(PER_SESSION),
      '--request-timeout', '2', '--max-connections', String(TOTAL)],
  });
  client = await httpClient(daemon);
  let exposed;
  ({ session, exposed } = await sessionServing(client, {
    [ECHO]: `exec python3 /tmp/site/echo_server.py ${ECHO}`,
    [WS]: `exec python3 /tmp/site/ws_echo.py ${WS}`,
    [SINK]: `exec python3 /tmp/site/sink_server.py ${SINK}`,
  }));
  [echo, ws, sink] = [exposed[ECHO], exposed[WS], exposed[SINK]];
  token = echo.token;
  await waitForService(daemon, echo.host, token, '/headers');
});

after(async () => {
  await client?.call('kill_session', { session }).catch(() => {});
  await client?.close();
  await daemon?.stop();
});

async function stillServes() {
  const r = await portRequest(daemon, { host: echo.host, path: '/headers', headers: { 'X-Lizard-Access-Token': token } });
  assert.equal(r.status, 200);
}

// A raw connection to the daemon; resolves with it once connected. Its
// text is collected in socket.received; socket.ended resolves at its close.
function rawConnection() {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port(), '127.0.0.1', () => resolve(socket));
    socket.received = '';
    socket.on('data', (d) => (socket.received += d));
    socket.ended = new Promise((done) => socket.on('close', done));
    socket.on('error', () => {});
    socket.once('error', reject);
  });
}

const within = (promise, ms) => Promise.race([promise.then(() => true), sleep(ms).then(() => false)]);

test('a request head over 16 KiB gets 431 and the connection closes', async () => {
  const socket = await rawConnection();
  socket.write(`GET / HTTP/1.1\r\nHost: ${echo.host}\r\nX-Lizard-Access-Token: ${token}\r\nX-Big: ${'a'.repeat(20000)}\r\n\r\n`);
  assert.ok(await within(socket.ended, 10000), 'closed');
  assert.match(socket.received, /^HTTP\/1.1 431 /);
  await stillServes();
});

test('a head that never ends is closed at the request time limit', async () => {
  const socket = await rawConnection();
  socket.write(`GET / HTTP/1.1\r\nHost: ${echo.host}\r\nX-Lizard-Access-Token: ${token}\r\n`);
  const trickle = setInterval(() => socket.write('X-More: 1\r\n'), 300);
  try {
    assert.ok(await within(socket.ended, 15000), 'closed although it kept sending');
  } finally {
    clearInterval(trickle);
  }
  await stillServes();
});

test('an idle connection is closed after --port-idle-timeout, a WebSocket is not', async () => {
  const socket = await rawConnection();
  socket.write(`GET /headers HTTP/1.1\r\nHost: ${echo.host}\r\nX-Lizard-Access-Token: ${token}\r\n\r\n`);
  await waitFor(() => socket.received.includes('"path"'), { timeout: 10000 });
  assert.ok(await within(socket.ended, 15000), 'the idle connection closed');
  const socketWs = new WebSocket(`ws://127.0.0.1:${port()}/`, { headers: { Host: ws.host, 'X-Lizard-Access-Token': token } });
  await new Promise((resolve, reject) => {
    socketWs.once('open', resolve);
    socketWs.once('error', reject);
  });
  await sleep((IDLE_S + 2) * 1000); // quiet for longer than HTTP may be
  const echoed = await new Promise((resolve, reject) => {
    socketWs.once('message', (d) => resolve(String(d)));
    socketWs.once('close', () => reject(new Error('the WebSocket was closed while quiet')));
    socketWs.send('still here');
  });
  assert.equal(echoed, 'still here');
  // A WebSocket that stays quiet past --port-upgraded-idle-timeout is
  // closed by the proxy (the peer misbehaves by saying nothing at all).
  const closed = new Promise((resolve) => socketWs.once('close', resolve));
  assert.ok(await within(closed, (UPGRADED_IDLE_S + 10) * 1000), 'the quiet WebSocket was closed');
});

test('connections to one session beyond --max-port-connections get 429', async () => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: PER_SESSION + 1 });
  try {
    const held = await Promise.all(Array.from({ length: PER_SESSION }, () =>
      portRequest(daemon, { host: echo.host, path: '/headers', headers: { 'X-Lizard-Access-Token': token }, agent })));
    assert.ok(held.every((r) => r.status === 200));
    // The agent keeps those; a fresh connection is one too many.
    const over = await portRequest(daemon, { host: echo.host, path: '/headers', headers: { 'X-Lizard-Access-Token': token } });
    assert.equal(over.status, 429);
    assert.match(JSON.parse(over.body).error, /connections/);
  } finally {
    agent.destroy();
  }
  await waitFor(async () => (await portRequest(daemon, { host: echo.host, path: '/headers', headers: { 'X-Lizard-Access-Token': token } })).status === 200, { timeout: 10000, interval: 100 });
});

test('connections beyond the daemon\'s total are refused at once, and it serves again after', async () => {
  const sockets = [];
  try {
    // All at once: those held count (until the request time limit).
    sockets.push(...(await Promise.all(Array.from({ length: TOTAL + 8 }, rawConnection))));
    const ended = new Set();
    sockets.forEach((s, i) => s.ended.then(() => ended.add(i)));
    await sleep(500); // refused ones are closed before anything is read from them
    const refused = ended.size;
    assert.ok(refused >= 8, `${refused} of ${TOTAL + 8} were refused`);
  } finally {
    for (const s of sockets) s.destroy();
  }
  await waitFor(async () => (await portRequest(daemon, { host: echo.host, path: '/headers', headers: { 'X-Lizard-Access-Token': token } }).catch(() => ({ status: 0 }))).status === 200, { timeout: 15000, interval: 200 });
});

test('a service that never reads stalls its own upload and grows nothing', async () => {
  const base = daemon.rssKiB();
  const socket = await rawConnection();
  socket.write(`POST /upload HTTP/1.1\r\nHost: ${sink.host}\r\nX-Lizard-Access-Token: ${token}\r\nContent-Length: ${200 * 1024 * 1024}\r\n\r\n`);
  const block = crypto.randomBytes(1024 * 1024);
  let written = 0;
  let stalled = false;
  // Writes until the socket refuses more for a while: the proxy stopped reading.
  for (let i = 0; i < 200 && !stalled; i++) {
    if (!socket.write(block)) {
      stalled = !(await within(new Promise((r) => socket.once('drain', r)), 2000));
    }
    written += block.length;
  }
  assert.ok(stalled, `the proxy took all ${written} bytes`);
  const growth = daemon.rssKiB() - base;
  assert.ok(growth < 32 * 1024, `RSS grew ${growth} KiB`);
  socket.destroy();
  await stillServes();
});

test('an upload refused before its body is read still gets its answer, then the connection closes', async () => {
  const socket = await rawConnection();
  const size = 8 * 1024 * 1024;
  socket.write(`POST /upload HTTP/1.1\r\nHost: ${echo.host}\r\nContent-Length: ${size}\r\n\r\n`);
  const block = Buffer.alloc(256 * 1024, 1);
  for (let sent = 0; sent < size && !socket.destroyed; sent += block.length) {
    if (!socket.write(block)) await within(new Promise((r) => socket.once('drain', r)), 2000);
  }
  assert.ok(await within(socket.ended, 15000), 'closed');
  assert.match(socket.received, /^HTTP\/1.1 401 /, 'the answer arrived, not a reset');
  await stillServes();
});

test('an upgrade the service declines ends the connection with its answer: nothing sent after it reaches the service', async () => {
  const socket = await rawConnection();
  socket.write(`GET /not-a-socket HTTP/1.1\r\nHost: ${echo.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nX-Lizard-Access-Token: ${token}\r\n\r\n`);
  // Sent at once, unparsed while the upgrade waits: it must not go through raw.
  socket.write(`GET /headers?lizard_access_token=${token} HTTP/1.1\r\nHost: ${echo.host}\r\n\r\n`);
  assert.ok(await within(socket.ended, 15000), 'closed after the answer');
  assert.match(socket.received, /^HTTP\/1.[01] 404 /);
  assert.ok(!socket.received.includes('"path"'), 'the second request never reached the service');
  await stillServes();
});

test('SIGTERM with proxied connections open (a WebSocket, a download nobody reads): a clean exit', async () => {
  const own = await startDaemon();
  const ownClient = await httpClient(own);
  const { exposed } = await sessionServing(ownClient, {
    [ECHO]: `exec python3 /tmp/site/echo_server.py ${ECHO}`,
    [WS]: `exec python3 /tmp/site/ws_echo.py ${WS}`,
  });
  const echoHere = exposed[ECHO];
  await waitForService(own, echoHere.host, echoHere.token, '/headers');
  const ownPort = Number(own.listen.split(':')[1]);
  const socketWs = new WebSocket(`ws://127.0.0.1:${ownPort}/`, { headers: { Host: exposed[WS].host, 'X-Lizard-Access-Token': echoHere.token } });
  socketWs.on('error', () => {});
  await waitFor(() => socketWs.readyState === WebSocket.OPEN, { timeout: 20000 });
  const stalled = await new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port: ownPort, path: `/download?n=${500 * 1024 * 1024}`, headers: { Host: echoHere.host, 'X-Lizard-Access-Token': echoHere.token } }, (res) => {
      res.pause();
      resolve(res);
    }).on('error', reject);
  });
  stalled.on('error', () => {});
  await ownClient.close();
  own.child.kill('SIGTERM');
  const ended = await Promise.race([own.exited, sleep(10000).then(() => null)]);
  assert.ok(ended, 'the daemon exited');
  assert.equal(ended.code, 0);
  socketWs.terminate();
  stalled.destroy();
});
