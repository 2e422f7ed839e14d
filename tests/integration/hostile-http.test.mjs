// SPDX-License-Identifier: MIT
// Unauthenticated peers at the TCP level: connections that never send a
// request, stop halfway through one, or speak TLS to the plain port. None of
// them may take the daemon down; /healthz answers after each.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import http from 'node:http';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { sleep, waitFor, tempDir, pidsMatching } from '../lib/process.mjs';
import { startDaemon } from '../lib/bridge.mjs';
import { httpClient, textOf } from '../lib/mcp.mjs';
import { startXvnc } from '../lib/x11.mjs';
import { startTypingTarget, windowReady } from '../lib/x11-apps.mjs';

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

// ---- Unauthenticated resource use, DNS rebinding, and the loop's health.

// /healthz within 100 ms: the robustness deadline while peers misbehave.
// One miss is retried at once (a loaded test machine may stall a single
// probe); a loop that is wedged or spinning misses both.
async function healthzFast(url = daemon.url) {
  for (let attempt = 0; ; attempt++) {
    const started = Date.now();
    try {
      const status = await new Promise((resolve, reject) => {
        const req = http.get(new URL('/healthz', url), (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode));
        });
        req.setTimeout(100, () => req.destroy(new Error('/healthz did not answer within 100 ms')));
        req.on('error', reject);
      });
      assert.equal(status, 200);
      return Date.now() - started;
    } catch (e) {
      if (attempt === 1) throw e;
    }
  }
}

// A raw HTTP request; resolves with the status line's code and the body.
function request(target, { method = 'GET', path = '/', headers = {}, body } = {}) {
  const { hostname, port } = new URL(target.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: hostname, port, method, path, headers, setHost: false }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode, body: text }));
    });
    req.setTimeout(5000, () => req.destroy(new Error(`${method} ${path} did not answer`)));
    req.on('error', reject);
    req.end(body);
  });
}

// A TCP connection from a given loopback address (127.0.0.0/8 all reach us),
// so one test can be several peers. Resolves once connected; .gone
// resolves when the connection has closed.
function peerSocket(target, localAddress) {
  const { hostname, port } = new URL(target.url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port), localAddress });
    socket.gone = new Promise((done) => socket.on('close', done));
    socket.on('error', () => {});
    socket.on('connect', () => resolve(socket));
    socket.on('close', () => resolve(socket));
    socket.resume();
  });
}

// The status code a WebSocket upgrade gets, read off the raw socket.
async function upgradeStatus(target, path, protocol, host) {
  const socket = await peerSocket(target);
  let text = '';
  socket.on('data', (d) => (text += d));
  socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
    `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n` +
    `Sec-WebSocket-Protocol: ${protocol}\r\n\r\n`);
  await waitFor(() => text.includes('\r\n'), { timeout: 5000, interval: 20 });
  socket.destroy();
  return Number(/^HTTP\/1\.[01] (\d+)/.exec(text)?.[1]);
}

const initialize = JSON.stringify({
  jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'rebind', version: '1' } },
});

test('a Host header naming another site is refused on /mcp, /view and /viewer; /healthz stays open', async () => {
  const port = new URL(daemon.url).port;
  const evil = `evil.example.com:${port}`;
  const post = (host) => request(daemon, {
    method: 'POST', path: '/mcp', body: initialize,
    headers: { host, origin: `http://${host}`, authorization: `Bearer ${daemon.key}`,
      'content-type': 'application/json', accept: 'application/json, text/event-stream',
      'content-length': Buffer.byteLength(initialize) },
  });
  const refused = await post(evil);
  assert.equal(refused.status, 403);
  assert.match(refused.body, /Host/);
  assert.equal((await request(daemon, { path: '/view/s-1', headers: { host: evil } })).status, 403);
  assert.equal((await request(daemon, { path: '/metrics', headers: { host: evil } })).status, 403);
  for (const [path, protocol] of [['/viewer', 'lizard-viewer'], [`/mcp?access_token=${daemon.key}`, 'mcp']]) {
    assert.equal(await upgradeStatus(daemon, path, protocol, evil), 403, `${path.split('?')[0]} upgrade`);
    assert.equal(await upgradeStatus(daemon, path, protocol, `localhost:${port}`), 101, `${path.split('?')[0]} upgrade`);
  }
  assert.equal((await request(daemon, { path: '/healthz', headers: { host: evil } })).status, 200);
  // Our own names are served, whatever the port (an SSH forward keeps the name).
  for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, 'localhost:9000', `[::1]:${port}`]) {
    assert.equal((await post(host)).status, 200, host);
  }
  assert.equal((await request(daemon, { path: '/view/s-1', headers: { host: `localhost:${port}` } })).status, 200);
});

test('--allowed-host admits a proxy name, and only that one', async () => {
  const proxied = await startDaemon({ args: ['--allowed-host', 'bridge.example.org'] });
  try {
    const post = (host) => request(proxied, {
      method: 'POST', path: '/mcp', body: initialize,
      headers: { host, authorization: `Bearer ${proxied.key}`, 'content-type': 'application/json',
        accept: 'application/json, text/event-stream', 'content-length': Buffer.byteLength(initialize) },
    });
    assert.equal((await post('bridge.example.org')).status, 200);
    assert.equal((await post('BRIDGE.example.org:443')).status, 200);
    assert.equal((await post('other.example.org')).status, 403);
  } finally {
    await proxied.stop();
  }
});

// The server side's receive queues of our connections: 0 once it has read
// everything we sent.
function unreadBytes(target) {
  const port = new URL(target.url).port;
  const out = execFileSync('ss', ['-tnH', 'state', 'established', `( sport = :${port} )`]).toString();
  return out.trim().split('\n').filter(Boolean).reduce((sum, line) => sum + Number(line.trim().split(/\s+/)[0]), 0);
}

test('bodies of requests answered early (401, 404) are read and dropped, not kept', async () => {
  const before = daemon.rssKiB();
  const body = Buffer.alloc(4000000, 0x41);
  const sockets = [];
  for (let i = 0; i < 24; i++) {
    const socket = await peerSocket(daemon, '127.0.0.5');
    const path = i % 2 ? '/mcp' : '/nowhere';
    // All of the body but its last byte: the request stays open.
    socket.write(`POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${body.length}\r\n\r\n`);
    socket.write(body.subarray(0, body.length - 1));
    sockets.push(socket);
  }
  const read = await waitFor(() => unreadBytes(daemon) === 0, { timeout: 20000, interval: 100 });
  assert.ok(read, 'the daemon read every body it was sent');
  const grown = (daemon.rssKiB() - before) / 1024;
  assert.ok(grown < 24, `RSS grew ${grown.toFixed(1)} MiB for 24 answered bodies of 4 MB`);
  await healthzFast();
  for (const socket of sockets) socket.destroy();
});

test('idle viewer sockets beyond the cap are refused; those that never join are closed after the join deadline', async () => {
  const { default: WebSocket } = await import('ws');
  const url = daemon.url.replace('http://', 'ws://') + '/viewer';
  // 100 from one address, over its cap of 64.
  const attempts = await Promise.allSettled(Array.from({ length: 100 }, () => new Promise((resolve, reject) => {
    const ws = new WebSocket(url, 'lizard-viewer', { localAddress: '127.0.0.6' });
    ws.closedAt = new Promise((done) => ws.on('close', () => done(Date.now())));
    ws.on('open', () => resolve(ws));
    ws.on('error', reject);
  })));
  const opened = Date.now();
  const sockets = attempts.filter((a) => a.status === 'fulfilled').map((a) => a.value);
  assert.ok(sockets.length > 0 && sockets.length <= 64, `${sockets.length} of 100 viewer sockets were let in`);
  // The loop keeps serving meanwhile.
  for (let i = 0; i < 5; i++) await healthzFast();
  const closed = await Promise.race([Promise.all(sockets.map((ws) => ws.closedAt)), sleep(9000).then(() => null)]);
  assert.ok(closed, 'every viewer socket that never joined was closed within 9 s');
  assert.ok(Math.min(...closed) - opened >= 3000, 'none before the join deadline');
});

test('a request that trickles its body or headers is cut off at the request time limit', async () => {
  const strict = await startDaemon({ args: ['--request-timeout', '2'] });
  try {
    const trickle = async (head, drip) => {
      const socket = await peerSocket(strict, '127.0.0.7');
      let answer = '';
      socket.on('data', (d) => (answer += d));
      const started = Date.now();
      socket.write(head);
      const timer = setInterval(() => socket.writable && socket.write(drip), 300);
      const gone = await Promise.race([socket.gone.then(() => Date.now() - started), sleep(6000).then(() => null)]);
      clearInterval(timer);
      socket.destroy();
      return { gone, answer };
    };
    const body = await trickle(`POST /mcp HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${strict.key}\r\n` +
      'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n', '{');
    assert.ok(body.gone !== null && body.gone < 4000, `the trickled body was cut off (${body.gone} ms)`);
    assert.equal(body.answer, '', 'nothing was answered to half a message');
    const headers = await trickle('GET /healthz HTTP/1.1\r\nHost: localhost\r\n', 'X-Slow: 1\r\n');
    assert.ok(headers.gone !== null && headers.gone < 4000, `the trickled headers were cut off (${headers.gone} ms)`);
    await healthzFast(strict.url);
  } finally {
    await strict.stop();
  }
});

test('a peer address over its connection cap is refused at once; others are served within 100 ms', async () => {
  const capped = await startDaemon({ args: ['--max-peer-connections', '8', '--max-connections', '40'] });
  try {
    const sockets = [];
    for (let i = 0; i < 30; i++) sockets.push(await peerSocket(capped, '127.0.0.8'));
    // Beyond its 8, the peer's connections are closed without a word.
    const refused = await waitFor(() => sockets.filter((s) => s.destroyed || s.readyState === 'closed').length >= 22,
      { timeout: 3000 });
    assert.ok(refused, 'the connections over the per-peer cap were closed');
    for (let i = 0; i < 10; i++) await healthzFast(capped.url);

    // Many peers together: the total cap holds, then frees up as they leave.
    for (let p = 9; p < 16; p++) for (let i = 0; i < 8; i++) sockets.push(await peerSocket(capped, `127.0.0.${p}`));
    // The refused ones see their close a moment later.
    const stillOpen = () => sockets.filter((s) => !s.destroyed && s.readyState === 'open').length;
    await waitFor(() => stillOpen() <= 40, { timeout: 3000 });
    assert.ok(stillOpen() <= 40, `${stillOpen()} connections open under a cap of 40`);
    for (const s of sockets) s.destroy();
    assert.ok(await waitFor(async () => {
      try {
        return (await healthzFast(capped.url)) >= 0;
      } catch {
        return false;
      }
    }, { timeout: 12000 }), '/healthz answers again once the peers are gone');
    const refusals = capped.log.split('\n').filter((l) => /refused \d+ connection/.test(l)).length;
    assert.ok(refusals <= 3, `refusals were logged ${refusals} times, not once each`);
  } finally {
    await capped.stop();
  }
});

// CPU seconds (user + system) the process has used.
function cpuSeconds(pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

test('out of descriptors: no busy loop, no log flood, and service resumes', async () => {
  const starved = await startDaemon();
  try {
    // The limit drops under the running daemon, below what its caps assume.
    const base = starved.fdCount();
    execFileSync('prlimit', ['--pid', String(starved.child.pid), `--nofile=${base + 8}:`]);
    const sockets = [];
    for (let p = 20; p < 24; p++) for (let i = 0; i < 20; i++) sockets.push(await peerSocket(starved, `127.0.0.${p}`));
    await sleep(300);
    const cpuBefore = cpuSeconds(starved.child.pid);
    await sleep(1500);
    const cpu = cpuSeconds(starved.child.pid) - cpuBefore;
    assert.ok(cpu < 0.5, `the daemon used ${cpu.toFixed(2)} s of CPU in 1.5 s while out of descriptors`);
    const lines = starved.log.split('\n').filter((l) => /accept|suppressed|refused/.test(l)).length;
    assert.ok(lines < 30, `${lines} log lines about failed accepts`);
    for (const s of sockets) s.destroy();
    execFileSync('prlimit', ['--pid', String(starved.child.pid), '--nofile=4096:']);
    assert.ok(await waitFor(async () => {
      try {
        return (await healthzFast(starved.url)) >= 0;
      } catch {
        return false;
      }
    }, { timeout: 12000 }), '/healthz answers again');
  } finally {
    await starved.stop();
  }
});

// ---- Viewers and MCP clients that hold what they were given.

// The daemon side of one of our TCP connections, while it is established:
// its send queue in bytes, or null once the daemon has closed it.
function daemonSide(target, localPort) {
  const port = new URL(target.url).port;
  const out = execFileSync('ss', ['-tnH', 'state', 'established', `( sport = :${port} and dport = :${localPort} )`]).toString().trim();
  return out ? Number(out.split(/\s+/)[1]) : null;
}

// A screen full of noise that PNG cannot shrink: frames and screenshots of
// about 2 MB each. Alternates between two pictures on every call.
function noiseScreen(env, dir) {
  const files = [1, 2].map((n) => path.join(dir, `noise${n}.png`));
  for (const f of files) execFileSync('convert', ['-size', '1024x768', 'xc:', '+noise', 'Random', '-depth', '8', `PNG24:${f}`]);
  let next = 0;
  return () => {
    try {
      execFileSync('display', ['-window', 'root', files[next++ % 2]], { env, stdio: 'ignore' });
    } catch {} // display exits 1 after setting the root window
  };
}

function openSocket(url, protocol, options = {}) {
  return import('ws').then(({ default: WebSocket }) => new Promise((resolve, reject) => {
    const ws = new WebSocket(url, protocol, options);
    ws.received = [];
    ws.on('message', (data, binary) => ws.received.push(binary ? data : data.toString()));
    ws.on('open', () => resolve(ws));
    ws.on('error', reject);
  }));
}

test('a revoked control viewer that does not read: its input is dropped and it is closed at once', async () => {
  const xvnc = await startXvnc({ width: 1024, height: 768 });
  const dir = tempDir('lizard-revoke-');
  const file = path.join(dir, 'typed.txt');
  const terminal = startTypingTarget(xvnc.env, file, '60x6+0+0');
  const watched = await startDaemon();
  const client = await httpClient(watched);
  try {
    assert.ok(await waitFor(() => windowReady(xvnc.env, 'xterm', 'class') && fs.existsSync(file)));
    const session = JSON.parse(textOf(await client.call('create_session', { vnc: xvnc.url }))).session;
    const links = JSON.parse(textOf(await client.call('start_stream', { session })));
    const token = /#token=([0-9a-f]{32})/.exec(links.url)[1];
    const viewer = await openSocket(watched.url.replace('http://', 'ws://') + '/viewer', 'lizard-viewer');
    viewer.send(JSON.stringify({ session, token }));
    assert.ok(await waitFor(() => viewer.received.some((m) => typeof m === 'string' && /"hello"/.test(m))));
    await client.call('click', { session, x: 100, y: 40 }); // focus the terminal
    const key = (keysym) => {
      viewer.send(JSON.stringify({ type: 'key', keysym, down: true }));
      viewer.send(JSON.stringify({ type: 'key', keysym, down: false }));
    };
    key(0x78); // x: the control viewer's input arrives while its link is good
    assert.equal(await waitFor(() => fs.readFileSync(file, 'utf8') === 'x' && 'x'), 'x');

    // It stops reading (and so never acknowledges a paint) while the
    // screen changes. Flow control holds what the daemon sends it to one
    // unacknowledged update, so its socket never fills; what matters is
    // that a revoked viewer is cut off although it does not read.
    viewer.pause();
    const paint = noiseScreen(xvnc.env, dir);
    const localPort = viewer._socket.localPort;
    for (let i = 0; i < 3; i++) {
      paint();
      await sleep(300);
    }
    assert.notEqual(daemonSide(watched, localPort), null, 'the viewer is still connected');

    await client.call('stop_stream', { session });
    key(0x79); // y: sent after the revocation; must not arrive
    assert.ok(await waitFor(() => daemonSide(watched, localPort) === null, { timeout: 2000 }),
      'the revoked viewer was closed within 2 s although it does not read');
    await client.call('type', { session, text: 'marker\n' });
    const typed = await waitFor(() => fs.readFileSync(file, 'utf8').includes('marker\n') && fs.readFileSync(file, 'utf8'));
    assert.equal(typed, 'xmarker\n');
    viewer.terminate();
  } finally {
    await client.close();
    await watched.stop();
    await terminal.stop();
    await xvnc.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('an MCP WebSocket client that stops reading is closed at its queue bound; others go on', async () => {
  const xvnc = await startXvnc({ width: 1024, height: 768 });
  const dir = tempDir('lizard-queue-');
  const flooded = await startDaemon();
  const other = await httpClient(flooded);
  try {
    noiseScreen(xvnc.env, dir)();
    const session = JSON.parse(textOf(await other.call('create_session', { vnc: xvnc.url }))).session;
    const url = new URL(flooded.url.replace('http://', 'ws://') + '/mcp');
    url.searchParams.set('access_token', flooded.key);
    const ws = await openSocket(url, 'mcp');
    ws.send(initialize);
    assert.ok(await waitFor(() => ws.received.length > 0));
    ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    const before = flooded.rssKiB();
    ws.pause();
    const localPort = ws._socket.localPort;
    // 40 screenshots of noise: about 130 MB of replies nobody reads.
    for (let id = 2; id < 42; id++) {
      ws.send(JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'screenshot', arguments: { session } } }));
    }
    assert.ok(await waitFor(() => daemonSide(flooded, localPort) === null, { timeout: 30000, interval: 200 }),
      'the client that does not read was closed');
    assert.match(flooded.log, /64 MiB of replies queued/);
    const grown = (flooded.rssKiB() - before) / 1024;
    assert.ok(grown < 160, `RSS grew ${grown.toFixed(0)} MiB`);
    // Other clients were never held up (a new one: the first one's idle
    // keep-alive connection may have timed out meanwhile).
    const another = await httpClient(flooded);
    const listed = await another.call('list_sessions');
    assert.equal(listed.isError, false);
    await another.close();
    await healthzFast(flooded.url);
    ws.terminate();
  } finally {
    await other.close();
    await flooded.stop();
    await xvnc.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('SIGTERM with a stream and a viewer open: a clean exit (ASan: no use of a returned stack frame)', async () => {
  const xvnc = await startXvnc({ width: 640, height: 480 });
  // Under the sanitizers, have ASan catch any use of a returned frame.
  const asan = process.env.ASAN_OPTIONS;
  const ending = await startDaemon({ env: asan ? { ASAN_OPTIONS: `${asan}:detect_stack_use_after_return=1` } : {} });
  try {
    const client = await httpClient(ending);
    const session = JSON.parse(textOf(await client.call('create_session', { vnc: xvnc.url }))).session;
    const links = JSON.parse(textOf(await client.call('start_stream', { session })));
    const viewer = await openSocket(ending.url.replace('http://', 'ws://') + '/viewer', 'lizard-viewer');
    viewer.send(JSON.stringify({ session, token: /#token=([0-9a-f]{32})/.exec(links.url)[1] }));
    assert.ok(await waitFor(() => viewer.received.some((m) => typeof m === 'string' && /"hello"/.test(m))));
    await client.close();
    const started = Date.now();
    const { code, signal } = await ending.stop();
    assert.equal(signal, null);
    assert.equal(code, 0, ending.log.slice(-3000));
    assert.ok(Date.now() - started < 5000, 'exited within 5 s of SIGTERM');
    assert.doesNotMatch(ending.log, /AddressSanitizer|runtime error/);
    viewer.terminate();
  } finally {
    await ending.stop();
    await xvnc.stop();
  }
});

test('killing a watched local desktop leaves /healthz answering within 100 ms', async () => {
  const watched = await startDaemon();
  const client = await httpClient(watched);
  try {
    const session = JSON.parse(textOf(await client.call('create_session', { template: 'bare', size: '640x480' }))).session;
    // Programs that ignore SIGTERM: the teardown waits out their grace.
    const marker = `${1000 + Math.floor(Math.random() * 1000)}.${process.pid}`;
    for (let i = 0; i < 4; i++) {
      const launched = await client.call('launch', { session, command: `trap '' TERM; sleep ${marker}; :` });
      assert.equal(launched.isError, false, textOf(launched));
    }
    assert.ok(await waitFor(() => pidsMatching(`sleep ${marker}`).length >= 4), 'the programs run');
    const links = JSON.parse(textOf(await client.call('start_stream', { session })));
    const viewer = await openSocket(watched.url.replace('http://', 'ws://') + '/viewer', 'lizard-viewer');
    viewer.send(JSON.stringify({ session, token: /#token=([0-9a-f]{32})/.exec(links.url)[1] }));
    assert.ok(await waitFor(() => viewer.received.some((m) => typeof m === 'string' && /"hello"/.test(m))));
    const ended = new Promise((resolve) => viewer.on('close', resolve));
    const killed = client.call('kill_session', { session });
    // The viewer is told and let go (the desktop's last reference) while
    // /healthz keeps answering.
    const probes = [];
    const until = Date.now() + 3000;
    while (Date.now() < until) {
      probes.push(await healthzFast(watched.url));
      await sleep(50);
    }
    assert.equal((await killed).isError, false);
    await ended;
    assert.ok(viewer.received.some((m) => typeof m === 'string' && /"ended"/.test(m)), 'the viewer was told');
    assert.ok(probes.length > 10, `${probes.length} probes answered`);
    // The desktop still goes, on another thread: its programs are killed.
    assert.ok(await waitFor(() => pidsMatching(`sleep ${marker}`).length === 0),
      'the desktop was taken down');
  } finally {
    await client.close();
    await watched.stop();
  }
});
