// SPDX-License-Identifier: MIT
// The daemon's edges: keys, origins, sizes, malformed input, protocol
// headers, disconnects. After each, it must still serve.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import fs from 'node:fs';
import { spawnSync } from 'node:child_process';
import WebSocket from 'ws';
import { waitFor, sleep, tempDir } from '../lib/process.mjs';
import { startDaemon, bridgeBin, bridgeEnv } from '../lib/bridge.mjs';
import { httpClient, wsClient, textOf } from '../lib/mcp.mjs';

let daemon;

before(async () => {
  daemon = await startDaemon();
});

after(async () => {
  await daemon?.stop();
});

// A raw HTTP request; resolves { status, headers, body }.
function request(method, path, { headers = {}, body } = {}) {
  const url = new URL(path, daemon.url);
  return new Promise((resolve, reject) => {
    const length = body === undefined ? {} : { 'Content-Length': Buffer.byteLength(body) };
    const req = http.request(url, { method, headers: { ...length, ...headers } }, (res) => {
      let data = '';
      res.on('data', (d) => (data += d));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: data }));
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

const auth = () => ({ Authorization: `Bearer ${daemon.key}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' });
const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });

async function stillServes() {
  const health = await request('GET', '/healthz');
  assert.equal(health.status, 200);
  const client = await httpClient(daemon);
  const list = await client.call('list_sessions');
  assert.equal(list.isError, false);
  await client.close();
}

// Opens a WebSocket; resolves with the status of a refused upgrade or 'open'.
function upgrade(path, { headers = {}, protocol = 'mcp' } = {}) {
  return new Promise((resolve) => {
    const ws = new WebSocket(new URL(path, daemon.url.replace('http', 'ws')), protocol, { headers });
    ws.on('unexpected-response', (req, res) => resolve({ status: res.statusCode }));
    ws.on('open', () => resolve({ status: 'open', ws }));
    ws.on('error', () => resolve({ status: 'error' }));
  });
}

test('/healthz answers and /metrics speaks Prometheus text', async () => {
  const client = await httpClient(daemon);
  await client.call('list_sessions');
  await client.call('screenshot'); // fails: no session
  await client.close();
  const metrics = await request('GET', '/metrics');
  assert.equal(metrics.status, 200);
  assert.match(metrics.headers['content-type'], /^text\/plain/);
  assert.match(metrics.body, /^lizard_sessions\{state="ready"\} \d+$/m);
  assert.match(metrics.body, /^lizard_tool_calls_total\{tool="list_sessions",outcome="ok"\} [1-9]\d*$/m);
  assert.match(metrics.body, /^lizard_tool_calls_total\{tool="screenshot",outcome="error"\} [1-9]\d*$/m);
  assert.match(metrics.body, /^lizard_tool_call_seconds_bucket\{le="\+Inf"\} \d+$/m);
  assert.match(metrics.body, /^lizard_tool_call_seconds_count \d+$/m);
  assert.match(metrics.body, /^lizard_viewers \d+$/m);
});

test('a missing or wrong key gets 401 on HTTP and on the WebSocket upgrade', async () => {
  for (const headers of [{}, { Authorization: 'Bearer wrong-key' }, { Authorization: `Basic ${daemon.key}` }]) {
    const r = await request('POST', '/mcp', { headers: { 'Content-Type': 'application/json', ...headers }, body: initialize });
    assert.equal(r.status, 401);
    assert.equal(r.headers['www-authenticate'], 'Bearer');
  }
  assert.equal((await upgrade('/mcp')).status, 401);
  assert.equal((await upgrade('/mcp?access_token=wrong')).status, 401);
  assert.equal((await upgrade('/mcp', { headers: { Authorization: 'Bearer wrong' } })).status, 401);
  const ok = await upgrade('/mcp', { headers: { Authorization: `Bearer ${daemon.key}` } });
  assert.equal(ok.status, 'open');
  assert.equal(ok.ws.protocol, 'mcp', 'the subprotocol is echoed');
  ok.ws.close();
  await stillServes();
});

test('the key never reaches the log, not even from a URL', async () => {
  await upgrade(`/mcp?access_token=${daemon.key}`).then((r) => r.ws?.close());
  await request('POST', '/mcp', { headers: auth(), body: initialize });
  assert.equal(daemon.log.includes(daemon.key), false);
});

test('a foreign Origin gets 403; this server\'s own is fine', async () => {
  const evil = await request('POST', '/mcp', { headers: { ...auth(), Origin: 'http://evil.example' }, body: initialize });
  assert.equal(evil.status, 403);
  assert.equal((await upgrade(`/mcp?access_token=${daemon.key}`, { headers: { Origin: 'http://evil.example' } })).status, 403);
  const own = await request('POST', '/mcp', { headers: { ...auth(), Origin: `http://${daemon.listen}` }, body: initialize });
  assert.equal(own.status, 200);
  await stillServes();
});

test('Streamable HTTP: sessions, versions, notifications, methods', async () => {
  const init = await request('POST', '/mcp', { headers: auth(), body: initialize });
  assert.equal(init.status, 200);
  const session = init.headers['mcp-session-id'];
  assert.match(session, /^[0-9a-f]{32}$/);
  assert.equal(JSON.parse(init.body).result.protocolVersion, '2025-11-25');

  const ping = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' });
  const noSession = await request('POST', '/mcp', { headers: auth(), body: ping });
  assert.equal(noSession.status, 400);
  const unknown = await request('POST', '/mcp', { headers: { ...auth(), 'Mcp-Session-Id': 'f'.repeat(32) }, body: ping });
  assert.equal(unknown.status, 404);
  const badVersion = await request('POST', '/mcp', { headers: { ...auth(), 'Mcp-Session-Id': session, 'MCP-Protocol-Version': '1999-01-01' }, body: ping });
  assert.equal(badVersion.status, 400);
  const good = await request('POST', '/mcp', { headers: { ...auth(), 'Mcp-Session-Id': session, 'MCP-Protocol-Version': '2025-06-18' }, body: ping });
  assert.equal(good.status, 200);
  assert.deepEqual(JSON.parse(good.body), { jsonrpc: '2.0', id: 2, result: {} });

  const note = await request('POST', '/mcp', { headers: { ...auth(), 'Mcp-Session-Id': session }, body: '{"jsonrpc":"2.0","method":"notifications/initialized"}' });
  assert.equal(note.status, 202);
  assert.equal(note.body, '');

  const sse = await request('POST', '/mcp', { headers: { ...auth(), Accept: 'text/event-stream', 'Mcp-Session-Id': session }, body: ping });
  assert.equal(sse.status, 200);
  assert.match(sse.headers['content-type'], /^text\/event-stream/);
  assert.match(sse.body, /^event: message\ndata: \{"jsonrpc":"2.0","id":2,"result":\{\}\}\n\n$/);

  assert.equal((await request('GET', '/mcp', { headers: auth() })).status, 405);
  assert.equal((await request('PUT', '/mcp', { headers: auth(), body: '{}' })).status, 405);
  assert.equal((await request('GET', '/nowhere')).status, 404);
  assert.equal((await request('DELETE', '/mcp', { headers: { ...auth(), 'Mcp-Session-Id': session } })).status, 200);
  assert.equal((await request('POST', '/mcp', { headers: { ...auth(), 'Mcp-Session-Id': session }, body: ping })).status, 404);
});

test('malformed JSON gets a JSON-RPC parse error on both transports', async () => {
  const r = await request('POST', '/mcp', { headers: auth(), body: '{"jsonrpc": "2.0", "id": 1, "method": ' });
  assert.equal(r.status, 400);
  assert.equal(JSON.parse(r.body).error.code, -32700);
  const { ws } = await upgrade(`/mcp?access_token=${daemon.key}`);
  const reply = new Promise((resolve) => ws.once('message', (d) => resolve(JSON.parse(d))));
  ws.send('this is not json');
  assert.equal((await reply).error.code, -32700);
  ws.close();
  await stillServes();
});

test('oversize bodies get 413 and oversize WebSocket messages close 1009', async () => {
  const big = 'x'.repeat(5 * 1024 * 1024);
  const r = await request('POST', '/mcp', { headers: auth(), body: big });
  assert.equal(r.status, 413);
  const { ws } = await upgrade(`/mcp?access_token=${daemon.key}`);
  const closed = new Promise((resolve) => ws.on('close', (code) => resolve(code)));
  ws.send(big);
  assert.equal(await closed, 1009);
  await stillServes();
});

test('the 4 MiB limit is exact: a message of the limit is served, one byte more is refused', async () => {
  const LIMIT = 4 * 1024 * 1024;
  // An initialize request padded in clientInfo to exactly size bytes.
  const padded = (size) => {
    const bare = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1', pad: '' } } });
    return bare.replace('"pad":""', `"pad":"${'p'.repeat(size - bare.length)}"`);
  };
  assert.equal(padded(LIMIT).length, LIMIT);
  const exact = await request('POST', '/mcp', { headers: auth(), body: padded(LIMIT) });
  assert.equal(exact.status, 200);
  assert.equal(JSON.parse(exact.body).result.protocolVersion, '2025-11-25');
  const over = await request('POST', '/mcp', { headers: auth(), body: padded(LIMIT + 1) });
  assert.equal(over.status, 413);

  const { ws } = await upgrade(`/mcp?access_token=${daemon.key}`);
  const reply = new Promise((resolve) => ws.once('message', (d) => resolve(JSON.parse(d))));
  ws.send(padded(LIMIT));
  assert.equal((await reply).result.protocolVersion, '2025-11-25');
  const closed = new Promise((resolve) => ws.on('close', (code) => resolve(code)));
  ws.send(padded(LIMIT + 1));
  assert.equal(await closed, 1009);
  await stillServes();
});

test('clients that disconnect mid-call leave no stuck worker and no descriptor', async () => {
  const setup = await httpClient(daemon);
  const s = JSON.parse(textOf(await setup.call('create_session', { template: 'bare', size: '320x240' })));
  // A start leaves the next session's spare disk and root being made
  // behind it: the baseline is the count once that is done, when it has
  // held for a second.
  let baseline = daemon.fdCount(), since = Date.now();
  await waitFor(() => {
    const now = daemon.fdCount();
    if (now !== baseline) [baseline, since] = [now, Date.now()];
    return Date.now() - since >= 1000;
  }, { timeout: 15000, interval: 100 });
  // More disconnected waits than there are workers: none may stay stuck.
  for (let i = 0; i < 12; i++) {
    const { ws } = await upgrade(`/mcp?access_token=${daemon.key}`);
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }));
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'wait', arguments: { session: s.session, ms: 1500 } } }));
    await sleep(20);
    ws.terminate();
  }
  const shot = await setup.call('screenshot', { session: s.session });
  assert.equal(shot.isError, false, 'a screenshot is served while the abandoned waits run');
  assert.ok(await waitFor(() => daemon.fdCount() <= baseline, { timeout: 10000 }), `descriptors ${baseline} -> ${daemon.fdCount()}`);
  await setup.call('kill_session', { session: s.session });
  await setup.close();
  await stillServes();
});

test('WebSocket clients may also send the key in the Authorization header', async () => {
  const client = await wsClient(daemon);
  assert.equal((await client.call('list_sessions')).isError, false);
  await client.close();
});

test('the daemon listens on a UNIX socket too, and call reaches it there', async () => {
  const dir = tempDir('lizard-unix-');
  const unixDaemon = await startDaemon({ listen: `${dir}/bridge.sock` });
  try {
    const run = spawnSync(bridgeBin, ['call', '--url', `unix:${dir}/bridge.sock`, 'list_sessions'], {
      env: bridgeEnv({ LIZARD_API_KEY: unixDaemon.key }),
    });
    assert.equal(run.status, 0, run.stderr.toString());
    assert.deepEqual(JSON.parse(run.stdout.toString()), { sessions: [] });
  } finally {
    await unixDaemon.stop();
  }
});

// The kernel's own table of listening sockets for a port: [address, family].
function listenersOn(port) {
  const found = [];
  for (const [file, family] of [['/proc/net/tcp', 4], ['/proc/net/tcp6', 6]]) {
    for (const line of fs.readFileSync(file, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 4 || fields[3] !== '0A') continue; // 0A: LISTEN
      const [address, hexPort] = fields[1].split(':');
      if (parseInt(hexPort, 16) === port) found.push([address, family]);
    }
  }
  return found;
}

// libwebsockets 4.1 with IPv6 binds an IPv4 iface to every address; the
// daemon must be bound to what --listen says and nothing else.
test('--listen 127.0.0.1 and [::1] bind loopback only; a name is refused', async () => {
  const v4 = await startDaemon();
  try {
    const port = Number(v4.listen.split(':').pop());
    assert.deepEqual(listenersOn(port), [['0100007F', 4]]);
  } finally {
    await v4.stop();
  }
  const probe = await startDaemon();
  const port = Number(probe.listen.split(':').pop());
  await probe.stop();
  const v6 = await startDaemon({ listen: `[::1]:${port}` });
  try {
    assert.deepEqual(listenersOn(port), [['00000000000000000000000001000000', 6]]);
  } finally {
    await v6.stop();
  }
  const named = spawnSync(bridgeBin, ['serve', '--listen', `localhost.example:${port}`], {
    env: bridgeEnv({ LIZARD_API_KEY: 'k'.repeat(32) }), encoding: 'utf8', timeout: 10000,
  });
  assert.equal(named.status, 1);
  assert.match(named.stderr, /give an IPv4 or IPv6 address/);
  assert.deepEqual(listenersOn(port), []);
});
