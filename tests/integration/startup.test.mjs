// SPDX-License-Identifier: MIT
// Bad command lines and unreachable servers fail fast with a clear message.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import net from 'node:net';
import { bridgeBin, bridgeEnv } from '../lib/bridge.mjs';

function runBridge(args) {
  return spawnSync(bridgeBin, args, { input: '', timeout: 30000, env: bridgeEnv() });
}

async function closedPort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

test('an unreachable VNC server exits non-zero naming the address', async () => {
  const port = await closedPort();
  const run = runBridge(['stdio', '--vnc', `vnc://127.0.0.1:${port}`]);
  assert.notEqual(run.status, 0);
  assert.match(run.stderr.toString(), new RegExp(`cannot connect to VNC server at 127\\.0\\.0\\.1:${port}`));
});

test('a missing UNIX socket exits non-zero', () => {
  const run = runBridge(['stdio', '--vnc', 'unix:///nonexistent/vnc.sock']);
  assert.notEqual(run.status, 0);
  assert.match(run.stderr.toString(), /no socket there/);
});

test('malformed VNC URLs are refused with the accepted forms', () => {
  for (const url of ['http://host', 'vnc://', 'vnc://host:99999', 'vnc://user:pw@host', 'unix://relative']) {
    const run = runBridge(['stdio', '--vnc', url]);
    assert.notEqual(run.status, 0, url);
    assert.match(run.stderr.toString(), /vnc:\/\/|port|password only|absolute socket path|no host/, url);
  }
});

test('bad options and sizes are refused with usage', () => {
  for (const args of [['stdio', '--size', '10x10'], ['stdio', '--size', 'big'], ['stdio', '--bogus'], ['frobnicate']]) {
    const run = runBridge(args);
    assert.equal(run.status, 2, args.join(' '));
    assert.match(run.stderr.toString(), /usage|WxH/);
  }
});

test('--help prints usage and succeeds', () => {
  const run = runBridge(['--help']);
  assert.equal(run.status, 0);
  assert.match(run.stdout.toString(), /lizard-bridge stdio/);
});
