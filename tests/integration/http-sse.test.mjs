// SPDX-License-Identifier: MIT
// Progress over Streamable HTTP: a POSTed call with a progressToken, from a
// client that accepts text/event-stream, is answered as an SSE stream once
// progress arrives (the notifications, then the result, then the end);
// every other request keeps its plain JSON reply.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import { waitFor } from '../lib/process.mjs';
import { startDaemon } from '../lib/bridge.mjs';
import { httpClient, textOf } from '../lib/mcp.mjs';

let daemon, client, session, mcpSession;
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

before(async () => {
  daemon = await startDaemon();
  client = await httpClient(daemon);
  session = JSON.parse(textOf(await client.call('create_session', { template: 'bare', size: '320x240' }))).session;
  const init = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
  mcpSession = init.headers['mcp-session-id'];
  assert.ok(mcpSession, 'initialize gives an Mcp-Session-Id');
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
});

after(async () => {
  agent.destroy();
  await client?.call('kill_session', { session }).catch(() => {});
  await client?.close();
  await daemon?.stop();
});

// One raw POST; resolves { status, headers, body, reused } when the
// response has ended, or calls onData with each piece as it comes.
function post(message, { accept = 'application/json, text/event-stream', onData, request } = {}) {
  const body = typeof message === 'string' ? message : JSON.stringify(message);
  const headers = {
    Authorization: `Bearer ${daemon.key}`, 'Content-Type': 'application/json', Accept: accept,
    'Content-Length': Buffer.byteLength(body),
    ...(mcpSession ? { 'Mcp-Session-Id': mcpSession } : {}),
  };
  return new Promise((resolve, reject) => {
    const req = http.request(new URL('/mcp', daemon.url), { method: 'POST', headers, agent }, (res) => {
      let data = '';
      res.on('data', (d) => {
        data += d;
        onData?.(data, req);
      });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: data, reused: req.reusedSocket }));
      res.on('error', reject);
    });
    req.on('error', reject);
    request?.(req);
    req.end(body);
  });
}

// The data lines of an SSE body, as JSON, in order.
function events(body) {
  assert.ok(body.endsWith('\n\n'), `the stream ends with a whole event: ${JSON.stringify(body.slice(-40))}`);
  return body.split('\n\n').filter(Boolean).map((block) => {
    const lines = block.split('\n');
    assert.equal(lines[0], 'event: message');
    assert.ok(lines[1].startsWith('data: '), block);
    return JSON.parse(lines[1].slice(6));
  });
}

const waitCall = (id, ms, token) => ({
  jsonrpc: '2.0', id, method: 'tools/call',
  params: { name: 'wait', arguments: { session, ms }, ...(token === undefined ? {} : { _meta: { progressToken: token } }) },
});

test('the SDK client gets progress of wait before its result', async () => {
  const seen = [];
  const result = await client.client.callTool({ name: 'wait', arguments: { session, ms: 1500 } }, undefined,
    { onprogress: (p) => seen.push(p), timeout: 30000 });
  seen.push('result');
  assert.equal(result.isError, false, textOf(result));
  assert.ok(seen.length >= 2 && seen.at(-1) === 'result', JSON.stringify(seen));
  assert.match(seen[0].message, /waited \d+ of 1500 ms/);
});

test('exec output streams to the SDK client as progress', async () => {
  const seen = [];
  // The last sleep keeps the last line apart from the result (see
  // sandbox.test.mjs: the SDK drops progress read together with its result).
  const result = await client.client.callTool(
    { name: 'exec', arguments: { session, command: 'echo one; sleep 0.3; echo two; sleep 0.3; echo three; sleep 0.3' } },
    undefined, { onprogress: (p) => seen.push(p.message), timeout: 30000 });
  seen.push('result');
  assert.equal(result.structuredContent.stdout, 'one\ntwo\nthree\n');
  assert.deepEqual(seen, ['stdout: one\n', 'stdout: two\n', 'stdout: three\n', 'result']);
});

test('a raw client sees text/event-stream, the events in order, and the end', async () => {
  const reply = await post(waitCall(7, 1200, 'tok-7'));
  assert.equal(reply.status, 200);
  assert.equal(reply.headers['content-type'], 'text/event-stream');
  assert.equal(reply.headers['cache-control'], 'no-cache');
  assert.equal(reply.headers['content-length'], undefined);
  assert.equal(reply.headers['transfer-encoding'], 'chunked');
  const list = events(reply.body);
  const last = list.pop();
  assert.equal(last.id, 7);
  assert.equal(last.result.isError, false);
  assert.ok(list.length >= 1, reply.body);
  for (const e of list) {
    assert.equal(e.method, 'notifications/progress');
    assert.equal(e.params.progressToken, 'tok-7');
  }
  assert.ok(list.every((e, i) => i === 0 || e.params.progress > list[i - 1].params.progress), 'progress grows');
  // The connection stays for the next request: chunked, not closed.
  const next = await post(waitCall(8, 0));
  assert.ok(next.reused, 'the next request reuses the connection');
  assert.equal(JSON.parse(next.body).id, 8);
});

test('a number token matches however it is written, and SSE-only clients stream too', async () => {
  const text = JSON.stringify(waitCall(9, 600, 5)).replace('"progressToken":5', '"progressToken":5.0');
  const reply = await post(text, { accept: 'text/event-stream' });
  assert.equal(reply.headers['content-type'], 'text/event-stream');
  const list = events(reply.body);
  assert.equal(list.at(-1).id, 9);
  assert.ok(list.length >= 2, reply.body);
  assert.equal(list[0].params.progressToken, 5); // echoed as sent: 5.0
});

test('calls without a token, or with no progress, keep the plain JSON reply', async () => {
  const plain = await post(waitCall(10, 300));
  assert.equal(plain.headers['content-type'], 'application/json');
  assert.equal(Number(plain.headers['content-length']), Buffer.byteLength(plain.body));
  assert.equal(JSON.parse(plain.body).id, 10);
  const quick = await post({ jsonrpc: '2.0', id: 11, method: 'tools/call', params: { name: 'list_sessions', arguments: {}, _meta: { progressToken: 'q' } } });
  assert.equal(quick.headers['content-type'], 'application/json');
  assert.equal(JSON.parse(quick.body).id, 11);
  const onlyJson = await post(waitCall(12, 600, 'j'), { accept: 'application/json' });
  assert.equal(onlyJson.headers['content-type'], 'application/json');
  assert.equal(JSON.parse(onlyJson.body).id, 12);
});

test('a client that leaves mid-stream leaves nothing behind', async () => {
  const baseline = daemon.fdCount();
  for (let i = 0; i < 3; i++) {
    const gone = await new Promise((resolve, reject) => {
      setTimeout(() => reject(new Error('no progress event within 10 s')), 10000).unref();
      post(waitCall(20 + i, 1500, `gone-${i}`), {
        onData: (data, req) => {
          if (data.includes('\n\n')) {
            req.destroy();
            resolve(data);
          }
        },
        request: (req) => req.on('error', () => {}),
      }).catch(() => {});
    });
    assert.match(gone, /notifications\/progress/);
  }
  assert.ok(await waitFor(() => daemon.fdCount() <= baseline, { timeout: 10000 }), `descriptors ${baseline} -> ${daemon.fdCount()}`);
  const after = await client.call('list_sessions');
  assert.equal(after.isError, false);
});

test('a stream client that stops reading is closed at the queue bound; others go on', async () => {
  const net = await import('node:net');
  const baseline = daemon.fdCount();
  const peak = () => Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync(`/proc/${daemon.child.pid}/status`, 'utf8'))[1]);
  const before = peak();
  // About 200 MB of output as progress, to a client that reads nothing.
  const body = JSON.stringify({
    jsonrpc: '2.0', id: 30, method: 'tools/call',
    params: { name: 'exec', arguments: { session, command: 'head -c 200000000 /dev/zero | tr "\\0" a', timeout_ms: 60000 }, _meta: { progressToken: 'flood' } },
  });
  const socket = net.connect(Number(new URL(daemon.url).port), '127.0.0.1');
  socket.on('error', () => {});
  socket.pause();
  socket.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${daemon.key}\r\n` +
    `Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: ${mcpSession}\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  assert.ok(await waitFor(() => /64 MiB of replies queued/.test(daemon.log), { timeout: 60000, interval: 200 }),
    'the client that does not read was closed');
  // Leaving is not cancelling (the spec): the client cancels, the command
  // ends, and with it its pipes.
  const cancel = await post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 30, reason: 'test' } });
  assert.equal(cancel.status, 202);
  assert.ok(await waitFor(() => daemon.fdCount() <= baseline, { timeout: 10000 }), `descriptors ${baseline} -> ${daemon.fdCount()}`);
  // The peak stays near the 64 MiB bound, not the 200 MB sent. (ASan's
  // quarantine keeps freed memory: no bound to check there.)
  const grown = (peak() - before) / 1024;
  const sanitized = fs.readFileSync(`/proc/${daemon.child.pid}/maps`, 'utf8').includes('libasan');
  if (!sanitized) assert.ok(grown < 160, `peak RSS grew ${grown.toFixed(0)} MiB`);
  socket.destroy();
  const listed = await client.call('list_sessions');
  assert.equal(listed.isError, false);
});

test('the request time limit does not cut a call whose progress is streaming', async () => {
  const strict = await startDaemon({ args: ['--request-timeout', '1'] });
  const sdk = await httpClient(strict);
  try {
    const s = JSON.parse(textOf(await sdk.call('create_session', { template: 'bare', size: '320x240' }))).session;
    const seen = [];
    const result = await sdk.client.callTool({ name: 'wait', arguments: { session: s, ms: 2500 } }, undefined,
      { onprogress: (p) => seen.push(p), timeout: 30000 });
    assert.equal(result.isError, false, textOf(result));
    assert.ok(seen.length >= 2, JSON.stringify(seen));
    assert.match(textOf(result), /2500/);
    await sdk.call('kill_session', { session: s });
  } finally {
    await sdk.close();
    await strict.stop();
  }
});
