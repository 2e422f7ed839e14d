// SPDX-License-Identifier: MIT
// A daemon run by an ordinary user (uid 65534 here) gives its sessions a
// writable root too. It can make neither idmapped mounts nor mounts on the
// host, so each sandbox's init mounts fuse-overlayfs over /usr, /etc and
// the package databases before anything else runs (sandbox/root_fuse.h).
// These tests check what root inside can change, what stays out of the
// sandbox's reach (the FUSE server too: its programs run in a PID
// namespace nested below it), and that --no-fuse-root keeps the host's
// directories read-only.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { bridgeBin, startOrdinaryDaemon } from '../lib/bridge.mjs';
import { httpClient, strictCall, textOf } from '../lib/mcp.mjs';
import { BUILD_AND_INSTALL, PACKAGE, buildAndInstall } from '../lib/packages.mjs';
import { descendants, tempDir, waitFor } from '../lib/process.mjs';
import { sandboxOf } from '../lib/sandbox.mjs';

const NOBODY = 65534;
const executable = (file) => {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
};
const skip = (!executable('/usr/bin/fuse-overlayfs') &&
  'fuse-overlayfs is not installed (apt-get install fuse-overlayfs): an ordinary daemon keeps a read-only root') ||
  (!fs.existsSync('/dev/fuse') && 'this machine has no /dev/fuse: an ordinary daemon keeps a read-only root');

let daemon, client;
// The overlaid directories this host has: one FUSE mount each, of one
// server.
const OVERLAID = ['usr', 'etc', 'var/lib/dpkg', 'var/lib/apt', 'var/cache/apt', 'var/cache/debconf']
  .filter((dir) => fs.existsSync(`/${dir}`)).length;

before(async () => {
  if (skip) return;
  daemon = await startOrdinaryDaemon({ uid: NOBODY });
  client = await httpClient(daemon);
});

after(async () => {
  await client?.close();
  await daemon?.stop();
});

async function create() {
  const created = await client.call('create_session', { template: 'base' });
  assert.equal(created.isError, false, textOf(created));
  return JSON.parse(textOf(created)).session;
}

async function exec(session, command, options = {}) {
  const r = await client.call('exec', { session, command, user: 'root', timeout_ms: 60000, ...options });
  assert.equal(r.isError, false, textOf(r));
  return r.structuredContent;
}

const kill = (session) => client.call('kill_session', { session });

test('root inside installs a package with dpkg -i; the host and another session do not see it', { skip }, async () => {
  const session = await create();
  const other = await create();
  try {
    const info = (await client.call('session_info', { session })).structuredContent;
    assert.match(info.sandbox.isolation, /writable root of its own over the host's system directories, made by fuse-overlayfs/);
    const r = await exec(session, buildAndInstall('chmod 700'));
    assert.equal(r.exit_code, 0, r.stdout + r.stderr);
    assert.equal(r.stdout, 'installed-inside\ninstall ok installed\n');
    // Every file shows as root's: the host's, and what root made.
    assert.equal((await exec(session, `stat -c %U:%G /usr/bin/${PACKAGE} /usr/bin/dpkg /var/cache/${PACKAGE}`)).stdout,
      'root:root\nroot:root\nroot:root\n');
    // Only the daemon's uid is mapped: giving a file to another user fails,
    // and says so (the README's limit for a daemon that is not root).
    const chown = await exec(session, `chown man /var/cache/${PACKAGE}`);
    assert.notEqual(chown.exit_code, 0);
    assert.match(chown.stderr, /Invalid argument/);
    // What root changed is in the session's layer on the host, the daemon
    // user's; the host's /usr and dpkg database did not change.
    const { dir } = await sandboxOf(client, session);
    const copied = fs.statSync(path.join(dir, 'layers', 'upper', 'usr', 'bin', PACKAGE));
    assert.deepEqual([copied.uid, copied.gid], [NOBODY, NOBODY]);
    assert.equal(fs.existsSync(`/usr/bin/${PACKAGE}`), false);
    assert.equal(fs.readFileSync('/var/lib/dpkg/status', 'utf8').includes(PACKAGE), false);
    const seen = await exec(other, `test -e /usr/bin/${PACKAGE}; echo $?`);
    assert.equal(seen.stdout, '1\n');
    // Whatever root left in the layer, the daemon removes with the session.
    await exec(session, 'mkdir -p /usr/share/locked/deep && touch /usr/share/locked/deep/f && chmod 000 /usr/share/locked/deep /usr/share/locked');
    await kill(session);
    assert.ok(await waitFor(() => !fs.existsSync(dir), { timeout: 15000 }), `${dir} is left`);
  } finally {
    await kill(session);
    await kill(other);
  }
});

test('no program of the sandbox reaches the staged layers, the host\'s /etc secrets or FUSE itself', { skip }, async () => {
  const session = await create();
  try {
    // Not through the FUSE server's descriptors or root in /proc either
    // (they lead to the layers on the host): no program sees the server,
    // as root or as the user, while the host sees them run.
    const sandbox = await sandboxOf(client, session);
    assert.equal(fuseServers(sandbox.processes()).length, 1);
    const servers = 'pgrep -c -f "[f]use-overlayfs"; grep -l "[f]use-overlayfs" /proc/[0-9]*/cmdline; echo checked';
    for (const user of ['root', 'user']) {
      assert.equal((await exec(session, servers, { user })).stdout, '0\nchecked\n', user);
    }
    const r = await exec(session, [
      'test -e /dev/fuse && echo dev-fuse',
      // Its directory stays, under an empty read-only mount: removing it
      // would take the staging mounts from the init's namespace too.
      'ls -A /run/lizard-root 2>/dev/null',
      'awk \'/lizard-root/ {print $5}\' /proc/self/mountinfo',
      // A device node of its own is refused (no CAP_MKNOD on the host).
      'mknod /tmp/fuse c 10 229 2>/dev/null && echo mknod',
      'test -e /etc/shadow- && echo shadow-',
      'grep -c " fuse.fuse-overlayfs " /proc/self/mountinfo',
    ].join('; '));
    assert.equal(r.stdout, `/run/lizard-root\n${OVERLAID}\n`, r.stderr);
    // Neither removes that directory nor sets the kernel's knobs in
    // /proc/sys (the sandbox's root owns pid_max of its PID namespace).
    const knobs = '(rmdir /run/lizard-root && echo removed; echo 4000 > /proc/sys/kernel/pid_max && echo pid_max) 2>/dev/null; echo checked';
    for (const user of ['root', 'user']) {
      assert.equal((await exec(session, knobs, { user })).stdout, 'checked\n', user);
    }
    const staged = sandbox.processes().filter((p) => {
      try {
        return fs.readFileSync(`/proc/${p}/mountinfo`, 'utf8').includes('/run/lizard-root/merged');
      } catch {
        return false;
      }
    });
    assert.ok(staged.length > 0, 'the init\'s namespace lost its staging mounts');
  } finally {
    await kill(session);
  }
});

// The sandbox's processes with fuse-overlayfs in their command line, as
// the host sees them.
function fuseServers(processes) {
  return processes.filter((pid) => {
    try {
      return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('fuse-overlayfs');
    } catch {
      return false;
    }
  });
}

test('a sandbox that kills every process it can leaves its FUSE server running; ending it leaves no process', { skip }, async () => {
  const session = await create();
  const other = await create();
  const sandbox = await sandboxOf(client, session);
  const servers = fuseServers(sandbox.processes());
  assert.equal(servers.length, 1);
  const running = (pid) => {
    try {
      return !/^State:\s+[TtZX]/m.test(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    } catch {
      return false;
    }
  };
  let killed = false;
  try {
    // Root inside stops, then kills, every process it may signal: the
    // server runs as its uid, but in the PID namespace above its own. The
    // call itself goes with them.
    await client.call('exec', { session, command: 'kill -STOP -1; kill -KILL -1', user: 'root', timeout_ms: 5000 });
    // A signal that reached it would show within half a second.
    const stopped = await waitFor(() => servers.filter(running).length < servers.length, { timeout: 500 });
    assert.ok(!stopped, 'a signal of the sandbox\'s reached its FUSE server');
    // The root still reads and writes: nothing waits on a stopped server.
    assert.equal((await exec(session, 'ls /usr/bin | grep -c "^ls$"; echo x > /etc/after && cat /etc/after')).stdout, '1\nx\n');
    assert.equal((await exec(other, 'echo alive')).stdout, 'alive\n');
    // Ending the session takes every process of it along.
    const end = await kill(session);
    killed = true;
    assert.equal(end.isError, false, textOf(end));
    const gone = await waitFor(() => sandbox.processes().length === 0, { timeout: 15000 });
    assert.ok(gone, `left: ${sandbox.processes()}`);
  } finally {
    if (!killed) await kill(session);
    await kill(other);
  }
});

test('when its FUSE server dies, the sandbox ends instead of running on without its root', { skip }, async () => {
  const session = await create();
  const sandbox = await sandboxOf(client, session);
  try {
    const [server] = fuseServers(sandbox.processes());
    process.kill(server, 'SIGKILL');
    const gone = await waitFor(() => sandbox.processes().length === 0, { timeout: 10000 });
    assert.ok(gone, `left: ${sandbox.processes()}`);
    const r = await client.call('exec', { session, command: 'true' });
    assert.equal(r.isError, true, textOf(r));
  } finally {
    await kill(session);
  }
});

test('with --no-fuse-root an ordinary daemon keeps the host\'s system directories read-only', { skip }, async () => {
  const plain = await startOrdinaryDaemon({ uid: NOBODY, args: ['--no-fuse-root'] });
  const own = await httpClient(plain);
  try {
    const created = await own.call('create_session', { template: 'base' });
    assert.equal(created.isError, false, textOf(created));
    const session = JSON.parse(textOf(created)).session;
    const info = (await own.call('session_info', { session })).structuredContent;
    assert.match(info.sandbox.isolation, /host system directories read-only \(the daemon runs with --no-fuse-root/);
    const r = await own.call('exec', { session, user: 'root', command: 'touch /usr/x 2>&1; grep -c " fuse.fuse-overlayfs " /proc/self/mountinfo' });
    assert.match(r.structuredContent.stdout, /Read-only file system\n0\n$/);
  } finally {
    await own.close();
    await plain.stop();
  }
});

test('a SIGKILLed ordinary daemon leaves no FUSE server behind', { skip }, async () => {
  const session = await create();
  const sandbox = await sandboxOf(client, session);
  assert.equal(fuseServers(sandbox.processes()).length, 1);
  await client.close();
  client = null;
  daemon.child.kill('SIGKILL');
  await daemon.ended();
  const killed = daemon;
  daemon = null;
  const gone = await waitFor(() => sandbox.processes().length === 0, { timeout: 15000 });
  killed.cleanup();
  assert.ok(gone, `left: ${sandbox.processes()}`);
});

// Ids of this run's own for the daemon user's subordinate range: outside
// the root daemons' default range and the other tests' ranges.
const SUBIDS = 1500000000 + Math.floor(Math.random() * 1000) * 65536;

test('with subordinate ids, root inside gives files to the system\'s users, and the daemon still removes the layer', { skip: skip || (!executable('/usr/bin/newuidmap') && 'newuidmap is not installed (apt-get install uidmap)') }, async () => {
  const own = await startOrdinaryDaemon({ uid: NOBODY, subids: SUBIDS});
  const mapped = await httpClient(own);
  try {
    const created = await mapped.call('create_session', { template: 'base' });
    assert.equal(created.isError, false, textOf(created));
    const { session } = JSON.parse(textOf(created));
    const run = async (command) => {
      const r = await mapped.call('exec', { session, command, user: 'root', timeout_ms: 60000 });
      assert.equal(r.isError, false, textOf(r));
      return r.structuredContent;
    };
    const info = (await mapped.call('session_info', { session })).structuredContent;
    assert.match(info.sandbox.isolation, /ids 1 to 65535 inside are the daemon user's subordinate ids/);
    // Root's programs run in a namespace of their own that maps each id
    // to itself; the sandbox's, as the host reads it, is the daemon's uid
    // and the range.
    assert.equal((await run('cat /proc/self/uid_map')).stdout.trim().split(/\s+/).join(' '),
      '0 0 1 1 1 65535');
    const sandbox = await sandboxOf(mapped, session);
    const map = fs.readFileSync(`/proc/${sandbox.processes()[0]}/uid_map`, 'utf8');
    assert.equal(map.trim().split(/\s+/).join(' '), `0 ${NOBODY} 1 1 ${SUBIDS} 65535`);
    // The postinst gives its directory to man, as man-db's trigger does.
    const r = await run(BUILD_AND_INSTALL);
    assert.equal(r.exit_code, 0, r.stdout + r.stderr);
    assert.equal(r.stdout, 'installed-inside\ninstall ok installed\n');
    assert.equal((await run(`stat -c %U:%G:%u:%g /var/cache/${PACKAGE}; stat -c %U:%G /usr/bin/dpkg`)).stdout,
      'man:man:6:12\nroot:root\n');
    // On the host man's files are the range's: inside id i is SUBIDS + i - 1.
    const { dir } = sandbox;
    const onHost = fs.statSync(path.join(dir, 'rootfs', 'var', 'cache', PACKAGE));
    assert.deepEqual([onHost.uid, onHost.gid], [SUBIDS + 5, SUBIDS + 11]);
    // A directory only man may enter, which the daemon's own uid could
    // not empty: ending the session removes it all the same.
    await run(`su -s /bin/sh man -c 'mkdir -p /var/cache/${PACKAGE}/own && touch /var/cache/${PACKAGE}/own/f' && chmod 700 /var/cache/${PACKAGE}`);
    const end = await mapped.call('kill_session', { session });
    assert.equal(end.isError, false, textOf(end));
    assert.ok(await waitFor(() => !fs.existsSync(dir), { timeout: 15000 }), `${dir} is left`);
  } finally {
    await mapped.close();
    await own.stop();
  }
});

const commandLine = (pid) => {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
};

// A directory the daemon's user may read, with tools that misbehave.
function toolsDir() {
  const dir = tempDir('lizard-tools-');
  fs.chmodSync(dir, 0o755);
  const stall = path.join(dir, 'fake-stall');
  fs.copyFileSync(path.join(path.dirname(bridgeBin), 'tests', 'fake-stall'), stall);
  fs.chmodSync(stall, 0o755);
  return { dir, stall };
}

// A daemon whose fuse-overlayfs is tool: a session's start fails with
// message, while the daemon answers, and no process of it is left.
async function failingServer(tool, message) {
  const own = await startOrdinaryDaemon({ uid: NOBODY, binds: { '/usr/bin/fuse-overlayfs': tool } });
  const c = await httpClient(own);
  try {
    const creating = c.call('create_session', { template: 'base' });
    assert.equal((await c.call('list_sessions', {})).isError, false);
    const r = await creating;
    assert.equal(r.isError, true, textOf(r));
    assert.match(textOf(r), message);
    const left = await waitFor(() => descendants(own.child.pid).filter((p) => commandLine(p).includes('lizard-root')).length === 0, { timeout: 5000 });
    assert.ok(left, descendants(own.child.pid).map(commandLine).join('\n'));
  } finally {
    await c.close();
    await own.stop();
  }
}

test('a fuse-overlayfs that never mounts fails its session at the deadline; the daemon answers and nothing is left', { skip }, async () => {
  const tools = toolsDir();
  try {
    await failingServer(tools.stall, /fuse-overlayfs did not mount in 8000 ms/);
  } finally {
    fs.rmSync(tools.dir, { recursive: true, force: true });
  }
});

test('a fuse-overlayfs that ends at once fails its session with its status', { skip }, async () => {
  await failingServer('/usr/bin/false', /fuse-overlayfs ended \(status 256\) before mounting/);
});

test('a newuidmap that hangs fails that session at its deadline; the daemon answers, and the next start works', { skip: skip || (!executable('/usr/bin/newuidmap') && 'newuidmap is not installed (apt-get install uidmap)') }, async () => {
  const tools = toolsDir();
  // The real one (set-user-id root, copied as root), unless hang exists.
  const real = path.join(tools.dir, 'real-newuidmap');
  fs.copyFileSync('/usr/bin/newuidmap', real);
  fs.chmodSync(real, 0o4755);
  const hang = path.join(tools.dir, 'hang');
  const wrapper = path.join(tools.dir, 'newuidmap');
  fs.writeFileSync(wrapper, `#!/bin/sh\n[ -e ${hang} ] && exec ${tools.stall}\nexec ${real} "$@"\n`, { mode: 0o755 });
  const own = await startOrdinaryDaemon({ uid: NOBODY, subids: SUBIDS + 65536, binds: { '/usr/bin/newuidmap': wrapper } });
  const c = await httpClient(own);
  const start = async () => {
    const r = await c.call('create_session', { template: 'base' });
    if (!r.isError) await c.call('kill_session', { session: JSON.parse(textOf(r)).session });
    return r;
  };
  try {
    const first = await start();
    assert.equal(first.isError, false, textOf(first));
    assert.match(JSON.parse(textOf(first)).sandbox.isolation, /subordinate ids/);
    fs.writeFileSync(hang, '');
    const creating = start();
    assert.equal((await c.call('list_sessions', {})).isError, false);
    const hung = await creating;
    assert.equal(hung.isError, true, textOf(hung));
    assert.match(textOf(hung), /newuidmap failed \(no answer in time\)/);
    assert.deepEqual(descendants(own.child.pid).filter((p) => commandLine(p).includes('fake-stall')), []);
    fs.rmSync(hang);
    const again = await start();
    assert.equal(again.isError, false, textOf(again));
  } finally {
    await c.close();
    await own.stop();
    fs.rmSync(tools.dir, { recursive: true, force: true });
  }
});

test('with subordinate ids and cgroups of its own, snapshots, restores and forks keep files only the system\'s users may read', { skip: skip || (!executable('/usr/bin/newuidmap') && 'newuidmap is not installed (apt-get install uidmap)') }, async () => {
  // The daemon's user is given cgroups (as systemd's Delegate=yes does),
  // so its sessions have a size, which snapshots need (to freeze them).
  const own = await startOrdinaryDaemon({ uid: NOBODY, subids: SUBIDS + 2 * 65536, delegate: true });
  const c = await httpClient(own);
  const call = strictCall(c);
  const sessions = [];
  const run = (session, command) => call('exec', { session, command, user: 'root' });
  const kept = 'stat -c %U:%G:%a /etc/only-man; cat /etc/only-man';
  try {
    const created = await call('create_session', { template: 'base', size: 'small' });
    sessions.push(created.session);
    assert.match(created.sandbox.isolation, /subordinate ids/);
    // Only man may read it: the daemon's own uid may not.
    assert.equal((await run(created.session, 'echo kept > /etc/only-man && chown man:man /etc/only-man && chmod 600 /etc/only-man && ' + kept)).stdout, 'man:man:600\nkept\n');
    const snap = await call('snapshot_session', { session: created.session });
    const restored = await call('create_session', { template: snap.snapshot });
    sessions.push(restored.session);
    assert.equal((await run(restored.session, kept)).stdout, 'man:man:600\nkept\n');
    const fork = await call('fork_session', { session: created.session });
    sessions.push(fork.session);
    assert.equal((await run(fork.session, kept)).stdout, 'man:man:600\nkept\n');
    for (const session of sessions.splice(0)) await call('kill_session', { session });
    // Deleting it removes those files too.
    await call('delete_snapshot', { snapshot: snap.snapshot });
    assert.equal((await call('list_snapshots', {})).snapshots.some((x) => x.snapshot === snap.snapshot), false);
  } finally {
    for (const session of sessions) await c.call('kill_session', { session });
    await c.close();
    await own.stop();
  }
});
