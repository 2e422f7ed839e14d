// SPDX-License-Identifier: MIT
// expose_port end to end: services on a session's own 127.0.0.1 (Python's
// http.server, a test server that says what reached it, a WebSocket echo
// server) reached through the daemon's port proxy, from curl-like clients
// and from headless Chromium, with the access token, its cookie and every
// refusal. Everything talks to loopback only.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import WebSocket from 'ws';
import { spawnSync } from 'node:child_process';
import { bridgeBin, bridgeEnv, startDaemon } from '../lib/bridge.mjs';
import { launchChromium } from '../lib/browser.mjs';
import { httpClient, textOf } from '../lib/mcp.mjs';
import { sleep, waitFor } from '../lib/process.mjs';
import { expose, portRequest, sessionServing, waitForService } from '../lib/ports.mjs';
import { stopInit } from '../lib/sandbox.mjs';

const PAGE = 8000; // python3 -m http.server over /tmp/site
const ECHO = 8001; // echo_server.py
const WS = 8765; // ws_echo.py

let daemon, client, session, page, echo, ws, token;
const daemonPort = () => Number(daemon.listen.split(':')[1]);

before(async () => {
  // 200 connections opened at once from one address: each counts for it
  // until its first request is authorized (the default cap is 64).
  daemon = await startDaemon({ args: ['--max-peer-connections', '256'] });
  client = await httpClient(daemon);
  let exposed;
  ({ session, exposed } = await sessionServing(client, {
    [PAGE]: `cd /tmp/site && exec python3 -m http.server ${PAGE} --bind 127.0.0.1`,
    [ECHO]: `exec python3 /tmp/site/echo_server.py ${ECHO}`,
    [WS]: `exec python3 /tmp/site/ws_echo.py ${WS}`,
  }, { timeoutMs: 900000 }));
  [page, echo, ws] = [exposed[PAGE], exposed[ECHO], exposed[WS]];
  token = page.token;
  await waitForService(daemon, page.host, token);
  await waitForService(daemon, echo.host, token, '/headers');
  await waitFor(async () => (await portRequest(daemon, { host: ws.host, headers: { 'X-Lizard-Access-Token': token } })).status === 426, { timeout: 20000, interval: 200 });
});

after(async () => {
  await client?.call('kill_session', { session }).catch(() => {});
  await client?.close();
  await daemon?.stop();
});

const withToken = (headers = {}) => ({ 'X-Lizard-Access-Token': token, ...headers });

// A WebSocket through the proxy; resolves 'open' with the socket, or the
// status of a refused upgrade.
function openSocket(host, { headers = {}, query = '' } = {}) {
  return new Promise((resolve) => {
    const socket = new WebSocket(`ws://127.0.0.1:${daemonPort()}/${query}`, { headers: { Host: host, ...headers } });
    socket.on('unexpected-response', (req, res) => resolve({ status: res.statusCode }));
    socket.on('open', () => resolve({ status: 'open', socket }));
    socket.on('error', (e) => resolve({ status: 'error', error: e }));
  });
}

function roundTrip(socket, text) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no echo within 10 s')), 10000);
    socket.once('message', (data) => {
      clearTimeout(timer);
      resolve(String(data));
    });
    socket.send(text);
  });
}

test('expose_port gives host, url, token and header; get_host the host; session_info the token and the ports', async () => {
  assert.equal(page.host, `${PAGE}-${session}.localhost:${daemonPort()}`);
  assert.equal(page.url, `http://${page.host}/?lizard_access_token=${token}`);
  assert.equal(page.header, 'X-Lizard-Access-Token');
  const host = (await client.call('get_host', { session, port: PAGE })).structuredContent;
  assert.equal(host.host, page.host);
  const info = (await client.call('session_info', { session })).structuredContent;
  assert.equal(info.access_token, token);
  assert.deepEqual([...info.exposed_ports].sort(), [PAGE, ECHO, WS].sort());
  const bad = await client.call('expose_port', { session, port: 70000 });
  assert.equal(bad.isError, true);
});

test('lizard-bridge call expose_port prints the URL on its first line', () => {
  const run = spawnSync(bridgeBin, ['call', 'expose_port', `session=${session}`, `port=${PAGE}`], {
    env: bridgeEnv({ LIZARD_API_URL: daemon.url, LIZARD_API_KEY: daemon.key }),
    encoding: 'utf8',
    timeout: 30000,
  });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout.split('\n')[0], page.url);
});

test('Chromium opens the url: the page with its subresources, a fetch, a WebSocket round trip, and a reload by cookie', async (t) => {
  const browser = await launchChromium();
  t.after(() => browser.close());
  const tab = await browser.newPage();
  const response = await tab.goto(page.url);
  assert.equal(response.status(), 200);
  assert.equal(tab.url(), `http://${page.host}/`, 'the token is gone from the address bar');
  await tab.waitForFunction(() => window.appLoaded === true, null, { timeout: 10000 });
  const color = await tab.evaluate(() => getComputedStyle(document.getElementById('status')).color);
  assert.equal(color, 'rgb(1, 2, 3)');
  const fetched = await tab.evaluate(async () => {
    const r = await fetch('/app.js');
    return { status: r.status, text: await r.text() };
  });
  assert.equal(fetched.status, 200);
  assert.match(fetched.text, /appLoaded/);
  // A WebSocket to another exposed port of the same session, from this page.
  const echoed = await tab.evaluate(
    ({ host, token: t }) =>
      new Promise((resolve, reject) => {
        const socket = new WebSocket(`ws://${host}/?lizard_access_token=${t}`);
        socket.onopen = () => socket.send('hello through the proxy');
        socket.onmessage = (e) => resolve(e.data);
        socket.onerror = () => reject(new Error('WebSocket failed'));
        setTimeout(() => reject(new Error('no echo within 10 s')), 10000);
      }),
    { host: ws.host, token },
  );
  assert.equal(echoed, 'hello through the proxy');
  // Without the token in the URL: the cookie carries it.
  const again = await tab.goto(`http://${page.host}/index.html`);
  assert.equal(again.status(), 200);
  assert.equal(await tab.title(), 'port test page');
});

test('a page from the sandbox cannot reach the daemon\'s /mcp on its host name, nor read the cookie', async (t) => {
  const browser = await launchChromium();
  t.after(() => browser.close());
  const tab = await browser.newPage();
  await tab.goto(page.url);
  const seen = await tab.evaluate(async () => {
    const r = await fetch('/mcp', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' });
    return { status: r.status, server: r.headers.get('server'), body: await r.text(), cookie: document.cookie };
  });
  assert.notEqual(seen.status, 200);
  assert.match(seen.server, /SimpleHTTP/, 'the sandbox\'s own server answered');
  assert.doesNotMatch(seen.body, /jsonrpc|tools/);
  assert.equal(seen.cookie, '', 'the cookie is HttpOnly');
  const cookies = await tab.context().cookies();
  const ours = cookies.find((c) => c.name === 'lizard_access_token');
  assert.ok(ours.httpOnly);
  assert.equal(ours.domain, `${PAGE}-${session}.localhost`, 'host-only');
});

test('the header works; no token and a wrong token get 401, HTML for browsers and JSON otherwise', async () => {
  const ok = await portRequest(daemon, { host: page.host, path: '/app.js', headers: withToken() });
  assert.equal(ok.status, 200);
  assert.match(String(ok.body), /appLoaded/);
  const none = await portRequest(daemon, { host: page.host });
  assert.equal(none.status, 401);
  assert.match(none.headers['content-type'], /json/);
  assert.match(JSON.parse(none.body).error, /access token/);
  const html = await portRequest(daemon, { host: page.host, headers: { Accept: 'text/html' } });
  assert.equal(html.status, 401);
  assert.match(html.headers['content-type'], /text\/html/);
  const wrong = await portRequest(daemon, { host: page.host, headers: { 'X-Lizard-Access-Token': token.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')) } });
  assert.equal(wrong.status, 401);
  const wrongCookie = await portRequest(daemon, { host: page.host, headers: { Cookie: 'lizard_access_token=nope' } });
  assert.equal(wrongCookie.status, 401);
});

test('clients that cannot resolve the name send X-Lizard-Session and X-Lizard-Port', async () => {
  const r = await portRequest(daemon, { host: `127.0.0.1:${daemonPort()}`, path: '/headers', headers: withToken({ 'X-Lizard-Session': session, 'X-Lizard-Port': String(ECHO) }) });
  assert.equal(r.status, 200);
  assert.equal(JSON.parse(r.body).path, '/headers');
});

test('a wrong session 404, a port not exposed 404, nothing listening 502, a paused session 503', async () => {
  const missing = await portRequest(daemon, { host: `${PAGE}-s-00000000.localhost:${daemonPort()}`, headers: withToken() });
  assert.equal(missing.status, 404);
  assert.match(JSON.parse(missing.body).error, /no session s-00000000/);
  const unexposed = await portRequest(daemon, { host: `9999-${session}.localhost:${daemonPort()}`, headers: withToken() });
  assert.equal(unexposed.status, 404);
  assert.match(JSON.parse(unexposed.body).error, /not exposed/);
  const closed = await expose(client, session, 9);
  const refused = await portRequest(daemon, { host: closed.host, headers: withToken() });
  assert.equal(refused.status, 502);
  assert.equal(JSON.parse(refused.body).error, 'the sandbox is running, but nothing listens on port 9');
  const paused = await client.call('pause_session', { session });
  assert.equal(paused.isError, false, textOf(paused));
  try {
    const r = await portRequest(daemon, { host: page.host, headers: withToken() });
    assert.equal(r.status, 503);
    assert.match(JSON.parse(r.body).error, /paused/);
  } finally {
    await client.call('resume_session', { session });
  }
  assert.equal((await portRequest(daemon, { host: page.host, headers: withToken() })).status, 200);
});

// The port proxy is one thread for every session's connections. Each
// connection asks the session's init to dial, and the init's queue holds
// what its socket's buffer holds (about 170 requests here): with the init
// stopped (root inside may, with ptrace), the connections past that wait
// for room without the proxy waiting, and fail at the dial's deadline;
// every other session's ports serve meanwhile.
test('a session whose root stopped its init fails its connections at the deadline; other sessions still serve', async () => {
  const made = await client.call('create_session', { template: 'base' });
  assert.equal(made.isError, false, textOf(made));
  const stuck = made.structuredContent.session;
  try {
    const target = await expose(client, stuck, 8000);
    assert.ok(await stopInit(client, stuck), 'the init was not stopped');
    const headers = { 'X-Lizard-Access-Token': target.token };
    const answers = Array.from({ length: 240 }, () =>
      portRequest(daemon, { host: target.host, headers, timeout: 60000 }).catch((e) => ({ status: 0, body: Buffer.from(String(e)) })));
    // While they wait, another session's service answers.
    await sleep(1000);
    assert.equal((await portRequest(daemon, { host: page.host, headers: withToken() })).status, 200);
    // Each gets its answer at the dial's deadline: queued (504), or still
    // waiting for room in the queue (503).
    const all = await Promise.all(answers);
    assert.deepEqual(all.filter((r) => r.status !== 503 && r.status !== 504).map((r) => `${r.status} ${r.body}`), []);
    assert.ok(all.some((r) => r.status === 504), 'none was queued');
    const full = all.find((r) => r.status === 503);
    assert.ok(full, 'the queue never filled');
    assert.match(JSON.parse(full.body).error, /the sandbox's init took no request in time/);
  } finally {
    await client.call('kill_session', { session: stuck });
  }
  assert.equal((await portRequest(daemon, { host: page.host, headers: withToken() })).status, 200);
});

test('the token and the cookie never reach the sandbox; X-Forwarded-For, -Host, -Proto are set and Host passed on', async () => {
  const r = await portRequest(daemon, {
    host: echo.host,
    path: `/headers?a=1&lizard_access_token=${token}&b=2`,
    headers: withToken({ Cookie: `theirs=1; lizard_access_token=${token}; other=2`, 'X-Forwarded-For': '6.6.6.6' }),
  });
  assert.equal(r.status, 200);
  const seen = JSON.parse(r.body);
  const headers = Object.fromEntries(seen.headers.map(([k, v]) => [k.toLowerCase(), v]));
  assert.equal(seen.path, '/headers?a=1&b=2');
  assert.equal(headers.host, echo.host);
  assert.equal(headers.cookie, 'theirs=1; other=2');
  assert.equal(headers['x-forwarded-for'], '127.0.0.1');
  assert.equal(headers['x-forwarded-host'], echo.host);
  assert.equal(headers['x-forwarded-proto'], 'http');
  assert.equal(headers['x-lizard-access-token'], undefined);
  assert.ok(!String(r.body).includes(token), 'the token appears nowhere in what the service saw');
});

test('the token in the URL redirects to the same URL without it, setting an HttpOnly host-only cookie', async () => {
  const r = await portRequest(daemon, { host: page.host, path: `/index.html?x=1&lizard_access_token=${token}` });
  assert.equal(r.status, 303);
  assert.equal(r.headers.location, '/index.html?x=1');
  const cookie = r.headers['set-cookie'][0];
  assert.match(cookie, new RegExp(`^lizard_access_token=${token};`));
  assert.match(cookie, /HttpOnly/);
  assert.doesNotMatch(cookie, /Domain=/i);
  const byCookie = await portRequest(daemon, { host: page.host, path: '/index.html?x=1', headers: { Cookie: cookie.split(';')[0] } });
  assert.equal(byCookie.status, 200);
});

test('keep-alive, chunked bodies both ways and SSE pass through', async () => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const sockets = new Set();
    for (let i = 0; i < 5; i++) {
      const r = await portRequest(daemon, { host: echo.host, path: '/headers', headers: withToken(), agent });
      assert.equal(r.status, 200);
      for (const s of agent.freeSockets[Object.keys(agent.freeSockets)[0]] || []) sockets.add(s);
    }
    assert.equal(sockets.size, 1, 'one connection served all five');
    const chunkedAnswer = await portRequest(daemon, { host: echo.host, path: '/chunked', headers: withToken(), agent });
    assert.equal(String(chunkedAnswer.body), 'hello chunked world');
    // A chunked upload (no Content-Length), then another request on the same connection.
    const body = crypto.randomBytes(300000);
    const upload = await new Promise((resolve, reject) => {
      const [address, port] = daemon.listen.split(':');
      const req = http.request({ host: address, port: Number(port), method: 'POST', path: '/upload', agent, headers: withToken({ Host: echo.host, 'Transfer-Encoding': 'chunked' }) }, (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve(JSON.parse(text)));
      });
      req.on('error', reject);
      for (let i = 0; i < body.length; i += 70000) req.write(body.subarray(i, i + 70000));
      req.end();
    });
    assert.equal(upload.bytes, body.length);
    assert.equal(upload.sha256, crypto.createHash('sha256').update(body).digest('hex'));
    const after = await portRequest(daemon, { host: echo.host, path: '/headers', headers: withToken(), agent });
    assert.equal(after.status, 200);
    const sse = await portRequest(daemon, { host: echo.host, path: '/sse', headers: withToken() });
    assert.equal(sse.headers['content-type'], 'text/event-stream');
    assert.equal(String(sse.body), 'data: event 0\n\ndata: event 1\n\ndata: event 2\n\n');
  } finally {
    agent.destroy();
  }
});

test('WebSocket upgrades pass through; another site\'s Origin is refused', async () => {
  const opened = await openSocket(ws.host, { headers: withToken() });
  assert.equal(opened.status, 'open');
  assert.equal(await roundTrip(opened.socket, 'ping'), 'ping');
  const big = 'x'.repeat(3 * 1024 * 1024);
  assert.equal((await roundTrip(opened.socket, big)).length, big.length);
  opened.socket.close();
  const evil = await openSocket(ws.host, { headers: withToken({ Origin: 'http://evil.example' }) });
  assert.equal(evil.status, 403);
  const sameSession = await openSocket(ws.host, { headers: withToken({ Origin: `http://${page.host}` }) });
  assert.equal(sameSession.status, 'open');
  sameSession.socket.close();
});

test('200 concurrent keep-alive connections get their answers', async () => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 200 });
  try {
    for (let round = 0; round < 2; round++) {
      const answers = await Promise.all(
        Array.from({ length: 200 }, () => portRequest(daemon, { host: echo.host, path: '/headers', headers: withToken(), agent, timeout: 60000 })),
      );
      assert.equal(answers.filter((a) => a.status === 200).length, 200);
    }
  } finally {
    agent.destroy();
  }
});

// Samples the daemon's RSS while work runs; resolves the largest growth in KiB.
async function rssGrowth(work) {
  const base = daemon.rssKiB();
  let peak = base;
  let running = true;
  const sampler = (async () => {
    while (running) {
      peak = Math.max(peak, daemon.rssKiB());
      await sleep(50);
    }
  })();
  try {
    await work();
  } finally {
    running = false;
    await sampler;
  }
  return Math.max(peak, daemon.rssKiB()) - base;
}

test('a 100 MB download and a 100 MB upload keep the daemon\'s RSS growth under 32 MB', async () => {
  const size = 100 * 1024 * 1024;
  const down = await rssGrowth(async () => {
    const [address, port] = daemon.listen.split(':');
    const got = await new Promise((resolve, reject) => {
      const req = http.get({ host: address, port: Number(port), path: `/download?n=${size}`, headers: withToken({ Host: echo.host }) }, (res) => {
        let n = 0;
        res.on('data', (d) => (n += d.length));
        res.on('end', () => resolve(n));
      });
      req.setTimeout(120000, () => req.destroy(new Error('download stalled')));
      req.on('error', reject);
    });
    assert.equal(got, size);
  });
  assert.ok(down < 32 * 1024, `RSS grew ${down} KiB during the download`);
  const block = crypto.randomBytes(1024 * 1024);
  const up = await rssGrowth(async () => {
    const [address, port] = daemon.listen.split(':');
    const answer = await new Promise((resolve, reject) => {
      const req = http.request({ host: address, port: Number(port), method: 'POST', path: '/upload', headers: withToken({ Host: echo.host, 'Content-Length': size }) }, (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve(JSON.parse(text)));
      });
      req.setTimeout(120000, () => req.destroy(new Error('upload stalled')));
      req.on('error', reject);
      let sent = 0;
      const pump = () => {
        while (sent < size) {
          sent += block.length;
          if (!req.write(block)) return req.once('drain', pump);
        }
        req.end();
      };
      pump();
    });
    assert.equal(answer.bytes, size);
  });
  assert.ok(up < 32 * 1024, `RSS grew ${up} KiB during the upload`);
});

test('a client that stops reading stalls its own connection and grows nothing', async () => {
  const [address, port] = daemon.listen.split(':');
  let received = 0;
  let response;
  const growth = await rssGrowth(async () => {
    await new Promise((resolve, reject) => {
      const req = http.get({ host: address, port: Number(port), path: `/download?n=${500 * 1024 * 1024}`, headers: withToken({ Host: echo.host }) }, (res) => {
        response = res;
        res.on('data', (d) => {
          received += d.length;
          if (received > 1024 * 1024) res.pause();
        });
        resolve();
      });
      req.on('error', reject);
    });
    // The service keeps writing for a while; nothing of it may pile up here.
    await waitFor(() => received > 1024 * 1024, { timeout: 20000 });
    await sleep(3000);
  });
  assert.ok(growth < 32 * 1024, `RSS grew ${growth} KiB while the client did not read`);
  assert.ok(received < 100 * 1024 * 1024);
  response.destroy();
  assert.equal((await portRequest(daemon, { host: echo.host, path: '/headers', headers: withToken() })).status, 200, 'others are served meanwhile');
});

test('unexpose_port closes its connections and refuses new requests', async () => {
  const extra = await expose(client, session, WS);
  const opened = await openSocket(extra.host, { headers: withToken() });
  assert.equal(opened.status, 'open');
  const closed = new Promise((resolve) => opened.socket.on('close', resolve));
  const r = await client.call('unexpose_port', { session, port: WS });
  assert.equal(r.isError, false, textOf(r));
  assert.equal(await Promise.race([closed.then(() => 'closed'), sleep(10000).then(() => 'still open')]), 'closed');
  assert.equal((await portRequest(daemon, { host: extra.host, headers: withToken() })).status, 404);
  await expose(client, session, WS);
});

test('every request on a kept-alive connection needs the token and the same host', async () => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    assert.equal((await portRequest(daemon, { host: echo.host, path: '/headers', headers: withToken(), agent })).status, 200);
    const noToken = await portRequest(daemon, { host: echo.host, path: '/headers', agent });
    assert.equal(noToken.status, 401);
    assert.equal((await portRequest(daemon, { host: echo.host, path: '/headers', headers: withToken(), agent })).status, 200);
    const elsewhere = await portRequest(daemon, { host: page.host, path: '/index.html', headers: withToken(), agent });
    assert.equal(elsewhere.status, 421);
    const daemonOwn = await portRequest(daemon, { host: echo.host, path: '/headers', headers: withToken(), agent });
    assert.equal(daemonOwn.status, 200);
    const mcp = await portRequest(daemon, { host: `127.0.0.1:${daemonPort()}`, method: 'POST', path: '/mcp', headers: { Authorization: `Bearer ${daemon.key}` }, agent });
    assert.equal(mcp.status, 421, 'a kept port connection never reaches /mcp');
  } finally {
    agent.destroy();
  }
});

test('works in a session with network: false', async () => {
  const { session: offline, exposed: { [ECHO]: exposed } } = await sessionServing(client, {
    [ECHO]: `exec python3 /tmp/site/echo_server.py ${ECHO}`,
  }, { network: false, timeoutMs: 300000 });
  try {
    const r = await waitForService(daemon, exposed.host, exposed.token, '/headers');
    assert.equal(r.status, 200);
    assert.notEqual(exposed.token, token, 'each session has a token of its own');
    const foreign = await portRequest(daemon, { host: exposed.host, path: '/headers', headers: withToken() });
    assert.equal(foreign.status, 401, 'another session\'s token does not open it');
  } finally {
    await client.call('kill_session', { session: offline });
  }
});

test('after kill_session the same URL fails and open connections close', async () => {
  const opened = await openSocket(ws.host, { headers: withToken() });
  assert.equal(opened.status, 'open');
  const closed = new Promise((resolve) => opened.socket.on('close', resolve));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  assert.equal((await portRequest(daemon, { host: echo.host, path: '/headers', headers: withToken(), agent })).status, 200);
  const kept = Object.values(agent.freeSockets)[0][0];
  const keptClosed = new Promise((resolve) => kept.on('close', resolve));
  await client.call('kill_session', { session });
  assert.equal(await Promise.race([closed.then(() => 'closed'), sleep(10000).then(() => 'still open')]), 'closed');
  assert.equal(await Promise.race([keptClosed.then(() => 'closed'), sleep(10000).then(() => 'still open')]), 'closed');
  agent.destroy();
  const r = await portRequest(daemon, { host: page.host, headers: withToken() });
  assert.equal(r.status, 404);
});
