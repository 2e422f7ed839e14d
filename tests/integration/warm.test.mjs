// SPDX-License-Identifier: MIT
// Sandboxes started ahead (--warm-sandboxes, sandbox/pool.h): a plain
// session takes one that was already running when it was asked for; each
// is used once, fresh, with the session's envs; a change of the host's
// /etc made meanwhile reaches it; a session that asks for more starts its
// own; one that ends while it waits is replaced before anyone asks; one
// holding the last free uid is given back to a session that needs it, and
// a pool that cannot start one tries again less and less often; and
// stopping the daemon leaves none behind.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { startDaemon } from '../lib/bridge.mjs';
import { httpClient, strictCall, textOf } from '../lib/mcp.mjs';
import { descendants, sleep, waitFor } from '../lib/process.mjs';
import { processesInPidNamespace, sandboxOf } from '../lib/sandbox.mjs';

let daemon, client, call;
const host = fs.readlinkSync('/proc/self/ns/pid');

before(async () => {
  daemon = await startDaemon({ args: ['--warm-sandboxes', '1'] });
  client = await httpClient(daemon);
  call = strictCall(client);
});

after(async () => {
  await client?.close();
  await daemon?.stop();
});

// The PID namespaces of the daemon's sandboxes, as the host sees them.
function sandboxes() {
  const found = new Set();
  for (const pid of descendants(daemon.child.pid)) {
    try {
      const namespace = fs.readlinkSync(`/proc/${pid}/ns/pid`);
      if (namespace !== host) found.add(namespace);
    } catch {}
  }
  return found;
}

// The sandbox started ahead, once there is one beside the sessions'.
async function warm(sessions = []) {
  const taken = new Set(await Promise.all(sessions.map(async (s) => (await sandboxOf(client, s)).namespace)));
  const ready = await waitFor(() => [...sandboxes()].find((n) => !taken.has(n)) ?? null, { timeout: 15000 });
  assert.ok(ready, 'no sandbox was started ahead');
  return ready;
}

const run = async (session, command) => (await call('exec', { session, command })).stdout;

// A session made with args, and whether it runs in the sandbox that was
// started ahead. A change of the host's /etc meanwhile (another program's)
// throws that one away, and the daemon says so: then once more.
// The sandbox started ahead once the pool has it ready: its processes
// show before that, and the daemon says when.
async function readyAhead(sessions = []) {
  const count = (text) => daemon.log.split(text).length - 1;
  const ahead = await warm(sessions);
  const ready = await waitFor(() => count('started ahead is ready') >
    count('takes a sandbox started ahead') + count('another one starts'), { timeout: 15000 });
  assert.ok(ready, 'no sandbox started ahead became ready');
  return ahead;
}

async function takeAhead(args, sessions) {
  for (let attempt = 0; ; attempt++) {
    const ahead = await readyAhead(sessions);
    const said = daemon.log.length;
    const { session } = await call('create_session', { template: 'base', ...args });
    sessions.push(session);
    if ((await sandboxOf(client, session)).namespace === ahead) return { session, ahead };
    const stale = daemon.log.slice(said).includes('changed since a sandbox was started ahead');
    assert.ok(stale && attempt < 2, 'the session did not take the sandbox started ahead');
  }
}

test('a plain session takes the sandbox started ahead, fresh and with its envs; the next takes another', async () => {
  const sessions = [];
  try {
    const a = await takeAhead({ envs: { GREETING: 'hello' } }, sessions);
    assert.equal(await run(a.session, 'echo $GREETING; ls -A /workspace; echo mine | tee /workspace/mine /tmp/mine $HOME/mine'), 'hello\nmine\n');
    const b = await takeAhead({}, sessions);
    assert.notEqual(b.ahead, a.ahead);
    assert.equal(await run(b.session, 'echo "[$GREETING]"; ls -A /workspace; ls /tmp/mine $HOME/mine 2>/dev/null; echo end'), '[]\nend\n');
  } finally {
    for (const session of sessions) await call('kill_session', { session });
  }
});

test('a session without the network or with a size starts a sandbox of its own', async () => {
  const ahead = await warm();
  for (const args of [{ network: false }, { size: 'small' }]) {
    const created = await client.call('create_session', { template: 'base', ...args });
    if (created.isError && args.size) continue; // no cgroups here: sizes are refused, and said so elsewhere
    const session = JSON.parse(created.content[0].text).session;
    try {
      assert.notEqual((await sandboxOf(client, session)).namespace, ahead, JSON.stringify(args));
    } finally {
      await call('kill_session', { session });
    }
  }
});

test('a file the host adds to /etc after the sandbox was started ahead is in the session that takes it', async () => {
  await warm();
  const file = `/etc/lizard-warm-test-${process.pid}`;
  fs.writeFileSync(file, 'new on the host\n', { mode: 0o644 });
  try {
    const session = (await call('create_session', { template: 'base' })).session;
    try {
      assert.equal(await run(session, `cat ${file}`), 'new on the host\n');
    } finally {
      await call('kill_session', { session });
    }
  } finally {
    fs.rmSync(file, { force: true });
  }
});

test('a sandbox started ahead that ends while it waits is replaced before a session asks', async () => {
  // Ready, not still starting: a start that fails is another case.
  const ahead = await readyAhead();
  const said = daemon.log.length;
  for (const pid of processesInPidNamespace(ahead)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
  // No session asks meanwhile: the pool's own look finds it.
  const noticed = await waitFor(() => daemon.log.slice(said).includes('a sandbox started ahead has ended'), { timeout: 10000 });
  assert.ok(noticed, daemon.log.slice(said));
  const next = await waitFor(() => [...sandboxes()].find((n) => n !== ahead) ?? null, { timeout: 30000 });
  assert.ok(next, `no other sandbox was started ahead:\n${daemon.log.slice(said)}`);
  assert.equal(processesInPidNamespace(ahead).length, 0);
  const sessions = [];
  try {
    const { session } = await takeAhead({}, sessions);
    assert.equal(await run(session, 'echo alive'), 'alive\n');
  } finally {
    for (const session of sessions) await call('kill_session', { session });
  }
});

test('a sandbox started ahead holding the last free uid is given back to a session that needs it; the pool then backs off', async () => {
  // One uid of this run's own, far above any the machine gives out.
  const uid = 2100000000 + Math.floor(Math.random() * 40000) * 1000 + 500;
  const own = await startDaemon({ args: ['--warm-sandboxes', '1', '--uid-range', `${uid}:1`] });
  const count = (text) => own.log.split(text).length - 1;
  try {
    const ownClient = await httpClient(own);
    try {
      const ready = await waitFor(() => count('started ahead is ready') === 1, { timeout: 15000 });
      assert.ok(ready, own.log);
      // Not a plain session, so it starts its own sandbox, for which the
      // one started ahead holds the only uid.
      const created = await ownClient.call('create_session', { template: 'base', network: false });
      assert.equal(created.isError, false, `${textOf(created)}\n${own.log}`);
      assert.match(own.log, /a sandbox started ahead is given back/);
      const session = created.structuredContent.session;
      const r = await ownClient.call('exec', { session, command: 'echo started' });
      assert.equal(r.structuredContent.stdout, 'started\n');
      // Now the pool finds no uid: it says why and waits 1, 2, 4 s...
      const failed = await waitFor(() => count('a sandbox started ahead failed') >= 1, { timeout: 10000 });
      assert.ok(failed, own.log);
      assert.match(own.log, /a sandbox started ahead failed \(next try in 1 s\): no free host uid/);
      await sleep(3500);
      const tries = count('a sandbox started ahead failed');
      assert.ok(tries >= 2 && tries <= 3, `${tries} tries in about 3.5 s:\n${own.log}`);
      // The uid comes back with the session's end, and the pool gets it.
      await ownClient.call('kill_session', { session });
      const again = await waitFor(() => count('started ahead is ready') === 2, { timeout: 40000 });
      assert.ok(again, own.log);
    } finally {
      await ownClient.close();
    }
  } finally {
    await own.stop();
  }
});

test('stopping the daemon ends the sandbox started ahead', async () => {
  const ahead = await warm();
  assert.ok(processesInPidNamespace(ahead).length > 0);
  await client.close();
  client = null;
  await daemon.stop();
  daemon = null;
  const gone = await waitFor(() => processesInPidNamespace(ahead).length === 0, { timeout: 10000 });
  assert.ok(gone, `left: ${processesInPidNamespace(ahead)}`);
});
