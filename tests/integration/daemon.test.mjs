// SPDX-License-Identifier: MIT
// lizard-bridge serve: many sessions, two transports, the official SDK.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { waitFor, tempDir, sleep } from '../lib/process.mjs';
import { startDaemon } from '../lib/bridge.mjs';
import { httpClient, wsClient, textOf, imageOf } from '../lib/mcp.mjs';
import { startX11vnc } from '../lib/x11.mjs';
import { startTypingTarget, typedText } from '../lib/x11-apps.mjs';
import { decodePng } from '../lib/png.mjs';
import { sandboxOf, sandboxText } from '../lib/sandbox.mjs';

let daemon, x11vnc, work;

before(async () => {
  work = tempDir('lizard-daemon-test-');
  daemon = await startDaemon();
  x11vnc = await startX11vnc({ width: 800, height: 600 });
});

after(async () => {
  await daemon?.stop();
  await x11vnc?.stop();
  fs.rmSync(work, { recursive: true, force: true });
});

const json = (result) => { try { return JSON.parse(textOf(result)); } catch (e) { throw new Error(textOf(result)); } };

test('three sessions made at once, worked from two clients in parallel, stay isolated', async () => {
  const a = await httpClient(daemon, 'client-a');
  const b = await wsClient(daemon, 'client-b');
  try {
    const [one, two, three] = (await Promise.all([
      a.call('create_session', { template: 'desktop', size: '1024x768', metadata: { owner: 'a' } }),
      b.call('create_session', { template: 'desktop' }),
      a.call('create_session', { vnc: x11vnc.url, password: x11vnc.password }),
    ])).map((r) => {
      assert.equal(r.isError, false, textOf(r));
      return json(r);
    });
    assert.equal(one.size, '1024x768');
    assert.deepEqual(one.metadata, { owner: 'a' });
    assert.equal(two.size, '1280x800');
    assert.equal(three.template, 'vnc');
    assert.equal(three.size, '800x600');
    assert.match(three.vnc, /^127\.0\.0\.1:\d+$/, 'no password shown');
    const listed = json(await b.call('list_sessions')).sessions.map((s) => s.session).sort();
    assert.deepEqual(listed, [one.session, two.session, three.session].sort());

    // A terminal in each desktop, writing what it receives to a file: in
    // the sandbox for local sessions, on the host for the attached one.
    const files = ['typed.txt', 'typed.txt', path.join(work, `typed-${three.session}.txt`)];
    const terminal = (file) => `xterm -geometry 60x8+0+0 -u8 -e sh -c 'stty -echo -icanon; exec cat > ${file}'`;
    await a.call('launch', { session: one.session, command: terminal(files[0]) });
    await b.call('launch', { session: two.session, command: terminal(files[1]) });
    const remote = startTypingTarget(x11vnc.env, files[2], '60x8+0+0');
    const exists = async (client, session) => (await client.call('exec', { session, command: 'test -e typed.txt' })).structuredContent.exit_code === 0;
    assert.ok(await waitFor(async () => fs.existsSync(files[2]) && await exists(a, one.session) && await exists(b, two.session),
      { timeout: 20000 }), 'three terminals');
    const texts = ['alpha from client a\n', 'beta from client b\n', 'gamma on x11vnc\n'];
    await Promise.all([
      a.call('click', { session: one.session, x: 100, y: 60, screenshot: true })
        .then(() => a.call('type', { session: one.session, text: texts[0] })),
      b.call('click', { session: two.session, x: 100, y: 60, screenshot: true })
        .then(() => b.call('type', { session: two.session, text: texts[1] })),
      a.call('click', { session: three.session, x: 100, y: 60, screenshot: true })
        .then(() => a.call('type', { session: three.session, text: texts[2] })),
    ]);
    const got = [
      await sandboxText(a, one.session, files[0], texts[0].length),
      await sandboxText(b, two.session, files[1], texts[1].length),
      await typedText(files[2], texts[2].length),
    ];
    for (let i = 0; i < 3; i++) assert.equal(got[i], texts[i], `session ${i + 1} got only its own text`);
    await remote.stop();
    for (const s of [one, two, three]) await a.call('kill_session', { session: s.session });
    assert.deepEqual(json(await a.call('list_sessions')), { sessions: [] });
  } finally {
    // A failure above leaves no session for the next test to trip on.
    const left = await a.call('list_sessions').then(json).catch(() => ({ sessions: [] }));
    for (const s of left.sessions) await a.call('kill_session', { session: s.session }).catch(() => {});
    await a.close();
    await b.close();
  }
});

test('without a session argument, calls name the sessions to choose from', async () => {
  const a = await httpClient(daemon);
  try {
    const none = await a.call('screenshot');
    assert.equal(none.isError, true);
    assert.match(textOf(none), /there is no session; create one with create_session/);
    const s1 = json(await a.call('create_session', { template: 'bare', size: '320x240' }));
    const only = await a.call('screen_size');
    assert.deepEqual(json(only), { width: 320, height: 240 }, 'the only session is used');
    const s2 = json(await a.call('create_session', { template: 'bare', size: '320x240' }));
    const which = await a.call('screen_size');
    assert.equal(which.isError, true);
    assert.match(textOf(which), new RegExp(`there are 2 sessions; say which with "session": .*${s1.session}`));
    const unknown = await a.call('click', { session: 'nope', x: 1, y: 1 });
    assert.match(textOf(unknown), new RegExp(`no session 'nope'; the sessions are: .*${s2.session}`));
    await a.call('kill_session', { session: s1.session });
    await a.call('kill_session', { session: s2.session });
  } finally {
    await a.close();
  }
});

test('kill_session and the deadline leave no process of the session behind', async () => {
  const a = await httpClient(daemon);
  try {
    const killed = json(await a.call('create_session', { template: 'desktop', size: '640x480' }));
    const killedSandbox = await sandboxOf(a, killed.session);
    assert.ok(killedSandbox.processes().length >= 2, 'Xvnc and openbox run');
    await a.call('kill_session', { session: killed.session });
    assert.ok(await waitFor(() => killedSandbox.processes().length === 0), `left: ${killedSandbox.processes()}`);
    assert.ok(!fs.existsSync(killedSandbox.dir), 'its private files are gone');

    const expiring = json(await a.call('create_session', { template: 'desktop', size: '640x480', timeout_ms: 4000 }));
    assert.ok(expiring.remaining_ms <= 4000 && expiring.remaining_ms > 2000);
    const sandbox = await sandboxOf(a, expiring.session);
    assert.ok(sandbox.processes().length >= 2);
    assert.ok(await waitFor(() => sandbox.processes().length === 0, { timeout: 15000 }), 'gone at the deadline');
    const after = await a.call('session_info', { session: expiring.session });
    assert.equal(after.isError, true);
    assert.match(textOf(after), /no session/);
  } finally {
    await a.close();
  }
});

test('set_timeout moves the deadline; calls do not', async () => {
  const a = await httpClient(daemon);
  try {
    const s = json(await a.call('create_session', { template: 'bare', size: '320x240', timeout_ms: 0 }));
    assert.equal(s.deadline, null);
    const set = json(await a.call('set_timeout', { session: s.session, timeout_ms: 60000 }));
    assert.ok(set.remaining_ms > 50000 && set.remaining_ms <= 60000);
    await a.call('screenshot', { session: s.session });
    const info = json(await a.call('session_info', { session: s.session }));
    assert.ok(info.remaining_ms <= set.remaining_ms, 'a call did not extend it');
    const bad = await a.call('set_timeout', { session: s.session, timeout_ms: 10 });
    assert.match(textOf(bad), /'timeout_ms' is 10; it must be from 1000 to 2147483647/);
    await a.call('kill_session', { session: s.session });
  } finally {
    await a.close();
  }
});

test('killing a session ends a call running on it with a clear error', async () => {
  const a = await httpClient(daemon, 'waiter');
  const b = await wsClient(daemon, 'killer');
  try {
    const s = json(await a.call('create_session', { template: 'bare', size: '320x240' }));
    const waiting = a.call('wait', { session: s.session, ms: 30000 });
    await sleep(300);
    await b.call('kill_session', { session: s.session });
    const result = await waiting;
    assert.equal(result.isError, true);
    assert.match(textOf(result), new RegExp(`session ${s.session} has ended \\(killed by kill_session\\)`));
  } finally {
    await a.close();
    await b.close();
  }
});

test('a slow wait in one session does not hold up a screenshot of another', async () => {
  const a = await httpClient(daemon);
  const b = await httpClient(daemon);
  try {
    const s1 = json(await a.call('create_session', { template: 'bare', size: '320x240' }));
    const s2 = json(await a.call('create_session', { template: 'bare', size: '320x240' }));
    const order = [];
    const waiting = a.call('wait', { session: s1.session, ms: 3000 }).then(() => order.push('wait'));
    await sleep(100);
    await b.call('screenshot', { session: s2.session }).then(() => order.push('screenshot'));
    await waiting;
    assert.deepEqual(order, ['screenshot', 'wait']);
    await a.call('kill_session', { session: s1.session });
    await a.call('kill_session', { session: s2.session });
  } finally {
    await a.close();
    await b.close();
  }
});

test('an attached session reconnects when its server comes back', async () => {
  const server = await startX11vnc({ width: 640, height: 480, password: 'againpw1' });
  const a = await httpClient(daemon);
  try {
    const s = json(await a.call('create_session', { vnc: server.url, password: server.password }));
    assert.equal(s.state, 'ready');
    await server.stopVnc();
    const down = await waitFor(async () => json(await a.call('session_info', { session: s.session })).state === 'reconnecting');
    assert.ok(down, 'reported as reconnecting');
    const failing = await a.call('screenshot', { session: s.session });
    assert.equal(failing.isError, true);
    assert.match(textOf(failing), /reconnecting/);
    await server.startVnc();
    const back = await waitFor(async () => json(await a.call('session_info', { session: s.session })).state === 'ready', { timeout: 20000 });
    assert.ok(back, 'ready again');
    const shot = await a.call('screenshot', { session: s.session });
    assert.equal(decodePng(imageOf(shot).data).width, 640);
    await a.call('kill_session', { session: s.session });
  } finally {
    await a.close();
    await server.stop();
  }
});

test('when the daemon dies, even by SIGKILL, its desktops go with it', async () => {
  const doomed = await startDaemon();
  const a = await httpClient(doomed);
  const s = json(await a.call('create_session', { template: 'desktop', size: '640x480' }));
  const sandbox = await sandboxOf(a, s.session);
  await a.call('launch', { session: s.session, command: 'xterm -geometry 40x5+10+10' });
  assert.ok(await waitFor(() => sandbox.processes().length >= 4), 'bwrap, init, Xvnc, openbox and xterm run');
  await a.close().catch(() => {});
  doomed.child.kill('SIGKILL');
  await doomed.ended();
  assert.ok(await waitFor(() => sandbox.processes().length === 0, { timeout: 10000 }),
    `left behind: ${sandbox.processes()}`);
  // Its files go too, and the disk they were on: the daemon's janitor
  // outlives it to unmount and remove them.
  const mounted = () => fs.readFileSync('/proc/self/mountinfo', 'utf8').includes(` ${sandbox.dir} `);
  assert.ok(await waitFor(() => !fs.existsSync(sandbox.dir) && !mounted(), { timeout: 10000 }),
    `left behind: ${sandbox.dir}${mounted() ? ', mounted' : ''}`);
});

// scripts/soak.sh N runs the long version (N cycles, each with a viewer
// and calls in flight). Here: enough cycles that a leaked framebuffer
// (300 KiB a cycle) is far over the RSS bound; under the sanitizers, where
// LeakSanitizer finds leaked memory itself, enough to show a leaked
// descriptor.
test('100 create/kill cycles (40 under the sanitizers) leave descriptors and memory flat', async () => {
  const a = await httpClient(daemon);
  const sanitized = Boolean(process.env.ASAN_OPTIONS);
  const cycles = sanitized ? 40 : 100;
  try {
    const cycle = async () => {
      const s = json(await a.call('create_session', { template: 'bare', size: '320x240' }));
      await a.call('screenshot', { session: s.session });
      await a.call('kill_session', { session: s.session });
    };
    for (let i = 0; i < 20; i++) await cycle(); // allocator arenas settle
    const fds = daemon.fdCount();
    const rss = daemon.rssKiB();
    for (let i = 0; i < cycles; i++) await cycle();
    assert.ok(await waitFor(() => daemon.fdCount() <= fds), `descriptors ${fds} -> ${daemon.fdCount()}`);
    // A leaked framebuffer alone would be 300 KiB a cycle, 30 MiB in all.
    if (!sanitized) assert.ok(daemon.rssKiB() - rss < 16 * 1024, `RSS ${rss} -> ${daemon.rssKiB()} KiB`);
  } finally {
    await a.close();
  }
});
