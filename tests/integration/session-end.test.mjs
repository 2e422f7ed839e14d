// SPDX-License-Identifier: MIT
// Ending a session stops the calls running on it: a long hold_key or drag
// returns within a few seconds of kill_session, sends no more input, and
// does not keep the session's desktop alive.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { waitFor, sleep } from '../lib/process.mjs';
import { startDaemon } from '../lib/bridge.mjs';
import { httpClient, textOf } from '../lib/mcp.mjs';
import { startXvnc, desktopFromLog } from '../lib/x11.mjs';
import { startXev, windowReady } from '../lib/x11-apps.mjs';

let x, daemon, client;

before(async () => {
  x = await startXvnc({ width: 800, height: 600 });
  daemon = await startDaemon();
  client = await httpClient(daemon, 'session-end');
});

after(async () => {
  await client?.close();
  await daemon?.stop();
  await x?.stop();
  assert.doesNotMatch(daemon?.log ?? '', /AddressSanitizer|LeakSanitizer|runtime error:/, 'sanitizer report');
});

const json = (result) => JSON.parse(textOf(result));

async function attach() {
  return json(await client.call('create_session', { vnc: x.url })).session;
}

async function timed(promise) {
  const started = Date.now();
  const value = await promise;
  return { value, ms: Date.now() - started };
}

function count(output, type) {
  return output.split('\n').filter((line) => line.startsWith(`${type} event`)).length;
}

test('kill_session ends a running hold_key within 3 s', async () => {
  const xev = startXev(x.env, '300x200+50+50');
  try {
    assert.ok(await waitFor(() => windowReady(x.env, 'Event Tester')));
    const session = await attach();
    await client.call('move_mouse', { session, x: 150, y: 120 });
    const holding = timed(client.call('hold_key', { session, keys: 'shift', duration_ms: 30000 }));
    assert.ok(await waitFor(() => count(xev.output, 'KeyPress') > 0), 'the key went down');
    const killedAt = Date.now();
    await client.call('kill_session', { session });
    const { value } = await holding;
    assert.equal(value.isError, true, textOf(value));
    assert.match(textOf(value), /ended/);
    assert.ok(Date.now() - killedAt < 3000, `hold_key returned ${Date.now() - killedAt} ms after the kill`);
  } finally {
    await xev.stop();
  }
});

test('kill_session ends a long drag within 3 s, and no motion follows', async () => {
  const xev = startXev(x.env, '700x500+20+20');
  try {
    assert.ok(await waitFor(() => windowReady(x.env, 'Event Tester')));
    const session = await attach();
    // 1000 points corner to corner: the capped drag would take about 16 s.
    const path = Array.from({ length: 1000 }, (_, i) => (i % 2 ? [650, 450] : [60, 60]));
    const dragging = timed(client.call('drag', { session, path }));
    assert.ok(await waitFor(() => count(xev.output, 'MotionNotify') > 20), 'the drag started');
    const killedAt = Date.now();
    await client.call('kill_session', { session });
    const { value } = await dragging;
    assert.equal(value.isError, true, textOf(value));
    assert.match(textOf(value), /ended/);
    assert.ok(Date.now() - killedAt < 3000, `drag returned ${Date.now() - killedAt} ms after the kill`);
    // Events already on their way to xev may still arrive; then none.
    await sleep(300);
    const settled = count(xev.output, 'MotionNotify');
    await sleep(700);
    assert.equal(count(xev.output, 'MotionNotify'), settled, 'motion after the session ended');
  } finally {
    await xev.stop();
  }
});

test('a drag longer than the cap finishes within about 16 s', async () => {
  const xev = startXev(x.env, '700x500+20+20');
  try {
    assert.ok(await waitFor(() => windowReady(x.env, 'Event Tester')));
    const session = await attach();
    const path = Array.from({ length: 1000 }, (_, i) => (i % 2 ? [650, 450] : [60, 60]));
    const { value, ms } = await timed(client.call('drag', { session, path }));
    assert.equal(value.isError, false, textOf(value));
    assert.ok(ms < 25000, `the drag took ${ms} ms`);
    await client.call('kill_session', { session });
  } finally {
    await xev.stop();
  }
});

test('kill_session during a hold_key on a local desktop takes the desktop down', async () => {
  const before = daemon.log.length;
  const session = json(await client.call('create_session', { template: 'bare', size: '320x240' })).session;
  const desktop = desktopFromLog(daemon.log.slice(before));
  assert.ok(desktop && fs.existsSync(desktop.dir), 'the desktop is running');
  const holding = client.call('hold_key', { session, keys: 'ctrl', duration_ms: 30000 });
  await sleep(300);
  await client.call('kill_session', { session });
  assert.equal((await holding).isError, true);
  assert.ok(await waitFor(() => !fs.existsSync(desktop.dir), { timeout: 5000 }), 'the desktop outlived the kill');
});
