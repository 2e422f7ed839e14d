// SPDX-License-Identifier: MIT
// VNC servers that misbehave on purpose (tests/fake-rfb), attached to a
// running daemon next to a well-behaved real Xvnc. For every mode: /healthz
// keeps answering within 100 ms, calls on the broken session fail with a
// message that says what happened within a stated time, the Xvnc session
// keeps working, SIGTERM ends the daemon within 2 s, and nothing reaches
// the sanitizers' reports (when the suite runs under a sanitizer build).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { startProcess, tempDir, waitFor, sleep } from '../lib/process.mjs';
import { bridgeBin, bridgeEnv, startDaemon } from '../lib/bridge.mjs';
import { httpClient, textOf } from '../lib/mcp.mjs';
import { startXvnc } from '../lib/x11.mjs';

const fakeRfbBin = process.env.LIZARD_FAKE_RFB || path.join(path.dirname(bridgeBin), 'tests', 'fake-rfb');

let xvnc;

before(async () => {
  xvnc = await startXvnc({ width: 640, height: 480 });
});

after(async () => {
  await xvnc?.stop();
});

async function startFake(mode, extra = []) {
  const dir = tempDir('lizard-test-fake-rfb-');
  const socket = path.join(dir, 'rfb.sock');
  const child = startProcess(fakeRfbBin, ['--listen', socket, '--mode', mode, ...extra], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const ready = await waitFor(() => out.includes('ready'), { timeout: 5000 });
  assert.ok(ready, `fake-rfb ${mode} did not start`);
  return {
    url: `unix://${socket}`,
    async stop() {
      await child.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

// One GET /healthz: its status and how long it took.
function healthzOnce(daemon) {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const req = http.get(new URL('/healthz', daemon.url), (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, ms: Date.now() - started }));
    });
    req.setTimeout(2000, () => req.destroy(new Error('/healthz did not answer in 2 s')));
    req.on('error', reject);
  });
}

// /healthz answers within 100 ms. A loaded machine can delay any one
// request, so three tries are allowed; a wedged network loop fails all.
async function assertHealthy(daemon, when) {
  const tries = [];
  for (let i = 0; i < 3; i++) {
    const r = await healthzOnce(daemon);
    assert.equal(r.status, 200);
    tries.push(r.ms);
    if (r.ms < 100) return;
  }
  assert.fail(`/healthz took ${tries.join(', ')} ms ${when}`);
}

// Runs promise while probing /healthz every 200 ms until it settles.
async function whileHealthy(daemon, promise, when) {
  let done = false;
  const settled = promise.finally(() => (done = true));
  settled.catch(() => {}); // a failed probe must not leave it unhandled
  while (!done) {
    await assertHealthy(daemon, when);
    await Promise.race([settled.catch(() => {}), sleep(200)]);
  }
  return settled;
}

const json = (result) => JSON.parse(textOf(result));

async function timed(promise) {
  const started = Date.now();
  const value = await promise;
  return { value, ms: Date.now() - started };
}

// The well-behaved session still answers: a screenshot and a click, each
// within 5 s.
async function assertOtherSessionWorks(client, session) {
  const shot = await timed(client.call('screenshot', { session }));
  assert.ok(!shot.value.isError, textOf(shot.value));
  assert.ok(shot.ms < 5000, `screenshot on the Xvnc session took ${shot.ms} ms`);
  const click = await timed(client.call('click', { session, x: 10, y: 10 }));
  assert.ok(!click.value.isError, textOf(click.value));
  assert.ok(click.ms < 5000, `click on the Xvnc session took ${click.ms} ms`);
}

// SIGTERM ends the daemon within 2 s, cleanly, with no sanitizer report.
async function assertStopsQuickly(daemon) {
  const started = Date.now();
  daemon.child.kill('SIGTERM');
  const exit = await Promise.race([daemon.exited, sleep(2000).then(() => null)]);
  const ms = Date.now() - started;
  if (!exit) daemon.child.kill('SIGKILL');
  assert.ok(exit, `the daemon was still running 2 s after SIGTERM\n${daemon.log.slice(-2000)}`);
  assert.deepEqual(exit, { code: 0, signal: null }, daemon.log.slice(-3000));
  assert.doesNotMatch(daemon.log, /AddressSanitizer|LeakSanitizer|runtime error:/, 'sanitizer report');
  return ms;
}

// A daemon with the Xvnc session and a session on fake-rfb in mode; body
// gets them and misbehaves; then the common checks run.
async function withFake(mode, body, { fakeArgs = [], expectCreateFailure = null } = {}) {
  const fake = await startFake(mode, fakeArgs);
  const daemon = await startDaemon();
  const client = await httpClient(daemon, `fake-rfb-${mode}`);
  try {
    const good = json(await client.call('create_session', { vnc: xvnc.url })).session;
    const created = await timed(client.call('create_session', { vnc: fake.url }));
    if (expectCreateFailure) {
      assert.equal(created.value.isError, true, textOf(created.value));
      assert.match(textOf(created.value), expectCreateFailure);
      assert.ok(created.ms < 12000, `create_session took ${created.ms} ms to fail`);
    } else {
      assert.ok(!created.value.isError, textOf(created.value));
      await body(client, json(created.value).session, daemon);
    }
    await assertHealthy(daemon, `after ${mode}`);
    await assertOtherSessionWorks(client, good);
    await client.close().catch(() => {});
    // The fake still misbehaves while the daemon stops.
    await assertStopsQuickly(daemon);
  } finally {
    await client.close().catch(() => {});
    await daemon.stop();
    await fake.stop();
  }
}

// session_info of a session, as an object.
async function info(client, session) {
  return json(await client.call('session_info', { session }));
}

test('a server that stops reading: the stalled send fails within 9 s and says why', async () => {
  await withFake('stop-reading', async (client, session, daemon) => {
    // Far more than the socket buffers hold: the send backs up.
    const typing = timed(client.call('type', { session, text: 'a'.repeat(60000) }));
    const { value, ms } = await whileHealthy(daemon, typing, 'while the send was stalled');
    assert.equal(value.isError, true, textOf(value));
    assert.match(textOf(value), /took none of the bridge's messages for 5 s/);
    assert.ok(ms < 9000, `the stalled type call took ${ms} ms to fail`);
  });
});

test('a server that stops in the middle of an update: input fails within 12 s and says why', async () => {
  await withFake('stall-update', async (client, session, daemon) => {
    await sleep(800); // the fake stalls 300 ms after connecting
    const clicking = timed(client.call('click', { session, x: 5, y: 5 }));
    const { value, ms } = await whileHealthy(daemon, clicking, 'while the update was stalled');
    assert.equal(value.isError, true, textOf(value));
    assert.match(textOf(value), /stopped in the middle of a message for 5 s/);
    assert.ok(ms < 12000, `the click took ${ms} ms to fail`);
  });
});

test('a server that closes in the middle of an update: the session says it lost the server', async () => {
  await withFake('close-update', async (client, session, daemon) => {
    const seen = await waitFor(async () => {
      await assertHealthy(daemon, 'while the server kept dropping');
      const i = await info(client, session);
      return i.state === 'reconnecting' && /closed the connection/.test(i.reason) ? i : null;
    }, { timeout: 10000, interval: 100 });
    assert.ok(seen, 'the session never reported the closed connection');
  });
});

test('a server that floods updates: the session keeps working', async () => {
  await withFake('flood', async (client, session, daemon) => {
    for (let i = 0; i < 5; i++) {
      const shot = await timed(client.call('screenshot', { session, format: i % 2 ? 'jpeg' : 'png' }));
      assert.ok(!shot.value.isError, textOf(shot.value));
      assert.ok(shot.ms < 5000, `screenshot took ${shot.ms} ms`);
      const click = await timed(client.call('click', { session, x: 20 + i, y: 20 }));
      assert.ok(!click.value.isError, textOf(click.value));
      assert.ok(click.ms < 5000, `click took ${click.ms} ms`);
      await assertHealthy(daemon, 'during the flood');
    }
  });
});

test('a server announcing 16384x16384 is refused with the limit in the message', async () => {
  await withFake('huge', null, { expectCreateFailure: /16384x16384.*8192x8192/ });
});

test('a server resizing during captures: every screenshot is an image or a clear error', async () => {
  await withFake('resize', async (client, session, daemon) => {
    let images = 0;
    for (let i = 0; i < 30; i++) {
      const args = [{}, { format: 'jpeg' }, { region: [10, 10, 300, 200] }][i % 3];
      const r = await client.call('screenshot', { session, ...args });
      if (r.isError) assert.match(textOf(r), /not inside the .* screen|no picture yet|not connected|reconnecting/);
      else images++;
      if (i % 10 === 0) await assertHealthy(daemon, 'while resizing');
    }
    assert.ok(images > 0, 'no screenshot succeeded while the screen resized');
  });
});

test('a server resizing to 16384x16384 mid-session: the session fails over with the limit in the reason', async () => {
  await withFake('resize-huge', async (client, session, daemon) => {
    const seen = await waitFor(async () => {
      await assertHealthy(daemon, 'after the huge resize');
      const i = await info(client, session);
      return i.state === 'reconnecting' && /16384x16384.*8192x8192/.test(i.reason) ? i : null;
    }, { timeout: 10000, interval: 100 });
    assert.ok(seen, 'the session never reported the refused size');
  });
});

for (const [label, length] of [['2^31', 2 ** 31], ['100 MB', 100 * 1024 * 1024]]) {
  test(`a server sending ${label} of cut text: refused, and the session says why`, async () => {
    await withFake('cut-text', async (client, session, daemon) => {
      const seen = await waitFor(async () => {
        await assertHealthy(daemon, 'after the cut text');
        const i = await info(client, session);
        return i.state === 'reconnecting' && /refuses.*cut text/i.test(i.reason) ? i : null;
      }, { timeout: 10000, interval: 100 });
      assert.ok(seen, 'the session never reported the refused cut text');
      const clip = await client.call('clipboard_get', { session });
      assert.ok(!textOf(clip).includes('xxxxxxxx'), 'junk reached the clipboard');
    }, { fakeArgs: ['--cut-length', String(length)] });
  });
}

// stdio with its only session's send stuck: how it ends must not depend
// on the peer. limitMs: how long after end() it may take.
async function stdioStuckOnSend(end, limitMs) {
  const fake = await startFake('stop-reading');
  const child = spawn(bridgeBin, ['stdio', '--vnc', fake.url], { env: bridgeEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
  let log = '';
  child.stderr.on('data', (d) => (log += d));
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  try {
    const send = (m) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`);
    send({ id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    assert.ok(await waitFor(() => out.includes('"id":1')), `no initialize reply: ${log}`);
    send({ method: 'notifications/initialized' });
    send({ id: 2, method: 'tools/call', params: { name: 'type', arguments: { text: 'a'.repeat(60000) } } });
    await sleep(1500); // the socket buffers are full by now
    assert.ok(!out.includes('"id":2'), 'the type call finished although the server reads nothing');
    const started = Date.now();
    end(child);
    const exit = await Promise.race([exited, sleep(limitMs).then(() => null)]);
    if (!exit) child.kill('SIGKILL');
    assert.ok(exit, `still running ${limitMs} ms after ${end.name}\n${log.slice(-2000)}`);
    assert.equal(exit.code, 0, log.slice(-3000));
    assert.doesNotMatch(log, /AddressSanitizer|LeakSanitizer|runtime error:/, 'sanitizer report');
    return out;
  } finally {
    child.kill('SIGKILL');
    await fake.stop();
  }
}

// After EOF the bridge gives what it read 1.2 s to finish, stops what is
// still running and exits: within 2 s of EOF, whatever the server does. A
// call stuck in a send may not get to answer; one that does is an error.
test('stdio: after stdin EOF with a send stuck, the process ends within 2 s', async () => {
  const out = await stdioStuckOnSend(function eof(child) {
    child.stdin.end();
  }, 2500);
  const reply = out.split('\n').filter(Boolean).map((l) => JSON.parse(l)).find((m) => m.id === 2);
  if (reply) assert.equal(reply.result.isError, true);
});

test('stdio: SIGTERM ends the process within 2 s while a send is stuck', async () => {
  await stdioStuckOnSend(function sigterm(child) {
    child.kill('SIGTERM');
  }, 2000);
});
