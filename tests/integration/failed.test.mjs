// SPDX-License-Identifier: MIT
// A local session whose desktop dies by itself (its X server or its
// sandbox's init killed: the OOM killer, a program, the host) goes to
// "failed" with the reason, and nothing of it stays running: not its
// processes, not bwrap, not its network helper. Running out of memory
// takes the programs before the desktop's own.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { waitFor } from '../lib/process.mjs';
import { startDaemon } from '../lib/bridge.mjs';
import { httpClient, textOf } from '../lib/mcp.mjs';
import { sandboxOf } from '../lib/sandbox.mjs';

let daemon, client;

before(async () => {
  daemon = await startDaemon({ args: ['--sizes', 'small=1:256M:512:1G'] });
  client = await httpClient(daemon);
});

after(async () => {
  await client?.close();
  await daemon?.stop();
});

async function create() {
  const created = await client.call('create_session', { template: 'bare', screen: '320x240', size: 'small' });
  assert.equal(created.isError, false, textOf(created));
  return JSON.parse(textOf(created)).session;
}

const info = async (session) => JSON.parse(textOf(await client.call('session_info', { session })));
const status = (pid) => { try { return fs.readFileSync(`/proc/${pid}/status`, 'utf8'); } catch { return ''; } };
const alive = (pid) => status(pid) !== '' && !/^State:\s+Z/m.test(status(pid));
const readLinkOr = (file) => { try { return fs.readlinkSync(file); } catch { return ''; } };
const readOr = (file, fallback) => { try { return fs.readFileSync(file, 'utf8'); } catch { return fallback; } };

// The host processes of a session: its sandbox's, the init (pid 1 inside),
// bwrap above it and slirp4netns, which names the init's namespaces (an
// ordinary daemon's) or holds a descriptor of its network namespace (a
// root daemon's, which made it).
async function hostProcesses(session) {
  const sandbox = await sandboxOf(client, session);
  const inside = sandbox.processes();
  const init = inside.find((pid) => /^NSpid:.*\t1$/m.test(status(pid)));
  assert.ok(init, `the init among ${inside}`);
  const bwrap = Number(/^PPid:\s+(\d+)$/m.exec(status(init))[1]);
  const network = fs.readlinkSync(`/proc/${init}/ns/net`);
  const holds = (pid) => { try { return fs.readdirSync(`/proc/${pid}/fd`).some((fd) => readLinkOr(`/proc/${pid}/fd/${fd}`) === network); } catch { return false; } };
  const helpers = fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p)).map(Number)
    .filter((pid) => readOr(`/proc/${pid}/comm`, '') === 'slirp4netns\n')
    .filter((pid) => readOr(`/proc/${pid}/cmdline`, '').includes(`/proc/${init}/ns/`) || holds(pid));
  assert.equal(helpers.length, 1, 'one network helper');
  const xvnc = inside.find((pid) => readOr(`/proc/${pid}/comm`, '') === 'Xvnc\n');
  return { sandbox, init, bwrap, helper: helpers[0], xvnc, all: () => [...sandbox.processes(), bwrap, helpers[0]] };
}

async function assertFailedAndGone(session, processes, reason) {
  assert.ok(await waitFor(async () => (await info(session)).state === 'failed'), 'the session failed');
  const described = await info(session);
  assert.match(described.reason, reason);
  assert.ok(await waitFor(() => processes.all().every((pid) => !alive(pid))),
    `still running: ${processes.all().filter(alive)}`);
  const shot = await client.call('screenshot', { session });
  assert.equal(shot.isError, true);
  const exec = await client.call('exec', { session, command: 'true' });
  assert.equal(exec.isError, true);
  assert.match(textOf(exec), reason);
  assert.equal((await client.call('kill_session', { session })).isError, false);
}

test('a session whose X server is killed is failed, and nothing of it runs on', async () => {
  const session = await create();
  const processes = await hostProcesses(session);
  await client.call('exec', { session, user: 'root', command: 'kill -9 $(pgrep -x Xvnc)' });
  await assertFailedAndGone(session, processes, /X server \(Xvnc\) was killed by signal 9/);
});

test('a session whose init is killed from the host is failed, and nothing of it runs on', async () => {
  const session = await create();
  const processes = await hostProcesses(session);
  process.kill(processes.init, 'SIGKILL');
  await assertFailedAndGone(session, processes, /init is gone|X server/);
});

test('out of memory, a program dies and the desktop stays', async () => {
  const session = await create();
  try {
    const processes = await hostProcesses(session);
    // Programs go first, the desktop's own next, the init last (never,
    // where the daemon may lower its score).
    const score = (pid) => Number(readOr(`/proc/${pid}/oom_score_adj`, 'NaN'));
    const program = Number((await client.call('exec', { session, command: 'cat /proc/self/oom_score_adj' })).structuredContent.stdout);
    assert.ok(score(processes.init) <= 0 && score(processes.init) < score(processes.xvnc) && score(processes.xvnc) < program,
      `init ${score(processes.init)}, Xvnc ${score(processes.xvnc)}, a program ${program}`);
    const hog = await client.call('exec', { session, command: 'python3 -c "b = bytearray(600 << 20); print(len(b))"' });
    assert.equal(hog.isError, false, textOf(hog));
    assert.notEqual(hog.structuredContent.exit_code, 0, JSON.stringify(hog.structuredContent));
    const after = await info(session);
    assert.equal(after.state, 'ready');
    assert.ok(after.resources.usage.oom_kills >= 1, JSON.stringify(after.resources.usage));
    assert.ok(alive(processes.xvnc), 'Xvnc lives');
    const shot = await client.call('screenshot', { session });
    assert.equal(shot.isError, false, textOf(shot));
  } finally {
    await client.call('kill_session', { session });
  }
});
