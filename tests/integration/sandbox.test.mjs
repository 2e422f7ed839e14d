// SPDX-License-Identifier: MIT
// Local sessions are sandboxes: contained processes, a private view of the
// filesystem, an unprivileged user, and exec/read_file/write_file/list_files.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { waitFor, pidsMatching, tempDir } from '../lib/process.mjs';
import { bridgeBin, bridgeEnv, startDaemon } from '../lib/bridge.mjs';
import { connectBridge, textOf, httpClient } from '../lib/mcp.mjs';
import { desktopFromLog, startXvnc } from '../lib/x11.mjs';
import { decodePng, pixelAt } from '../lib/png.mjs';
import { sandboxPidNamespace, processesInPidNamespace, sandboxOf, stopInit } from '../lib/sandbox.mjs';
import { startPageServer, skipWithoutPages } from '../lib/pages.mjs';
import { startTestHost, testHostUnavailable } from '../lib/testhost.mjs';

let bridge, desktop, server, secretDir;
const marker = 300000 + Math.floor(Math.random() * 600000); // unique sleep durations

before(async () => {
  server = await startPageServer({
    '/color': '<!doctype html><body style="margin:0;background:#12ab34"></body>',
  });
  bridge = await connectBridge([]);
  desktop = desktopFromLog(bridge.log);
  assert.ok(desktop, bridge.log);
  secretDir = tempDir('lizard-test-secret-');
  fs.writeFileSync(path.join(secretDir, 'secret.txt'), 'host secret');
});

after(async () => {
  await bridge?.close();
  await server?.close();
  fs.rmSync(secretDir, { recursive: true, force: true });
});

const exec = async (args, session = 'default') => {
  const result = await bridge.call('exec', { ...args, session });
  assert.equal(result.isError, false, textOf(result));
  return result.structuredContent;
};

async function createSession(args = {}) {
  const created = await bridge.call('create_session', { template: 'bare', ...args });
  assert.equal(created.isError, false, textOf(created));
  return JSON.parse(textOf(created)).session;
}

test('exec returns stdout, stderr and the exit code exactly', async () => {
  const r = await exec({ command: "printf 'out\\nline'; printf 'err\\n' >&2; exit 3" });
  assert.equal(r.stdout, 'out\nline');
  assert.equal(r.stderr, 'err\n');
  assert.equal(r.exit_code, 3);
  assert.equal(r.signal, null);
  assert.equal(r.timed_out, false);
  const piped = await exec({ argv: ['cat'], stdin: 'fed through stdin ✓' });
  assert.equal(piped.stdout, 'fed through stdin ✓');
  assert.equal(piped.exit_code, 0);
});

test('a base session has no X server: its screen tools say so, and its commands run', async () => {
  const session = await createSession({ template: 'base' });
  try {
    for (const [tool, args] of [['screenshot', {}], ['click', { x: 1, y: 1 }], ['type', { text: 'x' }], ['screen_size', {}]]) {
      const r = await bridge.call(tool, { session, ...args });
      assert.equal(r.isError, true, `${tool}: ${textOf(r)}`);
      assert.match(textOf(r), new RegExp(`session ${session} has template base, which has no screen`));
    }
    const ps = await exec({ command: 'ps -eo comm' }, session);
    assert.doesNotMatch(ps.stdout, /Xvnc|openbox/);
    assert.match(ps.stdout, /^ps$/m);
  } finally {
    await bridge.call('kill_session', { session });
  }
});

// Root inside may stop the session's init with ptrace: its calls then
// fail at their deadline, and nothing else waits on it.
test('calls to a sandbox whose root stopped its init fail at a deadline; the daemon and other sessions go on', async () => {
  const session = await createSession({ template: 'base' });
  const other = await createSession({ template: 'base' });
  try {
    const stopped = await stopInit(bridge, session);
    assert.ok(stopped, 'the init was not stopped');
    const call = bridge.call('exec', { session, command: 'echo never', timeout_ms: 2000 });
    // While it waits, the daemon and another session answer.
    assert.equal((await exec({ command: 'echo fine' }, other)).stdout, 'fine\n');
    assert.equal((await bridge.call('list_sessions', {})).isError, false);
    const r = await call;
    assert.equal(r.isError, true, textOf(r));
    assert.match(textOf(r), /cannot start .*the sandbox did not answer within 15000 ms/);
  } finally {
    await bridge.call('kill_session', { session });
    await bridge.call('kill_session', { session: other });
  }
});

test('exec of a missing program or working directory says so, and the next exec runs', async () => {
  for (const user of ['user', 'root']) {
    const missing = await bridge.call('exec', { argv: ['no-such-program-here'], user });
    assert.equal(missing.isError, true);
    assert.match(textOf(missing), /cannot run the program: No such file or directory/);
    const nowhere = await bridge.call('exec', { argv: ['true'], workdir: '/no/such/dir', user });
    assert.equal(nowhere.isError, true);
    assert.match(textOf(nowhere), /cannot enter the working directory: No such file or directory/);
  }
  const next = await exec({ command: 'echo still here; id -u' });
  assert.equal(next.stdout, 'still here\n1000\n');
});

test('programs run as an unprivileged user; user root is root inside only', async () => {
  assert.equal(process.getuid(), 0, 'this test runs as root, like the suite');
  assert.equal((await exec({ command: 'id -u' })).stdout, '1000\n');
  assert.equal((await exec({ command: 'id -u', user: 'root' })).stdout, '0\n');
  // The user holds no capabilities at all, not even in its own namespace.
  const caps = await exec({ command: 'grep -E "^Cap(Prm|Eff|Amb)" /proc/self/status' });
  assert.deepEqual(caps.stdout.trim().split('\n').map((l) => l.split(/\s+/)[1]), ['0000000000000000', '0000000000000000', '0000000000000000']);
  // Root inside is nobody on the host: the host's root-only files stay
  // closed. A writable root has a /etc/shadow of its own, every account
  // locked, and none of the host's hashes.
  const shadow = await exec({ command: 'cut -d: -f2 /etc/shadow | sort -u; cat /etc/ssl/private/* /etc/shadow-', user: 'root' });
  assert.notEqual(shadow.exit_code, 0, shadow.stdout);
  assert.ok(['', '*\n'].includes(shadow.stdout), shadow.stdout);
});

test('ps inside lists only the session\'s processes', async () => {
  const r = await exec({ command: 'ps -e -o comm=' });
  const names = r.stdout.trim().split('\n');
  assert.ok(names.includes('Xvnc') && names.includes('openbox'), r.stdout);
  assert.ok(!names.includes('node'), `the test runner is visible: ${r.stdout}`);
  assert.ok(names.length < 20, r.stdout);
});

// An exec's pids are the ones ps and /proc show: its shell's own pid names
// the shell, and ps finds itself (procps looks itself up by getpid()) also
// after the exec has started other programs, whatever pids the session's
// other processes have.
const pidsAgree = 'for i in 1 2 3 4 5 6 7 8; do /bin/true; done; ps -o comm= -p $$; cat /proc/$$/comm; ps -e -o comm=';
function assertPidsAgree(r) {
  assert.equal(r.stderr, '');
  assert.equal(r.exit_code, 0);
  const [byPs, byProc, ...all] = r.stdout.trim().split('\n');
  assert.deepEqual([byPs, byProc], ['sh', 'sh'], r.stdout);
  assert.ok(all.includes('Xvnc') && all.includes('ps'), r.stdout);
}

test('an exec\'s pids are the ones ps and /proc show', async () => {
  assertPidsAgree(await exec({ command: pidsAgree }));
});

test('a host file outside the view cannot be read by exec, read_file or launch', async () => {
  const secret = path.join(secretDir, 'secret.txt');
  const viaExec = await exec({ command: `cat ${secret}` });
  assert.notEqual(viaExec.exit_code, 0);
  assert.ok(!viaExec.stdout.includes('host secret'));
  const viaRead = await bridge.call('read_file', { path: secret });
  assert.equal(viaRead.isError, true);
  assert.match(textOf(viaRead), /No such file/);
  const viaDotDot = await bridge.call('read_file', { path: `../../../..${secret}` });
  assert.equal(viaDotDot.isError, true);
  await bridge.call('launch', { command: `cat ${secret} > ~/launched.txt 2>&1; echo done >> ~/launched.txt` });
  const out = await waitFor(async () => {
    const r = await bridge.call('read_file', { path: 'launched.txt' });
    return !r.isError && r.structuredContent.text.includes('done') ? r.structuredContent.text : null;
  });
  assert.ok(out && !out.includes('host secret'), out);
  // Nor the daemon's files, nor /root or /work.
  const listing = await exec({ command: 'ls / ; ls /root /work 2>&1' });
  const top = listing.stdout.split('\n');
  assert.ok(!top.includes('work') && !top.includes('root'), listing.stdout);
  assert.match(listing.stdout, /No such file/);
});

test('launch tells a program that fails at once from one that runs', async () => {
  const missing = await bridge.call('launch', { command: 'no-such-program-here --flag' });
  assert.equal(missing.isError, true);
  assert.match(textOf(missing), /exited at once with status 127; it said: .*no-such-program-here.*not found/);
  const failing = await bridge.call('launch', { command: 'echo bad option >&2; exit 3' });
  assert.equal(failing.isError, true);
  assert.match(textOf(failing), /status 3; it said: bad option/);
  const running = await bridge.call('launch', { command: 'sleep 30' });
  assert.equal(running.isError, false, textOf(running));
  const pid = Number(/pid (\d+) in the sandbox/.exec(textOf(running))?.[1]);
  assert.ok(pid > 0, textOf(running));
  const ps = await exec({ command: `ps -o args= -p ${pid}` });
  assert.match(ps.stdout, /sleep 30/);
  const quick = await bridge.call('launch', { command: 'true' });
  assert.equal(quick.isError, false, textOf(quick));
  assert.match(textOf(quick), /finished at once, with status 0/);
});

test('writing outside the sandbox\'s own places fails', async () => {
  // A root daemon's sessions have a writable root: the write lands in the
  // session's own layer, never on the host.
  await bridge.call('write_file', { path: '/usr/lizard-escape', text: 'x', user: 'root' });
  assert.equal(fs.existsSync('/usr/lizard-escape'), false);
  const host = await exec({ command: `echo x > ${secretDir}/written`, user: 'root' });
  assert.notEqual(host.exit_code, 0);
  assert.equal(fs.existsSync(path.join(secretDir, 'written')), false);
});

test('another session\'s files are invisible', async () => {
  const other = await createSession();
  try {
    await exec({ command: 'echo mine > /workspace/other.txt; echo mine > /tmp/other.txt' }, other);
    const seen = await exec({ command: 'cat /workspace/other.txt /tmp/other.txt; ls /workspace /tmp' });
    assert.ok(!seen.stdout.includes('mine') && !seen.stdout.includes('other.txt'), seen.stdout);
    const mine = await exec({ command: 'cat /workspace/other.txt' }, other);
    assert.equal(mine.stdout, 'mine\n');
  } finally {
    await bridge.call('kill_session', { session: other });
  }
});

test('setsid and double-forked programs are gone after kill_session', async () => {
  const before = networkHelpersOf(bridge.pid);
  const other = await createSession();
  const helper = networkHelpersOf(bridge.pid).filter((pid) => !before.includes(pid));
  assert.equal(helper.length, 1, 'the session\'s network helper');
  const launched = await bridge.call('launch', {
    session: other,
    command: `setsid sh -c 'exec sleep ${marker + 1}' & (sh -c 'sleep ${marker + 2}' &) &`,
  });
  assert.equal(launched.isError, false, textOf(launched));
  assert.ok(await waitFor(() => pidsMatching(`sleep ${marker + 1}`).length && pidsMatching(`sleep ${marker + 2}`).length));
  await bridge.call('kill_session', { session: other });
  assert.ok(await waitFor(() => pidsMatching(`sleep ${marker + 1}|sleep ${marker + 2}`).length === 0),
    `left: ${pidsMatching(`sleep ${marker + 1}|sleep ${marker + 2}`)}`);
  assert.ok(await waitFor(() => !running(helper[0])), 'the network helper is gone');
});

for (const how of ['stdin closed', 'SIGKILL']) {
  test(`setsid and double-forked programs are gone after the bridge ends by ${how}`, async () => {
    const own = await connectBridge(['--size', '640x480']);
    const n = how === 'SIGKILL' ? 3 : 4;
    const r = await own.call('launch', { command: `setsid sh -c 'exec sleep ${marker + n}' & (sleep ${marker + n} &) &` });
    assert.equal(r.isError, false, textOf(r));
    assert.ok(await waitFor(() => pidsMatching(`sleep ${marker + n}`).length === 2));
    const helpers = networkHelpersOf(own.pid);
    assert.equal(helpers.length, 1, 'the session\'s network helper');
    if (how === 'SIGKILL') process.kill(own.pid, 'SIGKILL');
    else await own.close();
    assert.ok(await waitFor(() => pidsMatching(`sleep ${marker + n}`).length === 0), 'all gone');
    assert.ok(await waitFor(() => !running(helpers[0])), 'the network helper is gone');
    await own.close().catch(() => {});
  });
}

test('a timeout kills the command\'s whole tree, even what ignores SIGTERM', async () => {
  const started = Date.now();
  const r = await exec({
    command: `trap '' TERM; setsid sh -c "trap '' TERM; exec sleep ${marker + 5}" & sleep ${marker + 6}`,
    timeout_ms: 1500,
  });
  assert.equal(r.timed_out, true);
  assert.equal(r.exit_code, null);
  assert.equal(r.signal, 'KILL');
  assert.ok(Date.now() - started < 10000);
  assert.ok(await waitFor(() => pidsMatching(`sleep ${marker + 5}|sleep ${marker + 6}`).length === 0), 'tree gone');
});

test('what an exec leaves in the background is gone when its result comes, even after setsid', async () => {
  for (const [user, n] of [['user', 10], ['root', 12]]) {
    const leftovers = `^sleep (${marker + n}|${marker + n + 1})$`;
    const r = await exec({
      user,
      command: `setsid sh -c 'exec sleep ${marker + n}' >/dev/null 2>&1 & (sleep ${marker + n + 1} >/dev/null 2>&1 &); ` +
        `for i in $(seq 200); do [ $(pgrep -c -f '${leftovers}') = 2 ] && break; sleep 0.05; done; pgrep -c -f '${leftovers}'`,
    });
    assert.equal(r.stdout, '2\n', `both ran (${user})`);
    assert.equal(r.timed_out, false);
    assert.deepEqual(pidsMatching(leftovers), [], `left by ${user}`);
  }
});

test('cancelling an exec request kills the command', async () => {
  const controller = new AbortController();
  const running = bridge.client.callTool(
    { name: 'exec', arguments: { session: 'default', command: `sleep ${marker + 7}` } },
    undefined,
    { signal: controller.signal },
  ).catch((e) => e);
  assert.ok(await waitFor(() => pidsMatching(`sleep ${marker + 7}`).length >= 1), `the command runs: ${pidsMatching('sleep')}`);
  controller.abort();
  assert.ok(await waitFor(() => pidsMatching(`sleep ${marker + 7}`).length === 0), 'the command is gone');
  assert.ok((await running) instanceof Error);
});

test('exec output streams as progress notifications before the result', async () => {
  const events = [];
  const result = await bridge.client.callTool(
    // (The last sleep keeps the last chunk apart from the result: the SDK
    // handles notifications a tick later than responses, and drops progress
    // that arrives in the same read as its call's result.)
    { name: 'exec', arguments: { command: 'echo one; sleep 0.3; echo two >&2; sleep 0.3; echo three; sleep 0.3' } },
    undefined,
    { onprogress: (p) => events.push(p.message) },
  );
  events.push('result');
  assert.equal(result.structuredContent.stdout, 'one\nthree\n');
  assert.deepEqual(events, ['stdout: one\n', 'stderr: two\n', 'stdout: three\n', 'result']);
});

test('write_file and read_file round-trip all 256 byte values and UTF-8 text', async () => {
  const bytes = Buffer.from([...Array(256).keys()]);
  const w = await bridge.call('write_file', { path: 'dir/sub/bytes.bin', data: bytes.toString('base64'), mode: '600' });
  assert.equal(w.isError, false, textOf(w));
  const r = await bridge.call('read_file', { path: '/home/user/dir/sub/bytes.bin' });
  assert.equal(r.structuredContent.encoding, 'base64');
  assert.deepEqual(Buffer.from(r.structuredContent.data, 'base64'), bytes);
  assert.equal(r.structuredContent.size, 256);
  assert.equal((await exec({ command: 'stat -c %a dir/sub/bytes.bin' })).stdout, '600\n');
  const text = 'Grüße 漢字 🙂\n';
  await bridge.call('write_file', { path: '/workspace/t.txt', text });
  const t = await bridge.call('read_file', { path: '/workspace/t.txt' });
  assert.equal(t.structuredContent.encoding, 'utf-8');
  assert.equal(t.structuredContent.text, text);
  const list = await bridge.call('list_files', { path: '/workspace' });
  const entry = list.structuredContent.entries.find((e) => e.name === 't.txt');
  assert.deepEqual({ type: entry.type, size: entry.size }, { type: 'file', size: Buffer.byteLength(text) });
  assert.ok(Math.abs(entry.mtime - Date.now() / 1000) < 120);
});

test('a 10 MB file reads back exactly through offset and length', async () => {
  const made = await exec({ command: 'head -c 10485760 /dev/urandom > /workspace/big && sha256sum /workspace/big' });
  const expected = made.stdout.split(' ')[0];
  const whole = await bridge.call('read_file', { path: '/workspace/big' });
  assert.equal(whole.isError, true);
  assert.match(textOf(whole), /10485760 bytes; a call reads at most 3 MiB: give offset and length/);
  const parts = [];
  for (let offset = 0; offset < 10485760; offset += 3 << 20) {
    const r = await bridge.call('read_file', { path: '/workspace/big', offset, length: 3 << 20 });
    assert.equal(r.isError, false, textOf(r));
    parts.push(Buffer.from(r.structuredContent.data, 'base64'));
  }
  const got = Buffer.concat(parts);
  assert.equal(got.length, 10485760);
  assert.equal(crypto.createHash('sha256').update(got).digest('hex'), expected);
});

test('files the kernel says are empty (/proc) read to their end, through offset and length', async () => {
  const expected = Buffer.from((await exec({ command: 'cat /proc/self/mountinfo' })).stdout);
  assert.ok(expected.length > 200, `mountinfo: ${expected}`);
  const whole = await bridge.call('read_file', { path: '/proc/self/mountinfo' });
  assert.equal(whole.isError, false, textOf(whole));
  assert.equal(whole.structuredContent.text, expected.toString());
  // Its size is what was read: here the whole file.
  assert.equal(whole.structuredContent.size, expected.length);
  assert.equal(whole.structuredContent.length, expected.length);
  const part = await bridge.call('read_file', { path: '/proc/self/mountinfo', offset: 10, length: 20 });
  assert.equal(part.structuredContent.text, expected.subarray(10, 30).toString());
  assert.deepEqual([part.structuredContent.offset, part.structuredContent.length, part.structuredContent.size], [10, 20, 30]);
  // One without end in sight (8 bytes per page of the address space):
  // without length it is refused like a large file, with length it reads.
  const pagemap = await bridge.call('read_file', { path: '/proc/self/pagemap' });
  assert.equal(pagemap.isError, true);
  assert.match(textOf(pagemap), /goes on beyond 3 MiB .*give offset and length/);
  const entries = await bridge.call('read_file', { path: '/proc/self/pagemap', length: 64 });
  assert.equal(entries.isError, false, textOf(entries));
  assert.equal(Buffer.from(entries.structuredContent.data, 'base64').length, 64);
  // FIFOs and devices are still refused, and at once.
  await exec({ command: 'mkfifo ~/a-fifo' });
  for (const device of ['a-fifo', '/dev/zero', '/dev/null']) {
    const started = Date.now();
    const r = await bridge.call('read_file', { path: device });
    assert.equal(r.isError, true, device);
    assert.match(textOf(r), /is not a regular file/);
    assert.ok(Date.now() - started < 5000, `${device} took ${Date.now() - started} ms`);
  }
});

// The slirp4netns processes a bridge started (one per session with a network).
function networkHelpersOf(parent) {
  const found = [];
  for (const pid of fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) === parent && stat.includes('(slirp4netns)')) found.push(Number(pid));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

const running = (pid) => fs.existsSync(`/proc/${pid}`);

async function helloServer(host) {
  const tcp = net.createServer((c) => c.end('hello\n'));
  await new Promise((resolve) => tcp.listen(0, host, resolve));
  return tcp;
}

const connectProbe = (host, port) =>
  `python3 -c "import socket; s=socket.create_connection(('${host}', ${port}), 3); print(s.recv(10).decode().strip())"`;

// A test host with a hello server (tests/lib/testhost.mjs): somewhere
// beyond this machine's loopback that a sandbox can be asked to reach. null
// where none can be made; testHostUnavailable() says why.
async function helloTestHost() {
  if (testHostUnavailable()) return null;
  const host = await startTestHost();
  try {
    return { host, hello: await host.serve('hello') };
  } catch (e) {
    await host.close();
    throw e;
  }
}

test('network on: the host\'s loopback and the bridge\'s own port are out of reach, a test host beyond them is not', async (t) => {
  const loopback = await helloServer('127.0.0.1');
  const daemon = await startDaemon();
  const client = await httpClient(daemon);
  const outside = await helloTestHost();
  try {
    const created = await client.call('create_session', { template: 'bare' });
    assert.equal(created.isError, false, textOf(created));
    const session = JSON.parse(textOf(created)).session;
    const run = async (command) => (await client.call('exec', { session, command })).structuredContent;
    const bridgePort = Number(daemon.listen.split(':')[1]);
    for (const [host, port] of [['127.0.0.1', loopback.address().port], ['127.0.0.1', bridgePort],
      ['10.0.2.2', loopback.address().port], ['10.0.2.2', bridgePort]]) {
      const r = await run(connectProbe(host, port));
      assert.notEqual(r.exit_code, 0, `${host}:${port} answered: ${r.stdout}`);
      assert.match(r.stderr, /refused|unreachable/i);
    }
    const info = JSON.parse(textOf(await client.call('session_info', { session })));
    assert.equal(info.sandbox.network, true);
    assert.match(info.sandbox.isolation, /slirp4netns.*loopback services are out of reach/);
    if (!outside) {
      t.skip(`no test host, so the reachable half is not shown: ${testHostUnavailable()}`);
      return;
    }
    // The same probe reaches a host beyond this machine: the test can fail.
    assert.equal((await run(connectProbe(outside.host.address, outside.hello.port))).stdout, 'hello\n');
  } finally {
    await client.close();
    await daemon.stop();
    loopback.close();
    await outside?.host.close();
  }
});

test('network false: neither the host\'s loopback nor a test host beyond it can be reached', async (t) => {
  const loopback = await helloServer('127.0.0.1');
  const outside = await helloTestHost();
  const helpers = networkHelpersOf(bridge.pid).length;
  const closed = await createSession({ network: false });
  try {
    assert.equal(networkHelpersOf(bridge.pid).length, helpers, 'no network helper for it');
    const targets = [['127.0.0.1', loopback.address().port]];
    if (outside) targets.push([outside.host.address, outside.hello.port]);
    for (const [host, port] of targets) {
      // Both answer a connection from here: only the sandbox cannot reach them.
      assert.equal(await new Promise((resolve) => {
        const c = net.connect(port, host);
        let got = '';
        c.on('data', (d) => (got += d));
        c.on('end', () => resolve(got));
        c.on('error', (e) => resolve(e.message));
      }), 'hello\n', `${host}:${port} from the test`);
      const r = await exec({ command: connectProbe(host, port) }, closed);
      assert.notEqual(r.exit_code, 0, r.stdout);
      assert.match(r.stderr, /refused|unreachable/i);
    }
    const info = JSON.parse(textOf(await bridge.call('session_info', { session: closed })));
    assert.equal(info.sandbox.network, false);
    if (!outside) t.skip(`only the loopback half ran, no test host: ${testHostUnavailable()}`);
  } finally {
    await bridge.call('kill_session', { session: closed });
    loopback.close();
    await outside?.host.close();
  }
});

// A stdio bridge that runs calls once in a mount namespace of the test's
// own, where source is bound over the host's target.
function bridgeWithMount(source, target, calls) {
  return stdioOnce(
    ['unshare', '--mount', '--propagation', 'private', 'sh', '-c',
      `mount --bind "${source}" "${target}" && exec "${bridgeBin}" stdio --size 320x240`],
    calls, bridgeEnv());
}

// A bridge that sees resolvConf as the host's /etc/resolv.conf.
function bridgeWithResolvConf(resolvConf, calls) {
  const dir = tempDir('lizard-resolv-');
  const file = path.join(dir, 'resolv.conf');
  fs.writeFileSync(file, resolvConf);
  return bridgeWithMount(file, '/etc/resolv.conf', calls)
    .finally(() => fs.rmSync(dir, { recursive: true, force: true }));
}

test('DNS inside asks the host\'s nameservers through the user-mode network', async (t) => {
  if (testHostUnavailable()) return t.skip(`no test host for a nameserver of the test: ${testHostUnavailable()}`);
  // A nameserver of the test's own on a test host.
  const host = await startTestHost();
  try {
    const dns = await host.serve('dns', { answers: { 'sandbox-probe.lizard.test': '203.0.113.7' } });
    const run = await bridgeWithResolvConf(`nameserver 127.0.0.53\nnameserver ${host.address}\n`,
      [[1, 'exec', { command: 'cat /etc/resolv.conf; getent ahostsv4 sandbox-probe.lizard.test' }]]);
    const r = run.byId.get(1)?.result?.structuredContent;
    assert.ok(r, run.stderr.slice(-2000));
    // The loopback resolver is left out; the other one answers.
    assert.ok(!r.stdout.includes('127.0.0.53'), r.stdout);
    assert.match(r.stdout, /^203\.0\.113\.7\s+STREAM sandbox-probe\.lizard\.test/m);
    assert.ok(dns.events.some((e) => e.asked === 'sandbox-probe.lizard.test'), JSON.stringify(dns.events));
  } finally {
    await host.close();
  }
});

test('with only a loopback resolver on the host, the sandbox gets none and says so', async () => {
  const run = await bridgeWithResolvConf('nameserver 127.0.0.53\noptions edns0\n',
    [[1, 'exec', { command: 'cat /etc/resolv.conf' }], [2, 'session_info', {}]]);
  const r = run.byId.get(1)?.result?.structuredContent;
  assert.ok(r, run.stderr.slice(-2000));
  assert.doesNotMatch(r.stdout, /^nameserver/m);
  const info = run.byId.get(2).result.structuredContent;
  assert.match(info.sandbox.isolation, /names do not resolve/);
});

test('session envs reach every program; per-call envs override them', async () => {
  const s = await createSession({ envs: { LIZARD_GREETING: 'hello', OTHER: 'kept' } });
  try {
    assert.equal((await exec({ command: 'echo $LIZARD_GREETING $OTHER' }, s)).stdout, 'hello kept\n');
    assert.equal((await exec({ command: 'echo $LIZARD_GREETING $OTHER', envs: { LIZARD_GREETING: 'bye' } }, s)).stdout, 'bye kept\n');
  } finally {
    await bridge.call('kill_session', { session: s });
  }
});

test('Chromium runs with its own sandbox (no --no-sandbox) under the session\'s filter and shows a page', async (t) => {
  if (skipWithoutPages(t, server)) return;
  const opened = await bridge.call('open_url', { url: `${server.url}/color` });
  assert.equal(opened.isError, false, textOf(opened));
  const shown = await waitFor(async () => {
    const png = decodePng((await bridge.call('screenshot', { show_cursor: false })).content.find((c) => c.type === 'image').data);
    return JSON.stringify(pixelAt(png, 640, 600)) === JSON.stringify([0x12, 0xab, 0x34]);
  }, { timeout: 30000, interval: 250 });
  assert.ok(shown, 'the page is on screen');
  const namespace = sandboxPidNamespace(desktop.dir);
  const lines = processesInPidNamespace(namespace)
    .map((pid) => { try { return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0'); } catch { return []; } })
    .filter((argv) => argv.some((a) => a.includes('chromium')));
  assert.ok(lines.length > 0, 'Chromium runs in the session');
  for (const argv of lines) assert.ok(!argv.includes('--no-sandbox'), argv.join(' '));
  // Every Chromium process runs under the session's system call filter;
  // its renderers under its own sandbox as well: namespaces of their own
  // and its seccomp-bpf filter stacked onto the session's.
  const browsers = processesInPidNamespace(namespace).filter((pid) => {
    let exe = '';
    try { exe = fs.readlinkSync(`/proc/${pid}/exe`); } catch {}
    return path.basename(exe) === 'chromium' && !commandOf(pid).includes('--type=');
  });
  assert.equal(browsers.length, 1, 'one browser process');
  const [browser] = browsers;
  const chromium = [browser, ...descendantsOf(browser)];
  for (const pid of chromium) assert.equal(seccompOf(pid).mode, 2, `${commandOf(pid)}: no filter`);
  assert.equal(seccompOf(browser).filters, 1, 'the browser has the session\'s filter only');
  const renderers = chromium.filter((pid) => commandOf(pid).includes('--type=renderer'));
  assert.ok(renderers.length > 0, 'a renderer draws the page');
  for (const pid of renderers) {
    assert.ok(seccompOf(pid).filters >= 2, `renderer ${pid}: ${seccompOf(pid).filters} filter(s), Chromium's own is missing`);
    for (const kind of ['user', 'pid', 'net']) {
      assert.notEqual(fs.readlinkSync(`/proc/${pid}/ns/${kind}`), fs.readlinkSync(`/proc/${browser}/ns/${kind}`), `renderer ${pid} shares the browser's ${kind} namespace`);
    }
  }
  await bridge.call('press', { keys: 'ctrl+w' });
});

// A process's command line as one string: Chromium's children rewrite
// theirs into one argument.
function commandOf(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
}

// Every host process below pid, through nested PID namespaces too.
function descendantsOf(pid) {
  const children = new Map();
  for (const name of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const parent = Number(/^PPid:\s+(\d+)$/m.exec(fs.readFileSync(`/proc/${name}/status`, 'utf8'))[1]);
      children.set(parent, [...(children.get(parent) || []), Number(name)]);
    } catch {}
  }
  const found = [];
  for (let queue = [pid]; queue.length;) {
    for (const child of children.get(queue.shift()) || []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

// The seccomp mode (0 none, 2 filter) and the number of filters of a host process.
function seccompOf(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return { mode: Number(/^Seccomp:\s+(\d+)$/m.exec(status)[1]), filters: Number(/^Seccomp_filters:\s+(\d+)$/m.exec(status)[1]) };
}

test('attached sessions are not sandboxes, and the tools say so', async () => {
  const xvnc = await startXvnc({ width: 320, height: 240 });
  try {
    const created = await bridge.call('create_session', { vnc: xvnc.url });
    const id = JSON.parse(textOf(created)).session;
    const r = await bridge.call('exec', { session: id, command: 'true' });
    assert.equal(r.isError, true);
    assert.match(textOf(r), /not one: it is attached to a VNC server/);
    await bridge.call('kill_session', { session: id });
  } finally {
    await xvnc.stop();
  }
});

// Raw MCP over stdio to a bridge started by `command` (its first words run
// the bridge, e.g. under setpriv); resolves with the replies by id and the
// exit. Its stdin closes once every call has its reply (a bridge stops
// the calls still running when stdin closes), or when it exits.
function stdioOnce(command, calls, env) {
  const lines = [
    { jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    ...calls.map(([id, name, args]) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } })),
  ];
  const child = spawn(command[0], command.slice(1), { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const waiting = new Set(['init', ...calls.map(([id]) => id)]);
  child.stdout.on('data', (d) => {
    out += d;
    for (const line of out.split('\n').slice(0, -1)) {
      try {
        waiting.delete(JSON.parse(line).id);
      } catch {}
    }
    if (waiting.size === 0) child.stdin.end();
  });
  child.stderr.on('data', (d) => (err += d));
  child.stdin.on('error', () => {}); // a bridge that failed to start reads nothing
  child.stdin.write(lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 60000);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      const byId = new Map(out.split('\n').filter(Boolean).map((l) => JSON.parse(l)).map((m) => [m.id, m]));
      resolve({ code, signal, byId, stderr: err });
    });
  });
}

// Runs calls once in a stdio bridge of uid 65534, from a copy of the binary
// that user can reach wherever the checkout is (it may be 0700), with a
// HOME and TMPDIR of its own.
async function ordinaryUserBridge(calls) {
  const home = tempDir('lizard-nobody-');
  fs.chmodSync(home, 0o777);
  const binary = path.join(home, 'lizard-bridge');
  fs.copyFileSync(bridgeBin, binary);
  fs.chmodSync(binary, 0o755);
  try {
    return await stdioOnce(
      ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', binary, 'stdio', '--size', '320x240'],
      calls, { PATH: process.env.PATH, HOME: home, TMPDIR: home });
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}

test('a daemon run by an ordinary user sandboxes its sessions too, without sizes', async (t) => {
  // Its network helper runs as that user too, and reaches a test host.
  const outside = await helloTestHost();
  const probe = outside ? [[4, 'exec', { command: connectProbe(outside.host.address, outside.hello.port) }]] : [];
  const run = await ordinaryUserBridge(
    [[1, 'exec', { command: 'id -u; cat /proc/self/uid_map; test -e /root && echo host-root-visible' }],
      [2, 'session_info', {}],
      [3, 'create_session', { template: 'bare', size: 'small' }],
      ...probe])
    .finally(() => outside?.host.close());
  assert.equal(run.code, 0, run.stderr.slice(-2000));
  const exec = run.byId.get(1)?.result?.structuredContent;
  assert.ok(exec, run.stderr.slice(-2000));
  const [uid, map] = exec.stdout.split('\n');
  assert.equal(uid, '1000');
  // uid 1000 inside is the sandbox's root, which is the daemon's user.
  assert.deepEqual(map.trim().split(/\s+/), ['1000', '0', '1']);
  assert.ok(!exec.stdout.includes('host-root-visible'));
  const info = run.byId.get(2).result.structuredContent;
  assert.equal(info.sandbox.isolated, true);
  assert.match(info.sandbox.isolation, /host uid 65534/);
  assert.match(info.sandbox.isolation, /slirp4netns/);
  // Its root is writable through fuse-overlayfs (ordinary-root.test.mjs).
  assert.match(info.sandbox.isolation, /writable root of its own over the host's system directories, made by fuse-overlayfs/);
  if (outside) assert.equal(run.byId.get(4).result.structuredContent.stdout, 'hello\n');
  // No cgroups for this user: its sessions run without a size (the one
  // above did), and asking for one says why.
  const sized = run.byId.get(3).result;
  assert.equal(sized.isError, true);
  assert.match(sized.content[0].text, /cgroup/i);
  console.log(`# size as an ordinary user: ${sized.content[0].text}`);
  if (!outside) t.skip(`its network helper's reach is not shown, no test host: ${testHostUnavailable()}`);
});

test('ps works in the sessions of a daemon run by an ordinary user', async () => {
  const run = await ordinaryUserBridge([[1, 'exec', { command: pidsAgree }]]);
  const r = run.byId.get(1)?.result?.structuredContent;
  assert.ok(r, run.stderr.slice(-2000));
  assertPidsAgree(r);
});

// A few uids of this run's own for --uid-range: below 2^31 (bubblewrap's
// limit), far above any the machine gives out.
const uidBase = 2100000000 + Math.floor(Math.random() * 40000) * 1000;

// A process that runs with uid (and gid) for the test's time; resolves once
// it does.
async function holdUid(uid) {
  const holder = spawn('setpriv', [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', 'sleep', '120'], { stdio: 'ignore' });
  const runs = await waitFor(() => {
    try {
      return fs.readFileSync(`/proc/${holder.pid}/status`, 'utf8').includes(`\nUid:\t${uid}\t`);
    } catch {
      return false;
    }
  });
  if (!runs) holder.kill('SIGKILL');
  assert.ok(runs, `a process with uid ${uid}`);
  return holder;
}

// The host uids (real, effective, saved, file system) of a session's Xvnc.
async function xvncUids(client, session) {
  const sandbox = await sandboxOf(client, session);
  const xvnc = sandbox.processes().find((pid) => {
    try {
      return fs.readFileSync(`/proc/${pid}/comm`, 'utf8') === 'Xvnc\n';
    } catch {
      return false;
    }
  });
  assert.ok(xvnc, `Xvnc among ${sandbox.processes()}`);
  return /\nUid:\t([^\n]*)/.exec(fs.readFileSync(`/proc/${xvnc}/status`, 'utf8'))[1].split('\t').map(Number);
}

// Runs use(client) with a serve daemon started with options, then stops
// it with its sessions, whatever use does.
async function withDaemon(options, use) {
  const daemon = await startDaemon(options);
  try {
    const client = await httpClient(daemon);
    try {
      await use(client);
    } finally {
      await client.close();
    }
  } finally {
    await daemon.stop();
  }
}

const createBare = (client) => client.call('create_session', { template: 'bare', screen: '320x240' });

test('a root daemon gives a session a uid of --uid-range that no process and no other session has', async () => {
  const first = uidBase;
  const holder = await holdUid(first);
  try {
    await withDaemon({ args: ['--uid-range', `${first}:2`] }, async (client) => {
      const created = await createBare(client);
      assert.equal(created.isError, false, textOf(created));
      const session = created.structuredContent.session;
      assert.deepEqual(await xvncUids(client, session), [first + 1, first + 1, first + 1, first + 1]);
      // The second uid is this session's now: the range is full.
      const refused = await createBare(client);
      assert.equal(refused.isError, true, textOf(refused));
      assert.match(textOf(refused), new RegExp(`no free host uid .*--uid-range ${first}:2 \\(uids ${first} to ${first + 1}\\)`));
      // Its end gives the uid back, once its processes and files are gone
      // (kill_session returns before that).
      await client.call('kill_session', { session });
      const again = await waitFor(async () => {
        const r = await createBare(client);
        return r.isError ? null : r;
      }, { timeout: 15000, interval: 200 });
      assert.ok(again, 'a session once the first is gone');
      assert.deepEqual(await xvncUids(client, again.structuredContent.session), [first + 1, first + 1, first + 1, first + 1]);
    });
  } finally {
    holder.kill('SIGKILL');
  }
});

test('a root daemon gives each session a block of 65536 host ids, skipping a block that holds a process\'s id', async () => {
  // Two whole blocks, the first of which a process's uid is in.
  const first = Math.ceil((uidBase + 100000) / 65536) * 65536;
  const holder = await holdUid(first + 777);
  try {
    await withDaemon({ args: ['--uid-range', `${first}:${2 * 65536}`] }, async (client) => {
      const created = await createBare(client);
      assert.equal(created.isError, false, textOf(created));
      const session = created.structuredContent.session;
      const block = first + 65536;
      const r = await client.call('exec', { session, user: 'root', command: 'cat /proc/self/uid_map /proc/self/gid_map; chown 6:12 /tmp && stat -c %u:%g /tmp' });
      const [uidMap, gidMap, owner] = r.structuredContent.stdout.trim().split('\n');
      for (const map of [uidMap, gidMap]) assert.deepEqual(map.trim().split(/\s+/).map(Number), [0, block, 65536]);
      // Root inside may give a file to any of its 65536 ids.
      assert.equal(owner, '6:12', r.structuredContent.stderr);
      // The desktop runs as the sandbox's root on the host: the block's first id.
      assert.deepEqual(await xvncUids(client, session), [block, block, block, block]);
      const refused = await createBare(client);
      assert.equal(refused.isError, true, textOf(refused));
      assert.match(textOf(refused), new RegExp(`no free block of 65536 host uids for the sandbox in --uid-range ${first}:${2 * 65536}`));
    });
  } finally {
    holder.kill('SIGKILL');
  }
});

// A root daemon makes the next session's root ahead with a block of ids
// (root_ahead.h); a session that cannot use that root (a restored
// snapshot's root is the snapshot's) gets the block back from it when the
// range has no other.
test('a root made ahead gives its ids to a session that cannot use it when the range has no others', async () => {
  const first = Math.ceil((uidBase + 600000) / 65536) * 65536;
  await withDaemon({ args: ['--uid-range', `${first}:${2 * 65536}`] }, async (client) => {
    const created = await client.call('create_session', { template: 'base' });
    assert.equal(created.isError, false, textOf(created));
    const { session } = created.structuredContent;
    const hostIds = async (id) => {
      const r = await client.call('exec', { session: id, user: 'root', command: 'cat /proc/self/uid_map' });
      assert.equal(r.isError, false, textOf(r));
      return Number(r.structuredContent.stdout.trim().split(/\s+/)[1]);
    };
    const own = await hostIds(session);
    const snapshot = await client.call('snapshot_session', { session });
    assert.equal(snapshot.isError, false, textOf(snapshot));
    const daemonDir = path.dirname(path.dirname((await sandboxOf(client, session)).dir));
    const rootSpare = () => fs.readdirSync(daemonDir).some((name) => /^spare-\d+-root\.img$/.test(name));
    assert.ok(await waitFor(rootSpare), 'no root was made ahead with the other block');
    const restored = await client.call('create_session', { template: snapshot.structuredContent.snapshot });
    assert.equal(restored.isError, false, textOf(restored));
    const other = restored.structuredContent.session;
    assert.deepEqual([own, await hostIds(other)].sort(), [first, first + 65536]);
    assert.equal(rootSpare(), false, 'the root made ahead is still there');
    // Its files are the snapshot's.
    const r = await client.call('exec', { session: other, command: 'test -d /home/user && echo restored' });
    assert.equal(r.structuredContent.stdout, 'restored\n', textOf(r));
  });
});

test('a --uid-range of one uid that a process has refuses sessions, naming the range and the option', async () => {
  const only = uidBase + 10;
  const holder = await holdUid(only);
  try {
    await withDaemon({ args: ['--uid-range', `${only}:1`] }, async (client) => {
      const refused = await createBare(client);
      assert.equal(refused.isError, true, textOf(refused));
      assert.match(textOf(refused), new RegExp(`no free host uid for the sandbox in --uid-range ${only}:1 \\(uids ${only} to ${only}\\).*give --uid-range a range with free uids`));
    });
  } finally {
    holder.kill('SIGKILL');
  }
});

test('uids in /etc/subuid or /etc/subgid, or known as a user or group, are not given to sessions', async () => {
  const first = uidBase + 20;
  const blockFirst = Math.ceil((uidBase + 300000) / 65536) * 65536;
  const dir = tempDir('lizard-uids-');
  const file = (name, text) => {
    fs.writeFileSync(path.join(dir, name), text);
    return path.join(dir, name);
  };
  // Seen by the daemon only: its own mount namespace, these files bound
  // over the machine's.
  const binds = [
    [file('subuid', `someone:${first}:1\n`), '/etc/subuid'],
    [file('subgid', `# a comment\nsomeone:${first + 1}:1\n`), '/etc/subgid'],
    [file('passwd', `${fs.readFileSync('/etc/passwd', 'utf8')}lizardtest:x:${first + 2}:${first + 2}::/nonexistent:/usr/sbin/nologin\n` +
      `lizardblock:x:${blockFirst + 5}:${blockFirst + 5}::/nonexistent:/usr/sbin/nologin\n`), '/etc/passwd'],
    [file('group', `${fs.readFileSync('/etc/group', 'utf8')}lizardtest:x:${first + 3}:\n`), '/etc/group'],
  ];
  const wrap = (argv) => ['unshare', '--mount', '--propagation', 'private', 'sh', '-c',
    `${binds.map((_, i) => `mount --bind "$${2 * i + 1}" "$${2 * i + 2}"`).join(' && ')} && shift ${2 * binds.length} && exec "$@"`,
    'sh', ...binds.flat(), ...argv];
  try {
    await withDaemon({ args: ['--uid-range', `${first}:5`], wrap }, async (client) => {
      const created = await createBare(client);
      assert.equal(created.isError, false, textOf(created));
      assert.deepEqual(await xvncUids(client, created.structuredContent.session), [first + 4, first + 4, first + 4, first + 4]);
      const refused = await createBare(client);
      assert.equal(refused.isError, true, 'each of the five is taken');
      assert.match(textOf(refused), /no free host uid/);
    });
    // A block of 65536 with a known user in it is skipped as a whole.
    await withDaemon({ args: ['--uid-range', `${blockFirst}:${2 * 65536}`], wrap }, async (client) => {
      const created = await createBare(client);
      assert.equal(created.isError, false, textOf(created));
      const block = blockFirst + 65536;
      assert.deepEqual(await xvncUids(client, created.structuredContent.session), [block, block, block, block]);
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('--uid-range takes FIRST:COUNT of unprivileged uids, and says what is wrong with another', async () => {
  for (const [value, why] of [
    ['3000', /'3000' is not FIRST:COUNT/],
    ['100:10', /starts below 65536/],
    ['2000000:0', /COUNT must be at least 1/],
    ['2147483000:1000', /goes past uid 2147483647/],
  ]) {
    const run = await stdioOnce([bridgeBin, 'stdio', '--uid-range', value], [], bridgeEnv());
    assert.equal(run.code, 2, value);
    assert.match(run.stderr, why);
    assert.match(run.stderr, /^lizard-bridge: --uid-range: /);
  }
});

test('without bubblewrap a local session does not start, and says what is missing', async () => {
  // bwrap hidden in a mount namespace of this test's own: /dev/null, which
  // cannot be executed, over it.
  const run = await bridgeWithMount('/dev/null', '/usr/bin/bwrap', []);
  assert.notEqual(run.code, 0);
  assert.match(run.stderr, /bubblewrap is not installed .*apt-get install bubblewrap/);
  assert.equal(run.byId.size, 0, 'nothing was served unsandboxed');
});

test('without slirp4netns a session with a network does not start, and says what is missing', async () => {
  const run = await bridgeWithMount('/dev/null', '/usr/bin/slirp4netns', []);
  assert.notEqual(run.code, 0);
  assert.match(run.stderr, /slirp4netns is not installed .*apt-get install slirp4netns/);
  assert.equal(run.byId.size, 0, 'nothing was served on the host\'s network');
});

// The host directory of a bridge's first sandbox, from its log: the run
// directory's parent, or the parent of its disk's mount point.
const privateDirOf = (log) => {
  const parent = /files in (\S+)\/run\b/.exec(log)?.[1];
  return parent && path.basename(parent) === 'disk' ? path.dirname(parent) : parent;
};

test('a program that prints without end leaves the sandbox log under its bound', async () => {
  const own = await connectBridge(['--size', '320x240']);
  try {
    const dir = privateDirOf(own.log);
    assert.ok(dir, own.log);
    const logFile = path.join(dir, 'sandbox.log');
    const end = `flood-${marker}-ends`;
    const r = await own.call('launch', {
      command: `head -c 30000000 /dev/zero | tr '\\0' o; head -c 20000000 /dev/zero | tr '\\0' e >&2; echo ${end}`,
    });
    assert.equal(r.isError, false, textOf(r));
    assert.ok(await waitFor(() => fs.readFileSync(logFile, 'latin1').includes(end), { timeout: 60000 }),
      `the end of the output never arrived; the log has ${fs.statSync(logFile).size} bytes`);
    const log = fs.readFileSync(logFile, 'latin1');
    assert.ok(log.length <= 256 * 1024, `${log.length} bytes in the log`);
    // What it kept is the newest: stderr's flood right before the end line.
    assert.ok(log.endsWith(`eeee${end}\n`), JSON.stringify(log.slice(-80)));
    assert.ok(!log.includes('oooo'), 'the oldest output was dropped');
  } finally {
    await own.close();
  }
});

test('the private directory\'s host path is in no environment, command line or file the sandbox is told about', async () => {
  const dir = privateDirOf(bridge.log);
  assert.ok(dir, bridge.log);
  const asUser = await exec({ command: 'env; cat /etc/passwd /etc/group /etc/resolv.conf "$XAUTHORITY" | strings' });
  assert.match(asUser.stdout, /XAUTHORITY=\/run\/lizard\/Xauthority/);
  assert.ok(!asUser.stdout.includes(dir), asUser.stdout);
  const asRoot = await exec({
    user: 'root',
    command: 'for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline; tr "\\0" " " < $p/environ; ' +
      'readlink $p/cwd $p/exe $p/root $p/fd/*; done; echo MOUNTS; cat /proc/self/mountinfo',
  });
  const [told, mounts] = asRoot.stdout.split('MOUNTS\n');
  assert.match(told, /sandbox-init/);
  assert.ok(!told.includes(dir), told);
  // What stays without a disk: the kernel shows a bind mount's source as
  // its path on its filesystem. Only these binds do, so a new leak fails
  // here. With a disk (a root daemon with sizes) they are paths on the
  // session's own filesystem, and none names the host.
  const onDisk = mounts.split('\n').some((l) => l.split(' ')[4] === '/home/user' && l.includes(' - ext4 /dev/loop'));
  const shown = mounts.split('\n').filter((l) => l.includes(dir)).map((l) => l.split(' ')[4]).sort();
  // A root daemon's writable root is a bind of its own at /.
  const root = process.getuid() === 0 ? ['/'] : [];
  assert.deepEqual(shown, onDisk ? [] : [...root, '/home/user', '/run/lizard', '/tmp/.X11-unix', '/workspace']);
});

