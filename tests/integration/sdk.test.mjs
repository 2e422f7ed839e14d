// SPDX-License-Identifier: MIT
// End to end with the official MCP TypeScript SDK: lizard-bridge stdio on
// its embedded local desktop (Xvnc + openbox), every tool called for real.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { waitFor } from '../lib/process.mjs';
import { connectBridge, textOf, imageOf } from '../lib/mcp.mjs';
import { desktopFromLog } from '../lib/x11.mjs';
import { windowReady, pointerLocation, startTypingTarget, startXev, typedText } from '../lib/x11-apps.mjs';
import { decodePng } from '../lib/png.mjs';

let bridge, desktop;
const apps = [];

before(async () => {
  bridge = await connectBridge([]);
  desktop = desktopFromLog(bridge.log);
  assert.ok(desktop, `the bridge logs its desktop: ${bridge.log}`);
});

after(async () => {
  for (const app of apps) await app.stop();
  await bridge?.close();
});

test('lists every computer-use tool with an object schema', async () => {
  const { tools } = await bridge.client.listTools();
  const names = tools.map((t) => t.name).sort();
  assert.deepEqual(names, [
    'build_template', 'click', 'clipboard_get', 'clipboard_set', 'computer', 'create_code_context',
    'create_session', 'create_volume', 'cursor_position', 'delete_snapshot', 'delete_template',
    'delete_volume', 'drag', 'exec', 'expose_port', 'fork_session', 'get_host', 'hold_key',
    'kill_session', 'launch', 'list_code_contexts', 'list_files', 'list_sessions', 'list_snapshots',
    'list_templates', 'list_volumes', 'mouse_down', 'mouse_up', 'move_mouse', 'open_url',
    'pause_session', 'press', 'read_file', 'remove_code_context', 'restart_code_context',
    'resume_session', 'run_code', 'screen_size', 'screenshot', 'scroll', 'session_info',
    'set_timeout', 'snapshot_session', 'start_stream', 'stop_stream', 'type', 'unexpose_port',
    'wait', 'write_file',
  ]);
  for (const tool of tools) assert.equal(tool.inputSchema.type, 'object');
});

test('the embedded desktop is 1280x800 and private to the bridge', async () => {
  assert.deepEqual(JSON.parse(textOf(await bridge.call('screen_size'))), { width: 1280, height: 800 });
  // X clients need the session's cookie...
  const refused = spawnSync('xdpyinfo', [], { env: { ...desktop.env, XAUTHORITY: '/dev/null' } });
  assert.notEqual(refused.status, 0, 'an X client without the cookie is refused');
  assert.equal(spawnSync('xdpyinfo', [], { env: desktop.env }).status, 0);
  // ...and RFB is a 0600 UNIX socket, with no TCP listener.
  const socket = path.join(desktop.dir, 'vnc.sock');
  assert.equal(fs.statSync(socket).mode & 0o777, 0o600);
  // (Every sandboxed Xvnc has the same socket path inside; none listens.)
  const xvncs = execFileSync('pgrep', ['-f', 'Xvnc.*-rfbunixpath /run/lizard/vnc.sock']).toString().trim().split('\n');
  assert.ok(xvncs.length >= 1 && xvncs[0] !== '');
  const tcp = execFileSync('ss', ['-ltnpH']).toString();
  for (const xvnc of xvncs) assert.equal(tcp.includes(`pid=${xvnc},`), false, 'Xvnc listens on no TCP port');
});

test('screenshot returns a 1280x800 PNG and says its size', async () => {
  const result = await bridge.call('screenshot');
  assert.equal(result.isError, false);
  const image = imageOf(result);
  assert.equal(image.mimeType, 'image/png');
  const png = decodePng(image.data);
  assert.equal(png.width, 1280);
  assert.equal(png.height, 800);
  assert.match(textOf(result), /1280x800/);
});

test('move_mouse and cursor_position agree with the X server', async () => {
  await bridge.call('move_mouse', { x: 321, y: 123 });
  const where = await waitFor(() => {
    const p = pointerLocation(desktop.env);
    return p.x === 321 && p.y === 123 ? p : null;
  });
  assert.deepEqual(where, { x: 321, y: 123 });
  assert.deepEqual(JSON.parse(textOf(await bridge.call('cursor_position'))), { x: 321, y: 123 });
});

test('click, scroll and press reach a window under openbox', async () => {
  const xev = startXev(desktop.env, '500x400+300+200');
  apps.push(xev);
  assert.ok(await waitFor(() => windowReady(desktop.env, 'Event Tester')));
  const inside = async () => {
    const r = await bridge.call('click', { x: 550, y: 400 });
    assert.equal(r.isError, false, textOf(r));
    return /ButtonPress event/.test(xev.output);
  };
  // openbox may still be placing the window: click until it receives one.
  assert.ok(await waitFor(inside, { timeout: 10000, interval: 300 }), 'xev received a click');
  const mark = xev.output.length;
  assert.equal((await bridge.call('click', { x: 560, y: 410, button: 'right', count: 2 })).isError, false);
  assert.equal((await bridge.call('scroll', { x: 560, y: 410, direction: 'down', amount: 2 })).isError, false);
  assert.equal((await bridge.call('press', { keys: 'ctrl+shift+t' })).isError, false);
  const done = await waitFor(() => (xev.output.match(/KeyRelease event/g) || []).length >= 3);
  assert.ok(done, xev.output.slice(-2000));
  // A probing click may still land after the mark: judge the newest four.
  const buttons = [...xev.output.slice(mark).matchAll(/ButtonPress event[^]*?button (\d+)/g)].map((m) => Number(m[1]));
  assert.deepEqual(buttons.slice(-4), [3, 3, 5, 5], xev.output.slice(mark));
  const keys = [...xev.output.slice(mark).matchAll(/KeyPress event[^]*?keysym 0x[0-9a-f]+, ([^)]+)\)/g)].map((m) => m[1]);
  assert.deepEqual(keys, ['Control_L', 'Shift_L', 'T']);
  await xev.stop();
});

test('type puts Unicode text into a terminal in the desktop', async () => {
  const file = path.join(desktop.dir, 'typed-e2e.txt');
  const term = startTypingTarget(desktop.env, file, '80x10+100+100');
  apps.push(term);
  assert.ok(await waitFor(() => fs.existsSync(file) && windowReady(desktop.env, 'xterm', 'class')));
  await bridge.call('click', { x: 200, y: 150 });
  const text = 'Hello, wörld — ñ € 漢字\n';
  assert.equal((await bridge.call('type', { text })).isError, false);
  const typed = await typedText(file, text.length);
  assert.equal(typed, text);
  await term.stop();
});
