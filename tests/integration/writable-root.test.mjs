// SPDX-License-Identifier: MIT
// Every local session's whole root is writable: root inside installs a
// package with dpkg into /usr and the package database, and the change is
// the session's alone. The host and other sessions never see it, and what
// the root holds counts against the session's disk limit.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { daemonWithData, startDaemon } from '../lib/bridge.mjs';
import { httpClient, textOf } from '../lib/mcp.mjs';
import { janitorOf, sandboxOf } from '../lib/sandbox.mjs';
import { BUILD_AND_INSTALL, PACKAGE } from '../lib/packages.mjs';

const MIB = 1 << 20;
const LIMIT = 64 * MIB;
let bridge, client, dataDir;

before(async () => {
  assert.equal(process.getuid(), 0, 'a writable root needs a root daemon, as the suite runs');
  bridge = await daemonWithData('lizard-root-data-', ['--sizes', 'small=1:1G:512:64M']);
  ({ client, dataDir } = bridge);
});

after(async () => {
  await bridge?.close();
});

async function create(args = {}) {
  const created = await client.call('create_session', { template: 'base', ...args });
  assert.equal(created.isError, false, textOf(created));
  return JSON.parse(textOf(created)).session;
}

async function exec(session, command, user = 'user') {
  const r = await client.call('exec', { session, command, user, timeout_ms: 120000 });
  assert.equal(r.isError, false, textOf(r));
  return r.structuredContent;
}

const kill = (session) => client.call('kill_session', { session });



test('root inside installs a package with dpkg -i; the host and another session do not see it', async () => {
  const session = await create();
  const other = await create();
  try {
    const r = await exec(session, BUILD_AND_INSTALL, 'root');
    assert.equal(r.exit_code, 0, r.stdout + r.stderr);
    assert.equal(r.stdout, 'installed-inside\ninstall ok installed\n');
    // The package's files are root's inside, as dpkg made them, and so
    // are the host's.
    assert.equal((await exec(session, `stat -c %U:%G /usr/bin/${PACKAGE} /usr/bin/dpkg`, 'root')).stdout,
      'root:root\nroot:root\n');
    // Its postinst gave a directory to the man user, which exists inside
    // with its own id; on the host that id is one of the session's block,
    // which starts at the host uid of the session's root.
    assert.equal((await exec(session, `stat -c %U:%G:%u:%g /var/cache/${PACKAGE}`, 'root')).stdout, 'man:man:6:12\n');
    const map = (await exec(session, 'cat /proc/self/uid_map', 'root')).stdout.trim().split(/\s+/).map(Number);
    assert.deepEqual([map[0], map[2]], [0, 65536]);
    assert.equal(map[1] % 65536, 0, 'a block starts at a multiple of its size');
    const { dir } = await sandboxOf(client, session);
    // The host keeps none of the root's mounts once the sandbox runs: its
    // overlays, and the bind of rootfs they were made in, are the
    // sandbox's alone.
    const rootfs = path.join(dir, 'rootfs');
    const hostMounts = fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n')
      .map((l) => l.split(' ')[4]).filter((at) => at === rootfs || at?.startsWith(`${rootfs}/`));
    assert.deepEqual(hostMounts, []);
    const onHost = fs.statSync(path.join(rootfs, 'var', 'cache', PACKAGE));
    assert.deepEqual([onHost.uid, onHost.gid], [map[1] + 6, map[1] + 12]);
    // The host's /usr and dpkg database did not change.
    assert.equal(fs.existsSync(`/usr/bin/${PACKAGE}`), false);
    assert.equal(fs.readFileSync('/var/lib/dpkg/status', 'utf8').includes(PACKAGE), false);
    const seen = await exec(other, `test -e /usr/bin/${PACKAGE}; echo $?; dpkg-query -W ${PACKAGE} 2>&1 >/dev/null | head -c 0; echo done`);
    assert.equal(seen.stdout, '1\ndone\n');
    // None of the host's secrets came along: root-only files are not there.
    assert.equal((await exec(session, 'ls /etc/ssl/private /etc/shadow- /var/cache/debconf/passwords.dat 2>&1 | grep -c "No such file"; grep -c "^user:" /etc/passwd; cut -d: -f2 /etc/shadow | sort -u', 'root')).stdout,
      '3\n1\n*\n');
  } finally {
    await kill(session);
    await kill(other);
  }
});

test('a secret the host makes in /etc while a session runs reaches no session; a public file reaches the next one', async () => {
  const session = await create();
  const tag = `lizard-${process.pid}-${Date.now()}`;
  const secret = `/etc/${tag}-secret`, dir = `/etc/${tag}-keys`, open = `/etc/${tag}-public`;
  try {
    // Made by the host's root after the session started: a key only root
    // may read, one in a directory only root may enter, and a public file.
    fs.writeFileSync(secret, 'host-secret\n', { mode: 0o600 });
    fs.mkdirSync(dir, { mode: 0o700 });
    fs.writeFileSync(`${dir}/key`, 'host-key\n', { mode: 0o644 });
    fs.writeFileSync(open, 'host-public\n', { mode: 0o644 });
    const look = `for f in ${secret} ${dir}/key ${open}; do cat $f 2>/dev/null || echo absent; done; ls -d ${dir} 2>/dev/null || echo no-dir`;
    // The running session's /etc is the host's as it was at its start.
    assert.equal((await exec(session, look, 'root')).stdout, 'absent\nabsent\nabsent\nno-dir\n');
    // A new one has what others may read of the host's /etc now, and no more.
    const fresh = await create();
    try {
      assert.equal((await exec(fresh, look, 'root')).stdout, 'absent\nabsent\nhost-public\nno-dir\n');
      assert.equal((await exec(fresh, `stat -c %U:%a ${open}`, 'root')).stdout, 'root:644\n');
    } finally {
      await kill(fresh);
    }
  } finally {
    await kill(session);
    fs.rmSync(secret, { force: true });
    fs.rmSync(open, { force: true });
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('root inside may change any file of the system, and a new session starts from the host again', async () => {
  const session = await create();
  try {
    const r = await exec(session, 'echo changed > /etc/lizard-probe && rm /usr/bin/dpkg-deb && mkdir /opt-probe && echo top > /opt-probe/f && cat /etc/lizard-probe /opt-probe/f', 'root');
    assert.equal(r.exit_code, 0, r.stderr);
    assert.equal(r.stdout, 'changed\ntop\n');
  } finally {
    await kill(session);
  }
  assert.equal(fs.existsSync('/usr/bin/dpkg-deb'), true);
  assert.equal(fs.existsSync('/etc/lizard-probe'), false);
  const fresh = await create();
  try {
    const r = await exec(fresh, 'test -e /usr/bin/dpkg-deb && test ! -e /etc/lizard-probe && test ! -e /opt-probe && echo fresh');
    assert.equal(r.stdout, 'fresh\n');
  } finally {
    await kill(fresh);
  }
});

const hostFree = (dir) => { const s = fs.statfsSync(dir); return s.bavail * s.bsize; };

test('filling the writable root stops at the disk limit with ENOSPC; the bridge and another session carry on', async () => {
  const session = await create({ size: 'small' });
  const other = await create({ size: 'small' });
  try {
    const image = path.join(path.dirname((await sandboxOf(client, session)).dir), 'disk.img');
    const freeBefore = hostFree(path.dirname(image));
    const r = await exec(session, 'dd if=/dev/zero of=/usr/fill bs=1M count=200 2>&1; echo "exit $?"; stat -c %s /usr/fill', 'root');
    assert.match(r.stdout, /No space left on device/);
    assert.doesNotMatch(r.stdout, /exit 0\n/);
    const size = Number(r.stdout.trim().split('\n').pop());
    assert.ok(size > 32 * MIB && size <= LIMIT, `${size} bytes written`);
    const shrank = freeBefore - hostFree(path.dirname(image));
    assert.ok(shrank <= LIMIT + 4 * MIB, `the host's free space shrank by ${shrank} bytes`);
    // The full session, the other one and the bridge still answer.
    assert.equal((await exec(session, 'rm /usr/fill && echo freed', 'root')).stdout, 'freed\n');
    assert.equal((await exec(other, 'echo fine > /tmp/f && cat /tmp/f')).stdout, 'fine\n');
    assert.equal((await client.call('list_sessions', {})).isError, false);
  } finally {
    await kill(session);
    await kill(other);
  }
});

test('a bridge killed with its janitor leaves no mount and no layer once the next one starts', async () => {
  const killed = await startDaemon({ args: ['--sizes', 'small=1:1G:512:64M', '--data-dir', dataDir] });
  const own = await httpClient(killed);
  const created = await own.call('create_session', { template: 'base', size: 'small' });
  const session = JSON.parse(textOf(created)).session;
  const r = await own.call('exec', { session, command: 'echo layer > /usr/in-the-layer && echo written', user: 'root' });
  assert.equal(r.structuredContent.stdout, 'written\n');
  const privateDir = path.dirname((await sandboxOf(own, session)).dir);
  assert.ok(fs.existsSync(path.join(privateDir, 'disk.img')), privateDir);
  const daemonDir = path.dirname(privateDir);
  const janitor = janitorOf(killed.child.pid);
  assert.ok(janitor, 'the bridge has a janitor');
  process.kill(janitor, 'SIGKILL');
  process.kill(killed.child.pid, 'SIGKILL');
  await killed.ended();
  await own.close().catch(() => {});
  const mountsUnder = () => fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n')
    .filter((l) => l.split(' ')[4]?.startsWith(`${daemonDir}/`));
  assert.ok(mountsUnder().length > 0, 'the killed bridge left its session\'s disk mounted');
  const next = await startDaemon({ args: ['--data-dir', dataDir] });
  try {
    assert.deepEqual(mountsUnder(), []);
    assert.equal(fs.existsSync(daemonDir), false, `${daemonDir} is still there`);
    // No process anywhere still sees the layer (the sandbox's mount
    // namespace went with its processes).
    const seen = fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p)).filter((p) => {
      try {
        return fs.readFileSync(`/proc/${p}/mountinfo`, 'utf8').includes(privateDir);
      } catch {
        return false;
      }
    });
    assert.deepEqual(seen, []);
    assert.equal(fs.existsSync('/usr/in-the-layer'), false);
  } finally {
    await next.stop();
  }
});

// It downloads from deb.debian.org, and tests talk only to this machine:
// it runs when LIZARD_TEST_DEBIAN_MIRROR=1 says that is fine.
test('root inside installs a package with apt-get from the network', { skip: process.env.LIZARD_TEST_DEBIAN_MIRROR !== '1' && 'downloads from deb.debian.org; set LIZARD_TEST_DEBIAN_MIRROR=1 to run it' }, async () => {
  const session = await create();
  try {
    // man-db's trigger, which the install runs, gives its cache to the man
    // user: it works as on any Debian system, with no complaint.
    const r = await exec(session, 'apt-get update -q >/dev/null 2>&1; DEBIAN_FRONTEND=noninteractive apt-get install -q -y hello >/tmp/apt.log 2>&1; echo "apt=$?"; hello; dpkg-query -W -f \'${Status}\\n\' hello; grep -ci "chown\\|cannot\\|error" /tmp/apt.log', 'root');
    assert.equal(r.stdout, 'apt=0\nHello, world!\ninstall ok installed\n0\n', r.stderr);
    assert.equal(fs.existsSync('/usr/bin/hello'), false);
  } finally {
    await kill(session);
  }
});
