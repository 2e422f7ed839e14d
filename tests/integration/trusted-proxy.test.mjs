// SPDX-License-Identifier: MIT
// The per-address connection cap behind a reverse proxy (--trusted-proxy):
// a real HTTP reverse proxy of the test's own (node's http, as a few lines
// of http-proxy would do it) sits between many clients and the daemon and
// appends each client's address to X-Forwarded-For. Clients come from
// addresses of their own in 127.0.1.0/24; the proxy reaches the daemon from
// 127.0.0.2; other peers come from 127.0.0.9. Loopback only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { waitFor } from '../lib/process.mjs';
import { startDaemon } from '../lib/bridge.mjs';

const PROXY = '127.0.0.2';
const clientAddress = (i) => `127.0.1.${i}`;

// Headers a proxy does not pass on (RFC 9110 section 7.6.1).
const hopByHop = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

// A reverse proxy to daemon: each request on a connection of its own to
// the daemon (from PROXY), X-Forwarded-For extended by the client's
// address, the request body streamed through as it comes. upstream counts
// the connections it opened; 502 when the daemon closed one.
async function startReverseProxy(daemon) {
  const target = new URL(daemon.url);
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity, localAddress: PROXY });
  const upstream = { opened: 0 };
  const server = http.createServer((req, res) => {
    const headers = {};
    for (const [name, value] of Object.entries(req.headers)) if (!hopByHop.has(name)) headers[name] = value;
    headers['x-forwarded-for'] = [req.headers['x-forwarded-for'], req.socket.remoteAddress].filter(Boolean).join(', ');
    const out = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers, agent });
    out.on('socket', (socket) => socket.once('connect', () => upstream.opened++));
    out.on('response', (answer) => {
      const passed = {};
      for (const [name, value] of Object.entries(answer.headers)) if (!hopByHop.has(name)) passed[name] = value;
      res.writeHead(answer.statusCode, passed);
      answer.pipe(res);
    });
    out.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end('the daemon closed the connection');
    });
    out.flushHeaders(); // the head goes on before the body has come
    req.pipe(out);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    upstream,
    close: () => {
      server.closeAllConnections();
      agent.destroy();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

// A request to url from a client address whose body is held back until
// release() (the head goes at once). answer resolves with the status and
// body, or { status: 'error' } when the connection failed.
function heldRequest(url, localAddress, { method = 'POST', path = '/mcp', headers = {}, body = '' } = {}) {
  const { hostname, port } = new URL(url);
  const req = http.request({
    host: hostname, port, method, path, localAddress, agent: false,
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'content-length': Buffer.byteLength(body), ...headers },
  });
  const answer = new Promise((resolve) => {
    req.on('response', (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode, body: text, headers: res.headers }));
      res.on('error', () => resolve({ status: 'error', body: text }));
    });
    req.on('error', (e) => resolve({ status: 'error', body: e.message }));
  });
  req.setTimeout(20000, () => req.destroy(new Error('no answer in 20 s')));
  req.flushHeaders();
  let released = false;
  const release = () => {
    if (!released) req.end(body);
    released = true;
  };
  return { answer, release };
}

const initialize = (name) => JSON.stringify({
  jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name, version: '1' } },
});

// An MCP initialize through the proxy from client i, held until released.
const heldInitialize = (proxy, daemon, i, extraHeaders = {}) => heldRequest(proxy.url, clientAddress(i), {
  headers: { authorization: `Bearer ${daemon.key}`, ...extraHeaders }, body: initialize(`client-${i}`),
});

// A plain GET through the proxy from client i.
const getVia = (proxy, i, path = '/healthz', headers = {}) => {
  const r = heldRequest(proxy.url, clientAddress(i), { method: 'GET', path, headers });
  r.release();
  return r.answer;
};

const isInitialized = (a) => a.status === 200 && /"serverInfo"/.test(a.body) && Boolean(a.headers['mcp-session-id']);

// Seventy clients at once, each with a request in progress: every one of
// them holds a connection from the proxy to the daemon at the same time.
async function seventyAtOnce(args, expectOpen) {
  const daemon = await startDaemon({ args });
  const proxy = await startReverseProxy(daemon);
  try {
    const baseline = daemon.fdCount();
    const held = [];
    for (let i = 1; i <= 70; i++) held.push(heldInitialize(proxy, daemon, i));
    assert.ok(await waitFor(() => proxy.upstream.opened === 70, { timeout: 10000 }), `${proxy.upstream.opened} of 70 proxy connections opened`);
    // The daemon has taken all it will before any body is sent.
    let peak = 0;
    await waitFor(() => (peak = Math.max(peak, daemon.fdCount() - baseline)) >= expectOpen, { timeout: 5000 });
    for (const h of held) h.release();
    const answers = await Promise.all(held.map((h) => h.answer));
    return { answers, peak, log: daemon.log };
  } finally {
    await proxy.close();
    await daemon.stop();
  }
}

test('70 clients through a reverse proxy: one peer capped at 64 without --trusted-proxy, all served with it', async () => {
  // Without: the daemon sees one peer, the proxy, and takes 64 of its connections.
  const plain = await seventyAtOnce([], 64);
  const served = plain.answers.filter(isInitialized).length;
  assert.equal(served, 64, `served ${served}: ${JSON.stringify(plain.answers.filter((a) => !isInitialized(a)).slice(0, 3))}`);
  assert.equal(plain.answers.filter((a) => a.status === 502).length, 6);
  assert.equal(plain.peak, 64, 'connections the daemon held at once');
  assert.match(plain.log, /refused \d+ connection/);

  // With: each client is counted by the address the proxy forwards.
  const trusted = await seventyAtOnce(['--trusted-proxy', PROXY], 70);
  const failed = trusted.answers.filter((a) => !isInitialized(a));
  assert.deepEqual(failed, [], `${failed.length} of 70 not served`);
  assert.ok(trusted.peak >= 70, `the daemon held ${trusted.peak} connections at once, not 70`);
  assert.doesNotMatch(trusted.log, /refused \d+ connection/);
});

// A raw HTTP/1.1 connection from localAddress: send() writes a request and
// resolves with the next response (status line and Content-Length body),
// or 'closed' when the daemon closes the connection first.
async function rawConnection(daemon, localAddress) {
  const { hostname, port } = new URL(daemon.url);
  const socket = net.connect({ host: hostname, port: Number(port), localAddress });
  socket.on('error', () => {});
  let buffered = '';
  let waiter = null;
  const settle = () => {
    if (!waiter) return;
    const end = buffered.indexOf('\r\n\r\n');
    if (end >= 0) {
      const head = buffered.slice(0, end);
      const length = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (buffered.length >= end + 4 + length) {
        const response = { status: Number(/^HTTP\/1\.[01] (\d+)/.exec(head)?.[1]), body: buffered.slice(end + 4, end + 4 + length) };
        buffered = buffered.slice(end + 4 + length);
        const w = waiter;
        waiter = null;
        return w(response);
      }
    }
    if (socket.destroyed || socket.readyState === 'closed') {
      const w = waiter;
      waiter = null;
      w('closed');
    }
  };
  socket.on('data', (d) => {
    buffered += d;
    settle();
  });
  socket.on('close', settle);
  const gone = new Promise((resolve) => socket.on('close', resolve));
  await new Promise((resolve) => {
    socket.once('connect', resolve);
    socket.once('close', resolve);
  });
  return {
    socket,
    gone,
    send(text) {
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          waiter = null;
          resolve('no answer');
        }, 5000);
        waiter = (r) => {
          clearTimeout(timer);
          resolve(r);
        };
        socket.write(text);
        settle();
      });
    },
  };
}

// Runs body with a daemon started with args and connect(localAddress),
// which opens raw connections that are closed when body ends.
async function withDaemon(args, body) {
  const daemon = await startDaemon({ args });
  const connections = [];
  const connect = async (localAddress) => {
    const c = await rawConnection(daemon, localAddress);
    connections.push(c);
    return c;
  };
  try {
    await body(daemon, connect);
  } finally {
    for (const c of connections) c.socket.destroy();
    await daemon.stop();
  }
}

const healthzFor = (forwardedFor) =>
  `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n${forwardedFor === undefined ? '' : `X-Forwarded-For: ${forwardedFor}\r\n`}\r\n`;

test('a peer that is not the trusted proxy is capped by its own address, whatever X-Forwarded-For it sends', () =>
  withDaemon(['--trusted-proxy', PROXY, '--max-peer-connections', '8'], async (daemon, connect) => {
    // Eight kept-alive connections, each having claimed another client.
    for (let i = 0; i < 8; i++) {
      const c = await connect('127.0.0.9');
      assert.deepEqual(await c.send(healthzFor(`198.51.100.${i + 1}`)), { status: 200, body: '{"status":"ok"}\n' });
    }
    // Its ninth and later are closed unanswered: the header changed nothing.
    for (let i = 0; i < 5; i++) {
      const c = await connect('127.0.0.9');
      assert.equal(await c.send(healthzFor(`203.0.113.${i + 1}`)), 'closed');
    }
    // Another address is served meanwhile.
    assert.equal((await (await connect('127.0.0.10')).send(healthzFor('198.51.100.1'))).status, 200);
  }));

test('behind a trusted proxy, a client over its cap gets 429 while another client is served', async () => {
  const daemon = await startDaemon({ args: ['--trusted-proxy', PROXY, '--max-peer-connections', '8'] });
  const proxy = await startReverseProxy(daemon);
  const held = [];
  try {
    // Client 5 holds eight requests, each with an X-Forwarded-For of its
    // own making in front of what the proxy appends.
    for (let i = 0; i < 8; i++) held.push(heldInitialize(proxy, daemon, 5, { 'x-forwarded-for': `203.0.113.${i + 1}` }));
    assert.ok(await waitFor(() => proxy.upstream.opened === 8), `${proxy.upstream.opened} of 8 proxy connections opened`);
    // Its ninth, forged header or not, is refused with a reason.
    const ninth = await waitFor(async () => {
      const a = await getVia(proxy, 5, '/healthz', { 'x-forwarded-for': '203.0.113.99' });
      return a.status === 429 ? a : null;
    }, { timeout: 5000, interval: 100 });
    assert.ok(ninth, 'client 5 over its cap was served');
    assert.match(ninth.body, /too many connections from your address/);
    // Client 6, through the same proxy, is served: a GET and an MCP session.
    const healthz = await getVia(proxy, 6);
    assert.deepEqual([healthz.status, healthz.body], [200, '{"status":"ok"}\n']);
    const six = heldInitialize(proxy, daemon, 6);
    six.release();
    assert.ok(isInitialized(await six.answer), 'client 6 got its MCP session');
    // Once client 5's requests are answered, it is served again.
    for (const h of held) h.release();
    for (const h of held) assert.ok(isInitialized(await h.answer));
    assert.equal((await getVia(proxy, 5)).status, 200);
    assert.equal(daemon.log.split('\n').filter((l) => /refused \d+ connection/.test(l)).length, 1, 'the refusal is logged once');
  } finally {
    for (const h of held) h.release();
    await proxy.close();
    await daemon.stop();
  }
});

test('a trusted proxy still counts toward --max-connections', async () => {
  const daemon = await startDaemon({ args: ['--trusted-proxy', PROXY, '--max-connections', '20'] });
  const proxy = await startReverseProxy(daemon);
  try {
    const held = [];
    for (let i = 1; i <= 30; i++) held.push(heldInitialize(proxy, daemon, i));
    assert.ok(await waitFor(() => proxy.upstream.opened === 30), `${proxy.upstream.opened} of 30 proxy connections opened`);
    // The refused see their close before any body is sent.
    const refusedEarly = await waitFor(async () => {
      const settled = await Promise.all(held.map((h) => Promise.race([h.answer, new Promise((r) => setTimeout(() => r(null), 10))])));
      return settled.filter((a) => a?.status === 502).length >= 10;
    }, { timeout: 5000 });
    assert.ok(refusedEarly, 'ten connections over the total cap were refused');
    for (const h of held) h.release();
    const answers = await Promise.all(held.map((h) => h.answer));
    assert.equal(answers.filter(isInitialized).length, 20);
    assert.equal(answers.filter((a) => a.status === 502).length, 10);
  } finally {
    await proxy.close();
    await daemon.stop();
  }
});

test('from the trusted proxy, an X-Forwarded-For without a client address at its end gets 400', () =>
  withDaemon(['--trusted-proxy', PROXY], async (daemon, connect) => {
    const ask = async (forwardedFor) => (await connect(PROXY)).send(healthzFor(forwardedFor));
    for (const bad of ['unknown', '198.51.100.7:4711', '[2001:db8::7]', ' , ', `${'198.51.100.1, '.repeat(80)}198.51.100.2`]) {
      const r = await ask(bad);
      assert.equal(r.status, 400, `X-Forwarded-For: ${bad.slice(0, 40)} got ${JSON.stringify(r)}`);
      assert.match(r.body, /X-Forwarded-For/);
    }
    // Garbage left of the client's entry is the client's own writing: not read.
    assert.equal((await ask('not an address, 198.51.100.7')).status, 200);
    assert.equal((await ask('2001:db8::7')).status, 200);
    // Without the header it is the proxy's own request.
    assert.equal((await ask(undefined)).status, 200);
  }));

// Hand-written here, unlike the proxy above, so that the test decides which
// request travels on which of the proxy's kept-alive connections.
test('a kept-alive proxy connection counts for the client of its current request only', () =>
  withDaemon(['--trusted-proxy', PROXY, '--max-peer-connections', '1'], async (daemon, connect) => {
    const shared = await connect(PROXY);
    // Three clients, one after another, on one connection.
    for (const client of ['198.51.100.1', '198.51.100.2', '198.51.100.1']) {
      assert.equal((await shared.send(healthzFor(client))).status, 200, client);
    }
    // 198.51.100.1's last request is answered: the kept-alive connection no
    // longer counts for it, so its request on another connection may run,
    // and while that one is in progress, its next on the shared connection
    // is over the cap of 1. The two requests race in the daemon: when it
    // reads the shared one first, the other is the one refused, and the
    // round is tried again on a new connection.
    let refused = null;
    for (let round = 0; round < 5 && !refused; round++) {
      const other = await connect(PROXY);
      // Served once first, so that it is the daemon's HTTP connection and
      // not the port proxy's front door: its POST then takes the shared
      // one's path.
      assert.equal((await other.send(healthzFor('198.51.100.9'))).status, 200);
      let answered = '';
      other.socket.on('data', (d) => (answered += d));
      other.socket.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-For: 198.51.100.1\r\nContent-Length: 10\r\n\r\n{');
      refused = await waitFor(async () => {
        if (answered) return 'lost';
        const r = await shared.send(healthzFor('198.51.100.1'));
        return r.status === 429 ? r : null;
      }, { timeout: 15000, interval: 100 });
      if (refused === 'lost') {
        // The shared request came first: then the other one is refused.
        assert.match(answered, /^HTTP\/1\.1 429 /, answered);
        refused = null;
      }
    }
    assert.ok(refused, 'a second request of 198.51.100.1 at the same time was served');
    // A refusal closes the connection (a body trickled after it would hold
    // it); another client is served on the proxy's next one.
    await shared.gone;
    assert.equal((await (await connect(PROXY)).send(healthzFor('198.51.100.2'))).status, 200);
  }));

test('a WebSocket through the trusted proxy counts for its client for as long as it is open', () =>
  withDaemon(['--trusted-proxy', PROXY, '--max-peer-connections', '2'], async (daemon, connect) => {
    const upgrade = (client) => `GET /mcp?access_token=${daemon.key} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-For: ${client}\r\n` +
      'Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n' +
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: mcp\r\n\r\n';
    const opened = [];
    const open = async (client) => {
      const c = await connect(PROXY);
      opened.push(c);
      return c.send(upgrade(client));
    };
    assert.equal((await open('198.51.100.1')).status, 101);
    assert.equal((await open('198.51.100.1')).status, 101);
    const third = await open('198.51.100.1');
    assert.equal(third.status, 429);
    assert.match(third.body, /too many connections from your address/);
    assert.equal((await open('198.51.100.2')).status, 101);
    // Closing one lets the client open another.
    opened[0].socket.destroy();
    await opened[0].gone;
    assert.ok(await waitFor(async () => (await open('198.51.100.1')).status === 101, { timeout: 3000, interval: 100 }));
  }));
