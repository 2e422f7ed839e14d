// SPDX-License-Identifier: MIT
// MCP and JSON-RPC over stdio, byte for byte, including everything a broken
// or hostile client may send.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { bridgeBin, bridgeEnv } from '../lib/bridge.mjs';
import { startXvnc } from '../lib/x11.mjs';

class RawClient {
  constructor(args) {
    this.child = spawn(bridgeBin, ['stdio', ...args], { stdio: ['pipe', 'pipe', 'pipe'], env: bridgeEnv() });
    this.lines = [];
    this.waiters = [];
    this.stderr = '';
    this.child.stderr.on('data', (d) => (this.stderr += d));
    let buffer = '';
    this.child.stdout.on('data', (chunk) => {
      buffer += chunk;
      let nl;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        this.lines.push(JSON.parse(buffer.slice(0, nl)));
        buffer = buffer.slice(nl + 1);
        this.waiters.splice(0).forEach((w) => w());
      }
    });
    this.exited = new Promise((resolve) => this.child.on('exit', (code) => resolve(code)));
    this.nextId = 1;
  }
  write(text) {
    return new Promise((resolve) => this.child.stdin.write(text, resolve));
  }
  // The next reply matching pred, removed from the queue.
  async reply(pred, timeout = 10000) {
    const deadline = Date.now() + timeout;
    for (;;) {
      const i = this.lines.findIndex(pred);
      if (i >= 0) return this.lines.splice(i, 1)[0];
      if (Date.now() > deadline) throw new Error(`no reply; stderr: ${this.stderr.slice(-2000)}`);
      await new Promise((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
  }
  async request(method, params) {
    const id = this.nextId++;
    await this.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
    return this.reply((m) => m.id === id);
  }
  callTool(name, args) {
    return this.request('tools/call', { name, arguments: args });
  }
  rssKiB() {
    const status = fs.readFileSync(`/proc/${this.child.pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+)/.exec(status)[1]);
  }
  async close() {
    this.child.stdin.end();
    return this.exited;
  }
}

let x, client;

before(async () => {
  x = await startXvnc({ width: 640, height: 480 });
  client = new RawClient(['--vnc', x.url]);
  const init = await client.request('initialize', {
    protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' },
  });
  assert.equal(init.result.protocolVersion, '2025-11-25');
  await client.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
});

after(async () => {
  await client?.close();
  await x?.stop();
});

test('initialize negotiates each supported version and offers the latest otherwise', async () => {
  for (const version of ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05']) {
    const r = await client.request('initialize', { protocolVersion: version, capabilities: {}, clientInfo: { name: 'v', version: '1' } });
    assert.equal(r.result.protocolVersion, version);
    assert.deepEqual(r.result.capabilities, { tools: { listChanged: false }, logging: {} });
    assert.equal(r.result.serverInfo.name, 'lizard-bridge');
  }
  const r = await client.request('initialize', { protocolVersion: '1999-01-01', capabilities: {}, clientInfo: { name: 'v', version: '1' } });
  assert.equal(r.result.protocolVersion, '2025-11-25');
});

test('ping answers with an empty result; notifications get no reply', async () => {
  await client.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  const r = await client.request('ping');
  assert.deepEqual(r.result, {});
  assert.equal(client.lines.length, 0, 'nothing else was sent');
});

test('malformed JSON gets a parse error and the next line is served', async () => {
  await client.write('{"jsonrpc":"2.0", "id": 7, "method": \n');
  const err = await client.reply((m) => m.error?.code === -32700);
  assert.equal(err.id, null);
  assert.deepEqual((await client.request('ping')).result, {});
});

test('invalid requests are refused with -32600', async () => {
  await client.write('[{"jsonrpc":"2.0","id":1,"method":"ping"}]\n');
  assert.equal((await client.reply((m) => m.error?.code === -32600)).id, null);
  await client.write('{"jsonrpc":"1.0","id":"x","method":"ping"}\n');
  assert.equal((await client.reply((m) => m.id === 'x')).error.code, -32600);
  await client.write('{"jsonrpc":"2.0","id":"y"}\n');
  assert.equal((await client.reply((m) => m.id === 'y')).error.code, -32600);
});

test('unknown method is -32601, unknown tool is -32602', async () => {
  assert.equal((await client.request('resources/frobnicate')).error.code, -32601);
  const r = await client.callTool('teleport', {});
  assert.equal(r.error.code, -32602);
  assert.match(r.error.message, /teleport/);
});

test('tools/list gives JSON Schema objects with properties and model-facing descriptions', async () => {
  const { tools } = (await client.request('tools/list')).result;
  const names = tools.map((t) => t.name).sort();
  for (const name of ['click', 'cursor_position', 'move_mouse', 'press', 'screen_size', 'screenshot', 'scroll', 'type']) {
    assert.ok(names.includes(name), name);
  }
  for (const tool of tools) {
    assert.equal(tool.inputSchema.type, 'object', tool.name);
    assert.equal(typeof tool.inputSchema.properties, 'object', tool.name);
    assert.ok(tool.description.length > 30, tool.name);
  }
  assert.deepEqual(tools.find((t) => t.name === 'type').inputSchema.required, ['text']);
});

test('invalid arguments are tool errors that name the value and what is allowed', async () => {
  const cases = [
    ['click', { x: 2000, y: 10 }, /\(2000, 10\) is outside the 640x480 screen; x must be 0\.\.639/],
    ['click', { x: 'left', y: 10 }, /'x' must be an integer, got a string/],
    ['click', { x: 10, y: 10, button: 'top' }, /'button' is 'top'; it must be one of: left, right, middle/],
    ['click', { x: 10, y: 10, count: 4 }, /'count' is 4; it must be from 1 to 3/],
    ['click', { x: 10 }, /give both x and y/],
    ['move_mouse', { x: 1 }, /missing required argument 'y'/],
    ['press', { keys: 'ctrl+nosuchkey' }, /unknown key 'nosuchkey' in 'ctrl\+nosuchkey'/],
    ['press', {}, /missing required argument 'keys'/],
    ['type', { text: 42 }, /'text' must be a string, got an integer/],
    ['type', { text: 'a\u0007b' }, /control character U\+0007/],
    ['scroll', { direction: 'sideways' }, /'direction' is 'sideways'; it must be one of: up, down, left, right/],
    ['screenshot', { colour: true }, /unknown argument 'colour' for screenshot; it takes: region, format, quality, settle, show_cursor, session/],
    ['screen_size', { session: 'other' }, /no session 'other'; the sessions are: default/],
  ];
  for (const [tool, args, message] of cases) {
    const r = await client.callTool(tool, args);
    assert.equal(r.result?.isError, true, `${tool} ${JSON.stringify(args)}`);
    assert.match(r.result.content[0].text, message);
  }
  assert.deepEqual((await client.request('ping')).result, {});
});

test('a line over the 4 MiB limit is refused without buffering it, and the stream goes on', async () => {
  const before = client.rssKiB();
  const chunk = 'x'.repeat(1 << 20);
  await client.write('{"jsonrpc":"2.0","id":"big","method":"ping","params":{"pad":"');
  for (let i = 0; i < 48; i++) await client.write(chunk);
  await client.write('"}}\n');
  const err = await client.reply((m) => m.error?.code === -32600, 30000);
  assert.match(err.error.message, /4194304 byte limit/);
  assert.equal(client.lines.some((m) => m.id === 'big'), false);
  assert.ok(client.rssKiB() - before < 24 * 1024, `RSS grew by ${client.rssKiB() - before} KiB for a 48 MiB line`);
  assert.deepEqual((await client.request('ping')).result, {});
});

// Runs last: it takes the server away.
test('when the VNC server dies, calls fail with a clear message instead of hanging', async () => {
  assert.equal((await client.callTool('move_mouse', { x: 5, y: 5 })).result.isError, false);
  x.process.kill('SIGKILL');
  await x.process.exited;
  // The bound: an answer within 2 s, for every kind of call.
  for (const [tool, args] of [['click', { x: 1, y: 1 }], ['screenshot', {}], ['type', { text: 'a' }]]) {
    const reply = await Promise.race([
      client.callTool(tool, args),
      new Promise((resolve) => setTimeout(() => resolve('hung'), 2000)),
    ]);
    assert.notEqual(reply, 'hung', `${tool} did not answer within 2 s`);
    assert.equal(reply.result.isError, true);
    // A call that meets the end before the bridge has noticed it says so
    // in its own words; the cause is named either way.
    assert.match(reply.result.content[0].text, /(not connected|the desktop connection failed while sending input).*VNC server closed the connection/);
  }
  assert.deepEqual((await client.request('ping')).result, {});
  assert.equal(client.child.exitCode, null, 'the bridge is still running');
});
