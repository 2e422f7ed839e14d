// SPDX-License-Identifier: MIT
// lizard-bridge itself as the tests and benches run it: the executable
// under test (LIZARD_BRIDGE_BIN, else this checkout's build), the lean
// environment it gets, and the daemon (serve) on a port or socket of its
// own with a fresh API key. The daemon dies with the runner: killed at its
// exit, and by a parent-death signal when the runner is killed outright.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { killAtExit, stuckReport, tempDir, waitFor, within } from './process.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
export const bridgeBin =
  process.env.LIZARD_BRIDGE_BIN || path.resolve(here, '../../build/lizard-bridge');

// The environment the bridge runs with: nothing of ours but what it needs,
// plus the sanitizer settings when the suite runs under them.
export function bridgeEnv(extra = {}) {
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, LIZARD_LOG: process.env.LIZARD_LOG || 'info' };
  if (process.env.LIZARD_DEBUG_BANDS) env.LIZARD_DEBUG_BANDS = '1';
  for (const name of ['ASAN_OPTIONS', 'UBSAN_OPTIONS', 'LSAN_OPTIONS']) {
    if (process.env[name]) env[name] = process.env[name];
  }
  return { ...env, ...extra };
}

// lizard-bridge serve on a free loopback port (or a UNIX socket), with a
// known API key. Resolves once it listens.
// wrap may turn the daemon's command line into another that ends up
// running it in the same process (such as unshare ... exec "$@").
export async function startDaemon({ listen, key = `test-key-${randomBytes(12).toString('hex')}`, args = [], env = {}, wrap = (argv) => argv } = {}) {
  if (!listen) {
    const probe = net.createServer();
    await new Promise((resolve) => probe.listen(0, '127.0.0.1', resolve));
    listen = `127.0.0.1:${probe.address().port}`;
    await new Promise((resolve) => probe.close(resolve));
  }
  // A parent-death signal: a test runner killed outright (where no exit
  // hook runs) takes its daemons along instead of leaving them serving.
  const [command, ...commandArgs] = wrap(['setpriv', '--pdeathsig', 'TERM', '--', bridgeBin, 'serve', '--listen', listen, ...args]);
  const child = spawn(command, commandArgs, {
    env: bridgeEnv({ LIZARD_API_KEY: key, ...env }),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const forget = killAtExit(child);
  let log = '';
  child.stderr.on('data', (d) => {
    log += d;
    if (process.env.LIZARD_TEST_VERBOSE) process.stderr.write(d);
  });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  // What exited resolves to; a daemon still there after ms fails the
  // caller with where it is stuck.
  const ended = async (ms = 10000) => {
    const done = await within(exited, ms);
    if (!done) throw new Error(`the daemon did not end within ${ms} ms:\n${stuckReport(child.pid)}`);
    return done;
  };
  const up = await waitFor(() => log.includes('serving MCP on') || child.exitCode !== null, { timeout: 15000 });
  if (!up || child.exitCode !== null) throw new Error(`daemon did not start: ${log}`);
  const url = listen.startsWith('/') ? `unix:${listen}` : `http://${listen}`;
  return {
    child, key, listen, url, exited,
    get log() {
      return log;
    },
    fdCount: () => fs.readdirSync(`/proc/${child.pid}/fd`).length,
    rssKiB: () => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'))[1]),
    // Ends it: SIGTERM, then SIGKILL after 10 s. One that outlives
    // SIGKILL by 10 s is stuck in the kernel: that fails the caller with
    // where, and never hangs the test file.
    async stop() {
      child.kill('SIGTERM');
      if (!(await within(exited, 10000))) child.kill('SIGKILL');
      forget();
      return ended();
    },
    ended,
  };
}

// A cgroup of uid's own in each hierarchy that has a controller the daemon
// uses (cgroup v1) or in the unified one (v2), as systemd's Delegate=yes
// gives a user: wrap is a command prefix that moves into it and execs the
// rest; remove() takes the cgroups away once nothing is left in them.
function delegateCgroups(uid) {
  const name = `lizard-delegated-${process.pid}-${Math.floor(Math.random() * 1e6)}`;
  const v2 = fs.existsSync('/sys/fs/cgroup/cgroup.controllers');
  const dirs = v2 ? [`/sys/fs/cgroup/${name}`]
    : ['cpu', 'cpuacct', 'memory', 'pids', 'freezer'].map((h) => `/sys/fs/cgroup/${h}`)
      .filter((h) => fs.existsSync(h)).map((h) => path.join(fs.realpathSync(h), name))
      .filter((d, i, all) => all.indexOf(d) === i);
  const wrap = ['sh', '-c',
    'uid=$1; shift; while [ "$1" != -- ]; do mkdir "$1" && chown -R "$uid" "$1" && echo $$ > "$1/cgroup.procs" || exit 1; shift; done; shift; exec "$@"',
    'sh', String(uid), ...dirs, '--'];
  // Empty cgroups go with rmdir, the deepest first (the daemon removes its
  // own below, unless it was killed).
  const removeTree = (dir) => {
    for (const sub of fs.readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory())) {
      removeTree(path.join(dir, sub.name));
    }
    fs.rmdirSync(dir);
  };
  // The daemon's janitor may outlive it by a moment: up to 10 s for the
  // cgroups to empty.
  const remove = () => {
    const pause = new Int32Array(new SharedArrayBuffer(4));
    for (let waited = 0; ; waited += 100) {
      try {
        for (const dir of dirs.filter((d) => fs.existsSync(d))) removeTree(dir);
        return;
      } catch (e) {
        if (e.code !== 'EBUSY' || waited >= 10000) throw e;
        Atomics.wait(pause, 0, 0, 100);
      }
    }
  };
  return { wrap, remove };
}

// lizard-bridge serve as an ordinary user (uid 65534 unless told): its
// binary, and lizard-init beside it, copied where that user can run them
// wherever the checkout is, with a HOME and TMPDIR of its own. Under the
// sanitizers its reports go to that home, and cleanup() (which stop()
// calls) copies them next to the suite's before removing the home.
// subids: the start of a range of 65536 the daemon's user gets in
// /etc/subuid and /etc/subgid, as files bound over those in a mount
// namespace of the daemon's own (the host's stay as they are). binds:
// other files seen so, { target: source }: a helper that misbehaves.
// delegate: the daemon runs in cgroups of its user's (delegateCgroups).
export async function startOrdinaryDaemon({ uid = 65534, env = {}, args = [], subids, binds = {}, delegate = false } = {}) {
  const home = tempDir('lizard-ordinary-');
  fs.chmodSync(home, 0o777);
  for (const name of ['lizard-bridge', 'lizard-init']) {
    const from = path.join(path.dirname(bridgeBin), name);
    if (!fs.existsSync(from)) continue;
    fs.copyFileSync(from, path.join(home, name));
    fs.chmodSync(path.join(home, name), 0o755);
  }
  const binary = path.join(home, 'lizard-bridge');
  const over = { ...binds };
  if (subids !== undefined) {
    const line = `${uid}:${subids}:65536\n`;
    fs.writeFileSync(path.join(home, 'subuid'), line);
    fs.writeFileSync(path.join(home, 'subgid'), line);
    Object.assign(over, { '/etc/subuid': path.join(home, 'subuid'), '/etc/subgid': path.join(home, 'subgid') });
  }
  // Each of binds' files (target: source) over the host's, for the daemon
  // alone: in a mount namespace of its own.
  const pairs = Object.entries(over).flat();
  const withBinds = (argv) => pairs.length === 0 ? argv : ['unshare', '--mount', '--propagation', 'private', 'sh', '-c',
    'while [ "$1" != -- ]; do mount --bind "$2" "$1" || exit 1; shift 2; done; shift; exec "$@"',
    'sh', ...pairs, '--', ...argv];
  const delegated = delegate ? delegateCgroups(uid) : { wrap: [], remove() {} };
  const own = { HOME: home, TMPDIR: home, ...env };
  for (const name of ['ASAN_OPTIONS', 'UBSAN_OPTIONS']) {
    if (process.env[name]) own[name] = process.env[name].replace(/log_path=[^:]*\/([^/:]*)/, `log_path=${home}/report-$1`);
  }
  const cleanup = () => {
    delegated.remove();
    const reports = /log_path=([^:]*)\//.exec(process.env.ASAN_OPTIONS ?? '')?.[1];
    if (!fs.existsSync(home)) return;
    for (const name of fs.readdirSync(home).filter((n) => reports && n.startsWith('report-'))) {
      fs.copyFileSync(path.join(home, name), path.join(reports, `ordinary-${name}`));
    }
    fs.rmSync(home, { recursive: true, force: true });
  };
  let daemon;
  try {
    daemon = await startDaemon({
      args,
      env: own,
      wrap: (argv) => withBinds([...delegated.wrap, 'setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups',
        ...argv.map((a) => (a === bridgeBin ? binary : a))]),
    });
  } catch (e) {
    cleanup();
    throw e;
  }
  const stop = daemon.stop;
  return Object.assign(daemon, { home, cleanup, stop: async () => { const r = await stop(); cleanup(); return r; } });
}

// A daemon with its own data directory and an HTTP client, for the tests
// of what lives there (snapshots, templates): call() fails the test on a
// tool error and gives the structured result; close() ends both and
// removes the directory.
export async function daemonWithData(prefix, args = []) {
  const { httpClient, strictCall } = await import('./mcp.mjs');
  const dataDir = tempDir(prefix);
  const daemon = await startDaemon({ args: [...args, '--data-dir', dataDir] });
  const client = await httpClient(daemon);
  const call = strictCall(client);
  const close = async () => {
    await client.close();
    await daemon.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  return { daemon, client, dataDir, call, close };
}
