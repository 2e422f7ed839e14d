// SPDX-License-Identifier: MIT
// A second server implementation: x11vnc on Xvfb behind a VNC password.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startProcess, waitFor } from '../lib/process.mjs';
import { bridgeBin, bridgeEnv } from '../lib/bridge.mjs';
import { connectBridge, textOf, imageOf } from '../lib/mcp.mjs';
import { startX11vnc } from '../lib/x11.mjs';
import { windowReady, captureRootRgb, startTypingTarget, typedText } from '../lib/x11-apps.mjs';
import { decodePng, rgbaToRgb, countDifferentPixels } from '../lib/png.mjs';

let server;
const apps = [];

before(async () => {
  server = await startX11vnc({ width: 800, height: 600, password: 'sekrit42' });
  apps.push(startProcess('xlogo', ['-geometry', '200x200+500+50'], { env: server.env }));
  assert.ok(await waitFor(() => windowReady(server.env, 'xlogo')));
});

after(async () => {
  for (const app of apps) await app.stop();
  await server?.stop();
});

function runBridge(args, env = {}) {
  // stdin closed at once: the bridge must still have exited for its own reasons.
  return spawnSync(bridgeBin, ['stdio', ...args], {
    input: '', timeout: 30000, env: bridgeEnv(env),
  });
}

test('password in LIZARD_VNC_PASSWORD: screenshot matches the server and typing arrives', async () => {
  const bridge = await connectBridge(['--vnc', server.url], { env: { LIZARD_VNC_PASSWORD: server.password } });
  try {
    assert.deepEqual(JSON.parse(textOf(await bridge.call('screen_size'))), { width: 800, height: 600 });
    await bridge.call('move_mouse', { x: 799, y: 599 });
    let diff = -1;
    await waitFor(async () => {
      const shot = await bridge.call('screenshot', { settle: true, show_cursor: false });
      assert.equal(shot.isError, false, textOf(shot));
      diff = countDifferentPixels(rgbaToRgb(decodePng(imageOf(shot).data)), captureRootRgb(server.env));
      return diff === 0;
    }, { timeout: 8000, interval: 200 });
    assert.equal(diff, 0, 'pixels differing from xwd of the Xvfb display');

    const file = path.join(server.dir, 'typed.txt');
    const term = startTypingTarget(server.env, file, '60x8+0+0');
    apps.push(term);
    assert.ok(await waitFor(() => fs.existsSync(file)));
    await bridge.call('click', { x: 100, y: 50 });
    const text = 'x11vnc says Hello, World 123!\n';
    assert.equal((await bridge.call('type', { text })).isError, false);
    const typed = await typedText(file, text.length);
    assert.equal(typed, text);
    await term.stop();
  } finally {
    await bridge.close();
  }
});

test('password in the URL works too', async () => {
  const bridge = await connectBridge(['--vnc', `vnc://:${server.password}@127.0.0.1:${server.port}`]);
  try {
    assert.deepEqual(JSON.parse(textOf(await bridge.call('screen_size'))), { width: 800, height: 600 });
  } finally {
    await bridge.close();
  }
});

test('a wrong password exits non-zero with a clear message', () => {
  const run = runBridge(['--vnc', server.url], { LIZARD_VNC_PASSWORD: 'wrong-one' });
  assert.notEqual(run.status, 0);
  assert.match(run.stderr.toString(), /refused the password|authentication/i);
});

test('no password for a protected server exits non-zero and says how to give one', () => {
  const run = runBridge(['--vnc', server.url]);
  assert.notEqual(run.status, 0);
  assert.match(run.stderr.toString(), /asks for a password.*LIZARD_VNC_PASSWORD/);
});
