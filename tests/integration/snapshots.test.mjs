// SPDX-License-Identifier: MIT
// A snapshot keeps a local session's files (its whole writable root, HOME,
// /tmp, /workspace): a package root installed with dpkg -i is there in a
// session restored from it and in a fork, and each goes on on its own.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { daemonWithData } from '../lib/bridge.mjs';
import { textOf } from '../lib/mcp.mjs';
import { BUILD_AND_INSTALL, PACKAGE } from '../lib/packages.mjs';
import { descendants, waitFor } from '../lib/process.mjs';

let bridge, client, dataDir, call;

before(async () => {
  assert.equal(process.getuid(), 0, 'snapshots need a writable root, which needs a root daemon, as the suite runs');
  bridge = await daemonWithData('lizard-snapshot-data-', ['--sizes', 'small=1:1G:512:256M']);
  ({ client, dataDir, call } = bridge);
});

after(async () => {
  await bridge?.close();
});

const exec = async (session, command, user = 'user') =>
  (await call('exec', { session, command, user, timeout_ms: 120000 }));
const kill = (session) => client.call('kill_session', { session });

test('a snapshot keeps a package root installed; a restored session and a fork have it, the host does not', async () => {
  const { session } = await call('create_session', { template: 'base', size: 'small', envs: { KEPT: 'env-kept' }, metadata: { who: 'test' } });
  const sessions = [session];
  try {
    const installed = await exec(session, BUILD_AND_INSTALL, 'root');
    assert.equal(installed.exit_code, 0, installed.stderr);
    assert.equal((await exec(session, `chmod u+s /usr/bin/${PACKAGE} && echo ok`, 'root')).stdout, 'ok\n');
    await exec(session, 'echo home-file > ~/note.txt');
    const snap = await call('snapshot_session', { session });
    assert.match(snap.snapshot, /^snap-[0-9a-f]{12}$/);
    assert.equal(snap.template, 'base');
    assert.equal(snap.session, session);
    assert.ok(snap.bytes > 0, JSON.stringify(snap));
    // The source goes on after its snapshot.
    assert.equal((await exec(session, 'echo after > ~/after.txt && cat ~/after.txt')).stdout, 'after\n');

    const restored = await call('create_session', { template: snap.snapshot, size: 'small' });
    sessions.push(restored.session);
    assert.equal(restored.template, 'base');
    assert.deepEqual(restored.metadata, { who: 'test' });
    const seen = await exec(restored.session, `${PACKAGE}; dpkg-query -W -f '\${Status}\\n' ${PACKAGE}; cat ~/note.txt; test -e ~/after.txt || echo no-after; echo $KEPT`);
    assert.equal(seen.stdout, 'installed-inside\ninstall ok installed\nhome-file\nno-after\nenv-kept\n');
    // Files of the system's other users came along as theirs, and the
    // set-user-id bit of a program root changed stayed.
    const owners = await exec(restored.session, `stat -c %U:%G:%A /var/cache/${PACKAGE} /usr/bin/${PACKAGE}`, 'root');
    assert.equal(owners.stdout, 'man:man:drwxr-xr-x\nroot:root:-rwsr-xr-x\n', owners.stderr);
    // Root inside the restored session still owns the system: dpkg works on.
    const removed = await exec(restored.session, `dpkg -r ${PACKAGE} >/dev/null && test ! -e /usr/bin/${PACKAGE} && echo removed`, 'root');
    assert.equal(removed.stdout, 'removed\n', removed.stderr);
    assert.equal(fs.existsSync(`/usr/bin/${PACKAGE}`), false);

    const listed = await call('list_snapshots', {});
    assert.ok(listed.snapshots.some((s) => s.snapshot === snap.snapshot), JSON.stringify(listed));
    assert.ok(listed.bytes >= snap.bytes);
    const deleted = await call('delete_snapshot', { snapshot: snap.snapshot });
    assert.equal(deleted.deleted, true);
    assert.equal((await call('list_snapshots', {})).snapshots.some((s) => s.snapshot === snap.snapshot), false);
    // The restored session holds a copy: it goes on without the snapshot.
    assert.equal((await exec(restored.session, 'cat ~/note.txt')).stdout, 'home-file\n');
    const gone = await client.call('create_session', { template: snap.snapshot });
    assert.equal(gone.isError, true);
    assert.match(textOf(gone), /there is no snapshot/);
  } finally {
    for (const s of sessions) await kill(s);
  }
});

test('a fork starts from the session\'s files and then goes on on its own', async () => {
  const { session } = await call('create_session', { template: 'base', size: 'small' });
  const sessions = [session];
  try {
    assert.equal((await exec(session, BUILD_AND_INSTALL, 'root')).exit_code, 0);
    await exec(session, 'echo before > /workspace/before.txt');
    const fork = await call('fork_session', { session });
    sessions.push(fork.session);
    assert.notEqual(fork.session, session);
    assert.equal((await exec(fork.session, `${PACKAGE}; cat /workspace/before.txt`)).stdout, 'installed-inside\nbefore\n');
    await exec(session, 'echo only-source > /workspace/source.txt');
    await exec(fork.session, 'echo only-fork > /workspace/fork.txt', 'root');
    assert.equal((await exec(session, 'ls /workspace')).stdout, 'before.txt\nsource.txt\n');
    assert.equal((await exec(fork.session, 'ls /workspace')).stdout, 'before.txt\nfork.txt\n');
  } finally {
    for (const s of sessions) await kill(s);
  }
});

test('a session with a volume cannot be forked', async () => {
  const name = `snapvol-${process.pid}`;
  await call('create_volume', { name, size: 'unlimited' });
  const { session } = await call('create_session', { template: 'base', volume: name });
  try {
    const r = await client.call('fork_session', { session });
    assert.equal(r.isError, true);
    assert.match(textOf(r), /cannot be forked/);
  } finally {
    await kill(session);
    await client.call('delete_volume', { name });
  }
});

test('links a session plants are kept as links: a snapshot copies none of the host files they name', async () => {
  const { session } = await call('create_session', { template: 'base', size: 'small' });
  let snapshot;
  try {
    await exec(session, 'ln -s /root ~/root-link && ln -s /etc/shadow /tmp/shadow-link && ln -s / /workspace/slash');
    snapshot = (await call('snapshot_session', { session })).snapshot;
  } finally {
    await kill(session);
  }
  const dir = path.join(dataDir, 'snapshots', snapshot);
  for (const [part, name, target] of [['home', 'root-link', '/root'], ['tmp', 'shadow-link', '/etc/shadow'], ['workspace', 'slash', '/']]) {
    const file = path.join(dir, part, name);
    assert.equal(fs.lstatSync(file).isSymbolicLink(), true, file);
    assert.equal(fs.readlinkSync(file), target);
  }
  const restored = (await call('create_session', { template: snapshot })).session;
  try {
    assert.equal((await exec(restored, 'readlink ~/root-link /tmp/shadow-link; cut -d: -f2 /tmp/shadow-link | sort -u', 'root')).stdout, '/root\n/etc/shadow\n*\n');
  } finally {
    await kill(restored);
    await call('delete_snapshot', { snapshot });
  }
});

test('a restore that fails once bubblewrap is started leaves nothing of it running, and the daemon goes on', async () => {
  const { session } = await call('create_session', { template: 'base' });
  let snapshot;
  try {
    snapshot = (await call('snapshot_session', { session })).snapshot;
  } finally {
    await kill(session);
  }
  const before = new Set(descendants(bridge.daemon.child.pid));
  // Damaged behind the daemon's back: the restore fails while bubblewrap,
  // started ahead of it, waits for its command line.
  fs.rmSync(path.join(dataDir, 'snapshots', snapshot, 'uid'));
  try {
    const r = await client.call('create_session', { template: snapshot });
    assert.equal(r.isError, true);
    assert.match(textOf(r), /cannot read .*\/uid/);
    const left = await waitFor(() => {
      const now = descendants(bridge.daemon.child.pid).filter((pid) => !before.has(pid));
      return now.length === 0 ? true : null;
    }, { timeout: 10000 });
    assert.ok(left, `left running: ${descendants(bridge.daemon.child.pid).filter((pid) => !before.has(pid))}`);
    const next = (await call('create_session', { template: 'base' })).session;
    try {
      assert.equal((await exec(next, 'echo on')).stdout, 'on\n');
    } finally {
      await kill(next);
    }
  } finally {
    await call('delete_snapshot', { snapshot });
  }
});
