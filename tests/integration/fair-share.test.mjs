// SPDX-License-Identifier: MIT
// No client and no desktop can take the daemon's workers: long calls are
// bounded per session (4 running) and per client (8), quick calls
// (screenshots, session_info, kill_session) always find a worker, and
// kill_session stops a busy session's running calls at once.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '../lib/process.mjs';
import { startDaemon } from '../lib/bridge.mjs';
import { httpClient, wsClient, textOf } from '../lib/mcp.mjs';
import fs from 'node:fs';

let daemon, greedy, other;

before(async () => {
  daemon = await startDaemon();
  // One WebSocket carries any number of calls (HTTP would open a
  // connection per call and meet the per-address cap first).
  greedy = await wsClient(daemon, 'greedy');
  other = await httpClient(daemon, 'other');
});

after(async () => {
  await greedy?.close();
  await other?.close();
  await daemon?.stop();
});

async function create(client, screen = '320x240') {
  const created = await client.call('create_session', { template: 'bare', screen });
  assert.equal(created.isError, false, textOf(created));
  return JSON.parse(textOf(created)).session;
}

// Each session's calls sleep for a number of seconds of its own, which
// tells their processes apart on the host (each exec has a PID namespace
// of its own, inside the session's).
let nextMarker = 40000 + Math.floor(Math.random() * 9000) * 10;
const sleepsOf = (marker) => fs.readdirSync('/proc').filter((pid) => {
  try {
    return /^\d+$/.test(pid) && fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8') === `sleep\0${marker}\0`;
  } catch {
    return false;
  }
});

async function timed(promise) {
  const started = performance.now();
  const result = await promise;
  return { result, ms: performance.now() - started };
}

// The slowest of three answers.
async function slowest(call) {
  let most = 0;
  for (let i = 0; i < 3; i++) {
    const { result, ms } = await timed(call());
    assert.equal(result.isError, false, textOf(result));
    most = Math.max(most, ms);
  }
  return most;
}

for (const count of [8, 64]) {
  test(`${count} long calls in one session: another session answers, and kill_session stops them at once`, async (t) => {
    const busy = await create(greedy);
    const calm = await create(other);
    const marker = nextMarker++;
    const screenshot = () => other.call('screenshot', { session: calm });
    const info = () => other.call('session_info', { session: calm });
    const idle = Math.max(await slowest(screenshot), await slowest(info));

    const calls = Array.from({ length: count }, () =>
      greedy.call('exec', { session: busy, command: `exec sleep ${marker}`, timeout_ms: 60000 }));
    // The session's bound: four run, the rest wait their turn.
    assert.ok(await waitFor(() => sleepsOf(marker).length === 4), `${sleepsOf(marker).length} running`);
    const during = Math.max(await slowest(screenshot), await slowest(info));
    t.diagnostic(`slowest screenshot or session_info: idle ${idle.toFixed(1)} ms, busy ${during.toFixed(1)} ms`);
    assert.ok(during < idle + 100, `idle ${idle} ms, beside ${count} long calls ${during} ms`);
    assert.equal(sleepsOf(marker).length, 4, 'still four: no more started meanwhile');

    const killed = await timed(other.call('kill_session', { session: busy }));
    t.diagnostic(`kill_session of the busy session: ${killed.ms.toFixed(1)} ms`);
    assert.equal(killed.result.isError, false, textOf(killed.result));
    assert.ok(killed.ms < 1000, `kill_session took ${killed.ms} ms`);
    const settled = await timed(Promise.all(calls));
    t.diagnostic(`every call answered ${settled.ms.toFixed(1)} ms after the kill`);
    for (const r of settled.result) {
      assert.equal(r.isError, true, textOf(r));
      assert.match(textOf(r), /ended|no session/);
    }
    assert.ok(settled.ms < 2000, `the calls came back ${settled.ms} ms after the kill`);
    assert.deepEqual(sleepsOf(marker), []);
    await other.call('kill_session', { session: calm });
  });
}

test('one client\'s long calls in many sessions leave another client its own', async (t) => {
  const sessions = [await create(greedy), await create(greedy), await create(greedy)];
  const marker = nextMarker++;
  const mine = await create(other);
  const calls = sessions.flatMap((session) => Array.from({ length: 6 }, () =>
    greedy.call('exec', { session, command: `exec sleep ${marker}`, timeout_ms: 60000 })));
  const running = () => sleepsOf(marker).length;
  // The client's bound: eight of its eighteen run.
  assert.ok(await waitFor(() => running() === 8), `${running()} running`);
  const { result, ms } = await timed(other.call('exec', { session: mine, command: 'echo served' }));
  t.diagnostic(`another client's exec beside them: ${ms.toFixed(1)} ms`);
  assert.equal(result.structuredContent.stdout, 'served\n');
  assert.equal(running(), 8);
  for (const session of sessions) await other.call('kill_session', { session });
  for (const r of await Promise.all(calls)) assert.equal(r.isError, true);
  await other.call('kill_session', { session: mine });
});
