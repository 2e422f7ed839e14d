// SPDX-License-Identifier: MIT
// A test host: a network namespace of the test's own, joined to this
// machine by a veth pair on a private /30, with servers of the test running
// inside it (testhost-server.mjs). A sandbox reaches it as it would any
// host beyond this machine (out through slirp4netns, then the host's route
// to the veth), so tests and benches never need this machine's own
// interface address, nor anything else on the network. Names carry the
// process id (namespace lzt-PID-N, veth lztINDEXh/lztINDEXn); the veth's
// host end is created under a name derived from its /30, so two runs at
// once cannot take the same addresses: the second one's `ip link add`
// fails and it moves on. Namespaces, veths and servers go on close(), at
// the process's exit or signal, and, after a crash, at the next run's start
// (namespaces whose process is gone). Needs root (CAP_NET_ADMIN) and
// iproute2; testHostUnavailable() says why not where it cannot work.
import { execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const serverScript = path.join(path.dirname(fileURLToPath(import.meta.url)), 'testhost-server.mjs');

// 10.213.0.0/16 in /30s: 16384 test hosts, far from slirp4netns's
// 10.0.2.0/24 and from the addresses machines usually have.
const SUBNET_COUNT = 16384;
const subnetAddress = (index, host) => `10.213.${index >> 6}.${((index & 63) << 2) + host}`;
const OURS = /^lzt-(\d+)-(\d+)$/;

const ip = (args) => execFileSync('ip', args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: 10000 }).toString();

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}

let unavailable;

// Why no test host can be made here, or null when one can.
export function testHostUnavailable() {
  if (unavailable !== undefined) return unavailable;
  unavailable = null;
  if (process.getuid?.() !== 0) {
    unavailable = 'a test host needs root (CAP_NET_ADMIN) for ip netns add and a veth pair';
    return unavailable;
  }
  const probe = `lzt-${process.pid}-probe`;
  try {
    ip(['netns', 'add', probe]);
    ip(['netns', 'delete', probe]);
  } catch (e) {
    unavailable = `ip netns add does not work here: ${(e.stderr?.toString() || e.message).trim()}`;
  }
  return unavailable;
}

// Namespaces of this process not yet removed, by name, with their veth.
const live = new Map();

// Kills what runs in the namespace, then removes the veth (both ends go
// together) and the namespace. Synchronous: it also runs in exit handlers.
function removeNamespace(name, hostEnd) {
  const deadline = Date.now() + 5000;
  for (;;) {
    let pids = [];
    try {
      pids = ip(['netns', 'pids', name]).split('\n').filter(Boolean).map(Number);
    } catch {
      break; // gone already
    }
    if (pids.length === 0) break;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
    }
    if (Date.now() > deadline) break;
    execFileSync('sleep', ['0.02']);
  }
  for (const args of [hostEnd && ['link', 'delete', hostEnd], ['netns', 'delete', name]]) {
    if (!args) continue;
    try {
      ip(args);
    } catch {}
  }
}

function removeAllLive() {
  for (const [name, hostEnd] of live) removeNamespace(name, hostEnd);
  live.clear();
}

let hooked = false;

function hookExit() {
  if (hooked) return;
  hooked = true;
  process.on('exit', removeAllLive);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.once(signal, () => {
      removeAllLive();
      process.kill(process.pid, signal); // the default action, now that we are done
    });
  }
}

let staleRemoved = false;

// What runs that crashed left: their namespaces (the veth went with each),
// and host ends left without one.
function removeStale() {
  if (staleRemoved) return;
  staleRemoved = true;
  for (const line of ip(['netns', 'list']).split('\n')) {
    const name = line.split(' ')[0];
    const ours = OURS.exec(name);
    if (ours && !alive(Number(ours[1]))) removeNamespace(name);
  }
  for (const line of ip(['-o', 'link', 'show']).split('\n')) {
    const found = /^\d+: (lzt\d+h)[@:].*\balias (lzt-(\d+)-\d+)/.exec(line);
    if (found && !alive(Number(found[3]))) {
      try {
        ip(['link', 'delete', found[1]]);
      } catch {}
    }
  }
}

// A veth pair on a free /30: its host end here, the other end in name.
function addVeth(name, serial) {
  const start = (process.pid * 64 + serial) % SUBNET_COUNT;
  for (let k = 0; k < SUBNET_COUNT; k++) {
    const index = (start + k) % SUBNET_COUNT;
    const hostEnd = `lzt${index}h`;
    // Addresses some network of this machine already covers are not free.
    const covered = ip(['-4', 'route', 'show', 'match', subnetAddress(index, 2)])
      .split('\n').some((route) => route && !route.startsWith('default'));
    if (covered) continue;
    try {
      ip(['link', 'add', hostEnd, 'type', 'veth', 'peer', 'name', `lzt${index}n`, 'netns', name]);
    } catch (e) {
      if (/File exists/.test(e.stderr?.toString() ?? '')) continue; // another run's
      throw e;
    }
    return { index, hostEnd, guestEnd: `lzt${index}n` };
  }
  throw new Error('no free /30 left in 10.213.0.0/16 for a test host');
}

let serial = 0;

// Starts a server of testhost-server.mjs inside the namespace; resolves
// once it listens.
function startServer(name, address, kind, settings) {
  const child = spawn('ip', ['netns', 'exec', name, 'setpriv', '--pdeathsig', 'KILL', '--',
    process.execPath, serverScript, kind, address], { stdio: ['pipe', 'pipe', 'pipe'] });
  const events = [];
  let stderr = '';
  let pending = '';
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  child.stderr.on('data', (d) => (stderr += d));
  const listening = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the ${kind} server did not listen within 10 s: ${stderr}`)), 10000);
    exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`the ${kind} server ended (${signal ?? code}): ${stderr}`));
    });
    child.stdout.on('data', (d) => {
      pending += d;
      let newline;
      while ((newline = pending.indexOf('\n')) >= 0) {
        const event = JSON.parse(pending.slice(0, newline));
        pending = pending.slice(newline + 1);
        if ('listening' in event) {
          clearTimeout(timer);
          resolve(event.listening);
        } else {
          events.push(event);
        }
      }
    });
  });
  child.stdin.end(JSON.stringify(settings));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const done = await Promise.race([exited, new Promise((r) => setTimeout(() => r(null), 2000))]);
    if (!done) child.kill('SIGKILL');
    await exited;
  };
  return listening.then((port) => ({ port, events, close: stop }), async (e) => {
    await stop();
    throw e;
  });
}

// A new test host. address is where its servers listen (the namespace's
// end of the veth); serve(kind, settings) starts one there and resolves
// with { port, events, close }. Throws, with the reason, where
// testHostUnavailable() says one cannot be made.
export async function startTestHost() {
  const why = testHostUnavailable();
  if (why) throw new Error(why);
  hookExit();
  removeStale();
  const name = `lzt-${process.pid}-${++serial}`;
  ip(['netns', 'add', name]);
  live.set(name, null);
  const servers = new Set();
  let address;
  try {
    const veth = addVeth(name, serial);
    live.set(name, veth.hostEnd);
    address = subnetAddress(veth.index, 2);
    ip(['link', 'set', 'dev', veth.hostEnd, 'alias', name]);
    ip(['addr', 'add', `${subnetAddress(veth.index, 1)}/30`, 'dev', veth.hostEnd]);
    ip(['link', 'set', 'dev', veth.hostEnd, 'up']);
    ip(['-n', name, 'link', 'set', 'dev', 'lo', 'up']);
    ip(['-n', name, 'addr', 'add', `${address}/30`, 'dev', veth.guestEnd]);
    ip(['-n', name, 'link', 'set', 'dev', veth.guestEnd, 'up']);
  } catch (e) {
    removeNamespace(name, live.get(name));
    live.delete(name);
    throw new Error(`cannot set up test host ${name}: ${(e.stderr?.toString() || e.message).trim()}`);
  }
  return {
    name,
    address,
    async serve(kind, settings = {}) {
      const server = await startServer(name, address, kind, settings);
      servers.add(server);
      return server;
    },
    async close() {
      if (!live.has(name)) return;
      await Promise.all([...servers].map((s) => s.close()));
      removeNamespace(name, live.get(name));
      live.delete(name);
    },
  };
}
