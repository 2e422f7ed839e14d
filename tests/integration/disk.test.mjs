// SPDX-License-Identifier: MIT
// Every size has a disk limit: HOME, /tmp and /workspace of a session live
// on a filesystem of that size, and a volume with a size on one of its own.
// Writes past it fail inside with ENOSPC; the host's disk pays no more than
// the limit, and the session, the bridge and other sessions carry on.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { waitFor } from '../lib/process.mjs';
import { execFileSync } from 'node:child_process';
import { daemonWithData, startDaemon } from '../lib/bridge.mjs';
import { httpClient, textOf } from '../lib/mcp.mjs';
import { janitorOf, sandboxOf } from '../lib/sandbox.mjs';

const MIB = 1 << 20;
const LIMIT = 64 * MIB;
let bridge, client, dataDir;

before(async () => {
  assert.equal(process.getuid(), 0, 'disks need a root daemon, as the suite runs');
  bridge = await daemonWithData('lizard-disk-data-', ['--sizes', 'small=1:1G:512:64M']);
  ({ client, dataDir } = bridge);
});

after(async () => {
  await bridge?.close();
});

async function create(args) {
  const created = await client.call('create_session', { template: 'bare', screen: '320x240', ...args });
  assert.equal(created.isError, false, textOf(created));
  return JSON.parse(textOf(created)).session;
}

async function exec(session, command) {
  const r = await client.call('exec', { session, command, timeout_ms: 120000 });
  assert.equal(r.isError, false, textOf(r));
  return r.structuredContent;
}

const info = async (session) => JSON.parse(textOf(await client.call('session_info', { session })));
const allocated = (file) => fs.statSync(file).blocks * 512;
const hostFree = (dir) => { const s = fs.statfsSync(dir); return s.bavail * s.bsize; };

// Writes 200 MiB into dir inside and checks that it stopped at the limit,
// and what the host paid for it (image: the file that holds the disk).
async function fillStopsAtTheLimit(session, dir, image) {
  const freeBefore = hostFree(path.dirname(image));
  const r = await exec(session, `dd if=/dev/zero of=${dir}/fill bs=1M count=200 2>&1; echo "exit $?"; stat -c %s ${dir}/fill`);
  const [said, exit, size] = [r.stdout, /exit (\d+)/.exec(r.stdout)[1], Number(r.stdout.trim().split('\n').pop())];
  assert.notEqual(exit, '0', said);
  assert.match(said, /No space left on device/);
  assert.ok(size > 32 * MIB && size <= LIMIT, `${dir}: ${size} bytes written`);
  assert.ok(allocated(image) <= LIMIT, `the image holds ${allocated(image)} bytes`);
  const shrank = freeBefore - hostFree(path.dirname(image));
  assert.ok(shrank <= LIMIT + 4 * MIB, `${dir}: the host's free space shrank by ${shrank} bytes`);
  // Freed inside, freed on the host: discard punches the image's holes
  // (with a journal, once the transaction that freed them commits).
  await exec(session, `rm ${dir}/fill && sync`);
  assert.ok(await waitFor(() => allocated(image) < 16 * MIB), `after rm the image holds ${allocated(image)} bytes`);
}

test('HOME, /tmp and /workspace stop at the size\'s disk limit, and the session carries on', async () => {
  const session = await create({ size: 'small' });
  const other = await create({ size: 'small' });
  try {
    const described = await info(session);
    assert.equal(described.resources.limits.disk_bytes, LIMIT);
    const image = path.join(path.dirname((await sandboxOf(client, session)).dir), 'disk.img');
    assert.ok(fs.statSync(image).isFile(), image);
    assert.equal(fs.statSync(image).size, LIMIT);
    for (const dir of ['/home/user', '/tmp', '/workspace']) await fillStopsAtTheLimit(session, dir, image);
    // /tmp is disk now, not memory: filling it killed nothing.
    const after = await info(session);
    assert.equal(after.state, 'ready');
    assert.equal(after.resources.usage.oom_kills, 0);
    assert.ok(after.resources.usage.disk_bytes < 16 * MIB, JSON.stringify(after.resources.usage));
    assert.equal((await exec(session, 'echo still here > ~/note && cat ~/note')).stdout, 'still here\n');
    const shot = await client.call('screenshot', { session });
    assert.equal(shot.isError, false, textOf(shot));
    // The other session's disk is its own.
    assert.equal((await exec(other, 'head -c 10485760 /dev/zero > /tmp/ten && stat -c %s /tmp/ten')).stdout, '10485760\n');
  } finally {
    await client.call('kill_session', { session });
    await client.call('kill_session', { session: other });
  }
});

// A root daemon's session on the host's system directories takes the
// spare with its root, ids and namespaces made in it ahead (root_ahead.h).
test('the next session of a size takes a disk formatted ahead, of a few hundred KiB on the host, with its root made in it', async () => {
  const first = await create({ size: 'small' });
  let second;
  try {
    const privateDir = path.dirname((await sandboxOf(client, first)).dir);
    const spare = path.join(path.dirname(privateDir), `spare-${LIMIT}-root.img`);
    assert.ok(await waitFor(() => fs.existsSync(spare)), `${spare} was not made`);
    const { ino, size } = fs.statSync(spare);
    assert.equal(size, LIMIT);
    assert.ok(allocated(spare) < MIB, `the spare holds ${allocated(spare)} bytes`);
    second = await create({ size: 'small' });
    const image = path.join(path.dirname((await sandboxOf(client, second)).dir), 'disk.img');
    assert.equal(fs.statSync(image).ino, ino, 'the second session made a disk of its own');
    assert.equal((await exec(second, 'echo on the spare > ~/note && cat ~/note')).stdout, 'on the spare\n');
    // Its root is writable by its own root, owned by its own ids, and not
    // the host's or the first session's.
    const probe = `/usr/lib/lizard-ahead-${process.pid}`;
    const asRoot = async (session, command) => {
      const r = await client.call('exec', { session, user: 'root', command });
      assert.equal(r.isError, false, textOf(r));
      return r.structuredContent;
    };
    const wrote = await asRoot(second, `touch ${probe} && stat -c %u:%g ${probe} && stat -c %U /usr/bin/env`);
    assert.equal(wrote.stdout, '0:0\nroot\n', wrote.stderr);
    assert.equal(fs.existsSync(probe), false, 'the host sees the file');
    assert.equal((await asRoot(first, `test -e ${probe}; echo $?`)).stdout, '1\n', 'the first session sees the file');
    const hostIds = async (session) => (await asRoot(session, 'cat /proc/self/uid_map')).stdout.trim().split(/\s+/)[1];
    assert.notEqual(await hostIds(first), await hostIds(second), 'the two sessions share their ids');
    // And the next spare is made for the session after.
    assert.ok(await waitFor(() => fs.existsSync(spare) && fs.statSync(spare).ino !== ino), 'no next spare');
  } finally {
    await client.call('kill_session', { session: first });
    if (second) await client.call('kill_session', { session: second });
  }
});

// A session whose root leaves nothing in the daemon's directory (the host's
// root read-only here; a Debian release's template alike) empties it when it
// ends, and the directory went then, under the thread about to make the next
// spare: every later start formatted a disk of its own.
test('the last session to end leaves the spare being made for the next', async () => {
  const own = await startDaemon({ args: ['--sizes', 'small=1:1G:512:64M', '--data-dir', dataDir], env: { LIZARD_BENCH_READ_ONLY_ROOT: '1' } });
  const ownClient = await httpClient(own);
  try {
    const created = await ownClient.call('create_session', { template: 'base', size: 'small' });
    assert.equal(created.isError, false, textOf(created));
    const { session } = created.structuredContent;
    const daemonDir = path.dirname(path.dirname((await sandboxOf(ownClient, session)).dir));
    await ownClient.call('kill_session', { session });
    const spare = path.join(daemonDir, `spare-${LIMIT}.img`);
    assert.ok(await waitFor(() => fs.existsSync(spare)), `${spare} was not made after the last session ended`);
    const { ino } = fs.statSync(spare);
    const next = await ownClient.call('create_session', { template: 'base', size: 'small' });
    assert.equal(next.isError, false, textOf(next));
    const image = path.join(path.dirname((await sandboxOf(ownClient, next.structuredContent.session)).dir), 'disk.img');
    assert.equal(fs.statSync(image).ino, ino, 'the next session made a disk of its own');
    await ownClient.call('kill_session', { session: next.structuredContent.session });
  } finally {
    await ownClient.close().catch(() => {});
    await own.stop();
  }
});

// The loop devices whose image is the file of inode ino.
const loopsOf = (ino) => JSON.parse(execFileSync('losetup', ['--list', '--json', '-O', 'NAME,BACK-INO'], { encoding: 'utf8' }) || '{"loopdevices":[]}')
  .loopdevices.filter((d) => Number(d['back-ino']) === ino).map((d) => d.name);

test('a spare disk is mounted ahead but nowhere, and a SIGKILLed bridge leaves neither its mount nor its loop device', async () => {
  const killed = await startDaemon({ args: ['--sizes', 'small=1:1G:512:64M', '--data-dir', dataDir] });
  const own = await httpClient(killed);
  try {
    const created = await own.call('create_session', { template: 'bare', screen: '320x240', size: 'small' });
    assert.equal(created.isError, false, textOf(created));
    const privateDir = path.dirname((await sandboxOf(own, created.structuredContent.session)).dir);
    const spare = path.join(path.dirname(privateDir), `spare-${LIMIT}-root.img`);
    assert.ok(await waitFor(() => fs.existsSync(spare)), `${spare} was not made`);
    const { ino } = fs.statSync(spare);
    // A loop device holds it (its mount is ready), but no mount table
    // shows it: the mount is detached until a session takes it.
    assert.ok(await waitFor(() => loopsOf(ino).length === 1), 'no loop device holds the spare');
    const [loop] = loopsOf(ino);
    const mounted = fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p)).some((p) => {
      try {
        return fs.readFileSync(`/proc/${p}/mountinfo`, 'utf8').split('\n').some((l) => l.split(' - ')[1]?.split(' ')[1] === loop);
      } catch {
        return false;
      }
    });
    assert.equal(mounted, false, `${loop} is mounted somewhere`);
    const janitor = janitorOf(killed.child.pid);
    assert.ok(janitor, 'the bridge has a janitor');
    process.kill(janitor, 'SIGKILL');
    process.kill(killed.child.pid, 'SIGKILL');
    await killed.ended();
    // The detached mount went with the process's descriptors, and the
    // loop device with its last user.
    assert.ok(await waitFor(() => loopsOf(ino).length === 0, { timeout: 10000 }), `${loopsOf(ino)} still holds the spare`);
  } finally {
    await own.close().catch(() => {});
    await killed.stop().catch(() => {});
    // The next bridge clears what the killed one left (its sessions' disks).
    const next = await startDaemon({ args: ['--data-dir', dataDir] });
    await next.stop();
  }
});

test('a volume with a size stops there, keeps its files, and goes with delete_volume', async () => {
  const name = `sized-${process.pid}`;
  const created = await client.call('create_volume', { name, size: '64M' });
  assert.equal(created.isError, false, textOf(created));
  assert.deepEqual(created.structuredContent, { name, limit_bytes: LIMIT });
  const image = path.join(dataDir, 'volumes', '.images', name);
  let session;
  try {
    session = await create({ size: 'small', volume: name });
    await fillStopsAtTheLimit(session, '/workspace', image);
    await exec(session, 'echo kept > /workspace/kept.txt');
    await client.call('kill_session', { session });
    const listed = JSON.parse(textOf(await client.call('list_volumes', {}))).volumes.find((v) => v.name === name);
    assert.equal(listed.limit_bytes, LIMIT);
    assert.equal(listed.session, null);
    // The next session mounts it again (after the last one's mount is gone).
    session = await create({ size: 'small', volume: name });
    assert.equal((await exec(session, 'cat /workspace/kept.txt; stat -c %U /workspace/kept.txt')).stdout, 'kept\nuser\n');
    await client.call('kill_session', { session });
  } finally {
    if (session) await client.call('kill_session', { session });
  }
  const deleted = await client.call('delete_volume', { name });
  assert.equal(deleted.isError, false, textOf(deleted));
  assert.equal(fs.existsSync(image), false);
});

test('volume sizes are checked, and "unlimited" is a plain directory', async () => {
  for (const size of ['1M', 'lots', '17T']) {
    const r = await client.call('create_volume', { name: `bad-${process.pid}`, size });
    assert.equal(r.isError, true, size);
    assert.match(textOf(r), /is not a size from 64M to 16T/);
  }
  const name = `plain-${process.pid}`;
  const r = await client.call('create_volume', { name, size: 'unlimited' });
  assert.deepEqual(r.structuredContent, { name, limit_bytes: null });
  assert.ok(fs.statSync(path.join(dataDir, 'volumes', name)).isDirectory());
  await client.call('delete_volume', { name });
});
