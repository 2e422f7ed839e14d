// SPDX-License-Identifier: MIT
// stdio at its edges, byte for byte: replies to calls still running when
// stdin closes, shutdown while they run, ids echoed exactly, UTF-8 only,
// the exact message limit, MCP logging, and cancellation through the SDK.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { sleep } from '../lib/process.mjs';
import { bridgeBin, bridgeEnv } from '../lib/bridge.mjs';
import { connectBridge } from '../lib/mcp.mjs';
import { startXvnc } from '../lib/x11.mjs';

const LIMIT = 4 * 1024 * 1024;
const utf8 = new TextDecoder('utf-8', { fatal: true });

// lizard-bridge stdio with raw pipes: everything it writes is kept as bytes.
function spawnStdio(args) {
  const child = spawn(bridgeBin, ['stdio', ...args], { stdio: ['pipe', 'pipe', 'pipe'], env: bridgeEnv() });
  const out = [];
  let stderr = '';
  child.stdout.on('data', (d) => out.push(d));
  child.stderr.on('data', (d) => (stderr += d));
  child.stdin.on('error', () => {});
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return {
    child,
    exited,
    get stderr() {
      return stderr;
    },
    bytes: () => Buffer.concat(out),
    // Parsed lines so far (each must be valid UTF-8 and JSON).
    lines() {
      const text = utf8.decode(Buffer.concat(out));
      return text.split('\n').filter(Boolean).map((l) => JSON.parse(l));
    },
    write: (text) => new Promise((resolve) => child.stdin.write(text, resolve)),
    async waitFor(pred, timeout = 15000) {
      const deadline = Date.now() + timeout;
      for (;;) {
        const found = this.lines().find(pred);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`no such line; stderr: ${stderr.slice(-2000)}`);
        await new Promise((resolve) => {
          child.stdout.once('data', resolve);
          setTimeout(resolve, 200);
        });
      }
    },
    // Resolves with how it ended, or null when it did not within ms.
    endedWithin: (ms) => Promise.race([exited, sleep(ms).then(() => null)]),
    kill: () => {
      try {
        child.kill('SIGKILL');
      } catch {}
    },
  };
}

const line = (o) => JSON.stringify(o) + '\n';
const init = line({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })
  + line({ jsonrpc: '2.0', method: 'notifications/initialized' });
const call = (id, name, args = {}) => line({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

let x;

before(async () => {
  x = await startXvnc({ width: 320, height: 240 });
});

after(async () => {
  await x?.stop();
});

test('every call read before stdin closes is answered, then the bridge exits (local desktop)', async () => {
  const bridge = spawnStdio(['--size', '320x240']);
  try {
    await bridge.write(init + call(1, 'screenshot') + call(2, 'click', { x: 10, y: 10 })
      + call(3, 'screenshot', { format: 'jpeg' }) + call(4, 'move_mouse', { x: 50, y: 60 })
      + line({ jsonrpc: '2.0', id: 5, method: 'ping' }));
    bridge.child.stdin.end();
    const ended = await bridge.endedWithin(60000);
    assert.ok(ended, `the bridge did not exit after EOF; stderr: ${bridge.stderr.slice(-2000)}`);
    assert.equal(ended.code, 0);
    const byId = new Map(bridge.lines().map((m) => [m.id, m]));
    for (const id of ['init', 1, 2, 3, 4, 5]) assert.ok(byId.has(id), `no reply for id ${id}`);
    assert.equal(byId.get(1).result.content.find((c) => c.type === 'image').mimeType, 'image/png');
    assert.equal(byId.get(3).result.content.find((c) => c.type === 'image').mimeType, 'image/jpeg');
    assert.equal(byId.get(2).result.isError, false);
    assert.equal(byId.get(4).result.isError, false);
  } finally {
    bridge.kill();
  }
});

test('stdin closing with calls in flight, 30 times: replies arrive, and SIGTERM always ends it within 2 s', async () => {
  for (let run = 0; run < 30; run++) {
    const bridge = spawnStdio(['--vnc', x.url]);
    try {
      await bridge.write(init);
      await bridge.waitFor((m) => m.id === 'init');
      await bridge.write(call(1, 'screenshot') + call(2, 'click', { x: 5, y: 5 }) + call(3, 'wait', { ms: 300 })
        + line({ jsonrpc: '2.0', id: 4, method: 'ping' }));
      bridge.child.stdin.end();
      if (run % 2 === 0) {
        // Shutdown while the calls run.
        bridge.child.kill('SIGTERM');
        assert.ok(await bridge.endedWithin(2000), `run ${run}: SIGTERM did not end the bridge in 2 s`);
      } else {
        const ended = await bridge.endedWithin(15000);
        assert.ok(ended, `run ${run}: no exit after EOF; stderr: ${bridge.stderr.slice(-1500)}`);
        assert.equal(ended.code, 0, `run ${run}: exit ${JSON.stringify(ended)}`);
        const ids = bridge.lines().map((m) => m.id);
        for (const id of [1, 2, 3, 4]) assert.ok(ids.includes(id), `run ${run}: no reply for ${id}`);
      }
    } finally {
      bridge.kill();
    }
  }
});

test('a client that stops reading replies cannot keep SIGTERM from ending the bridge in 2 s', async () => {
  const bridge = spawnStdio(['--vnc', x.url]);
  try {
    await bridge.write(init);
    await bridge.waitFor((m) => m.id === 'init');
    bridge.child.stdout.pause();
    // tools/list replies, megabytes of them: far more than the pipe holds.
    let requests = '';
    for (let i = 0; i < 400; i++) requests += line({ jsonrpc: '2.0', id: i, method: 'tools/list' });
    await bridge.write(requests);
    await bridge.write(call('shot', 'screenshot'));
    bridge.child.kill('SIGTERM');
    assert.ok(await bridge.endedWithin(2000), `SIGTERM did not end the bridge in 2 s; stderr: ${bridge.stderr.slice(-1000)}`);
  } finally {
    bridge.kill();
  }
});

test('numeric ids above 2^53 come back exactly as sent', async () => {
  const bridge = spawnStdio(['--vnc', x.url]);
  try {
    await bridge.write(init);
    await bridge.write('{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}\n');
    await bridge.write('{"jsonrpc":"2.0","id":-12345678901234567890123,"method":"tools/call","params":{"name":"screen_size"}}\n');
    await bridge.write('{"jsonrpc":"2.0","id":1.000000000000000001,"method":"no/such"}\n');
    await bridge.waitFor((m) => m.error?.code === -32601);
    await bridge.waitFor((m) => m.result?.content);
    const text = bridge.bytes().toString();
    assert.match(text, /"id":9007199254740993,"result":\{\}/);
    assert.match(text, /"id":-12345678901234567890123,"result"/);
    assert.match(text, /"id":1\.000000000000000001,"error"/);
  } finally {
    bridge.kill();
  }
});

test('bytes that are not UTF-8 are refused where they enter; nothing sent is invalid UTF-8', async () => {
  const bridge = spawnStdio(['--vnc', x.url]);
  try {
    await bridge.write(init);
    const raw = (text) => new Promise((resolve) => bridge.child.stdin.write(Buffer.from(text, 'latin1'), resolve));
    await raw('{"jsonrpc":"2.0","id":"a\xff","method":"ping"}\n');
    await raw('{"jsonrpc":"2.0","id":2,"method":"bad\xc3"}\n');
    await raw('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"clipboard_set","arguments":{"text":"caf\xe9"}}}\n');
    // A long name, with a two-byte character where a byte cut would split it.
    await bridge.write(line({ jsonrpc: '2.0', id: 4, method: `${'m'.repeat(63)}é and more` }));
    await bridge.write(call(5, 'clipboard_get'));
    await bridge.waitFor((m) => m.id === 5);
    const lines = bridge.lines(); // throws on invalid UTF-8
    const parseErrors = lines.filter((m) => m.error?.code === -32700);
    assert.equal(parseErrors.length, 3);
    for (const e of parseErrors) assert.match(e.error.message, /not valid UTF-8 \(byte \d+\)/);
    assert.equal(lines.find((m) => m.id === 3), undefined);
    const cut = lines.find((m) => m.id === 4).error.message;
    assert.match(cut, /^Method not found: m{63}$/);
    assert.doesNotMatch(lines.find((m) => m.id === 5).result.content[0].text, /caf/);
  } finally {
    bridge.kill();
  }
});

test('a message of exactly 4 MiB is served; one byte more is refused', async () => {
  const bridge = spawnStdio(['--vnc', x.url]);
  try {
    await bridge.write(init);
    const padded = (id, size) => {
      const bare = JSON.stringify({ jsonrpc: '2.0', id, method: 'ping', params: { pad: '' } });
      return bare.replace('"pad":""', `"pad":"${'p'.repeat(size - bare.length)}"`);
    };
    assert.equal(padded('exact', LIMIT).length, LIMIT);
    await bridge.write(padded('exact', LIMIT) + '\n');
    await bridge.write(padded('crlf', LIMIT) + '\r\n');
    await bridge.write(padded('over', LIMIT + 1) + '\n');
    await bridge.write(line({ jsonrpc: '2.0', id: 'after', method: 'ping' }));
    await bridge.waitFor((m) => m.id === 'after', 30000);
    const lines = bridge.lines();
    assert.deepEqual(lines.find((m) => m.id === 'exact').result, {});
    assert.deepEqual(lines.find((m) => m.id === 'crlf').result, {});
    assert.equal(lines.find((m) => m.id === 'over'), undefined);
    assert.match(lines.find((m) => m.error?.code === -32600).error.message, /4194304 byte limit/);
  } finally {
    bridge.kill();
  }
});

const sessionOf = (reply) => JSON.parse(reply.result.content[0].text).session;

test('logging/setLevel, and session events as notifications/message at or above it', async () => {
  const bridge = spawnStdio(['--vnc', x.url]);
  try {
    await bridge.write(init + line({ jsonrpc: '2.0', id: 'lvl', method: 'logging/setLevel', params: { level: 'info' } }));
    const initReply = await bridge.waitFor((m) => m.id === 'init');
    assert.deepEqual(initReply.result.capabilities.logging, {});
    assert.deepEqual((await bridge.waitFor((m) => m.id === 'lvl')).result, {});
    await bridge.write(call('create', 'create_session', { template: 'bare', size: '320x240' }));
    const created = sessionOf(await bridge.waitFor((m) => m.id === 'create'));
    const started = await bridge.waitFor((m) => m.method === 'notifications/message' && m.params.data.includes(`${created} started`));
    assert.equal(started.params.level, 'info');
    assert.equal(started.params.logger, 'session');
    await bridge.write(call('kill', 'kill_session', { session: created }));
    const ended = await bridge.waitFor((m) => m.method === 'notifications/message' && m.params.data.includes(`${created} ended`));
    assert.equal(ended.params.level, 'notice');
    assert.match(ended.params.data, /killed by kill_session/);
    // Above the level only: a second session's start is not sent at error.
    await bridge.write(line({ jsonrpc: '2.0', id: 'lvl2', method: 'logging/setLevel', params: { level: 'error' } })
      + call('create2', 'create_session', { template: 'bare', size: '320x240' }));
    const second = sessionOf(await bridge.waitFor((m) => m.id === 'create2'));
    await bridge.write(call('kill2', 'kill_session', { session: second }));
    await bridge.waitFor((m) => m.id === 'kill2');
    assert.equal(bridge.lines().some((m) => m.method === 'notifications/message' && m.params.data.includes(second)), false);
  } finally {
    bridge.kill();
  }
});

// Protocol behaviour only: with a `wait` that stops early on cancellation
// the call also frees its lane sooner; without, the reply is still dropped.
test('SDK client: a cancelled call gets no reply, and the connection keeps serving', async () => {
  const bridge = await connectBridge(['--vnc', x.url]);
  try {
    const seen = [];
    const deliver = bridge.transport.onmessage;
    bridge.transport.onmessage = (message, extra) => {
      seen.push(message);
      deliver(message, extra);
    };
    const controller = new AbortController();
    const cancelled = bridge.client.callTool({ name: 'wait', arguments: { ms: 5000 } }, undefined, { signal: controller.signal });
    controller.abort('the test gave up');
    await assert.rejects(cancelled);
    await bridge.client.ping();
    // move_mouse runs in the same lane as the wait, so its reply comes
    // after the wait has ended, with or without an early stop.
    const moved = await bridge.call('move_mouse', { x: 3, y: 4 });
    assert.equal(moved.isError, false);
    const responses = seen.filter((m) => 'result' in m || 'error' in m);
    // The ping's and move_mouse's: none for the wait.
    assert.equal(responses.length, 2, `replies: ${JSON.stringify(responses).slice(0, 500)}`);
    assert.deepEqual(responses[0].result, {});
  } finally {
    await bridge.close();
  }
});

test('stdio --viewer serves start_stream\'s pages, and nothing of MCP', async () => {
  const net = await import('node:net');
  const probe = net.createServer();
  await new Promise((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = probe.address().port;
  await new Promise((resolve) => probe.close(resolve));
  const xvnc = await startXvnc({ width: 320, height: 240 });
  const bridge = await connectBridge(['--vnc', xvnc.url, '--viewer', `127.0.0.1:${port}`]);
  try {
    const links = (await bridge.call('start_stream', {})).structuredContent;
    assert.match(links.url, new RegExp(`^http://127\\.0\\.0\\.1:${port}/view/default#token=[0-9a-f]{32}$`));
    const page = await fetch(links.url.split('#')[0]);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<html/);
    for (const path of ['/mcp', '/metrics']) {
      const refused = await fetch(`http://127.0.0.1:${port}${path}`, { method: path === '/mcp' ? 'POST' : 'GET' });
      assert.equal(refused.status, 404, path);
      assert.match(await refused.text(), /MCP on its stdio/);
    }
  } finally {
    await bridge.close();
    await xvnc.stop();
  }
  const named = spawnStdio(['--viewer', 'localhost.example:1']);
  const { code } = await named.exited;
  assert.equal(code, 1);
  assert.match(named.stderr, /give an IPv4 or IPv6 address/);
});
