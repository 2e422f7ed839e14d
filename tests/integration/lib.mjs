// Shared helpers for the integration tests: real X servers, real X clients,
// and lizard-bridge driven through the official MCP TypeScript SDK.
import { spawn, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PNG } from 'pngjs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startTestHost, testHostUnavailable } from '../lib/testhost.mjs';

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

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Polls an observable condition until it holds or the deadline passes; the
// last value is returned either way so the assertion can show it.
export async function waitFor(probe, { timeout = 10000, interval = 50 } = {}) {
  const deadline = Date.now() + timeout;
  let value;
  for (;;) {
    value = await probe();
    if (value) return value;
    if (Date.now() > deadline) return value;
    await sleep(interval);
  }
}

// What a typing target's file holds once at least `length` characters (UTF-16
// units, as JavaScript counts them) have arrived, or null at the deadline.
export function typedText(file, length, options) {
  return waitFor(() => {
    const content = fs.readFileSync(file, 'utf8');
    return content.length >= length ? content : null;
  }, options);
}

export function tempDir(prefix) {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

// An Xauthority file with one FamilyWild entry that fits any display.
export function writeXauthority(file) {
  const name = Buffer.from('MIT-MAGIC-COOKIE-1');
  const cookie = randomBytes(16);
  const u16 = (n) => Buffer.from([n >> 8, n & 255]);
  fs.writeFileSync(
    file,
    Buffer.concat([u16(0xffff), u16(0), u16(0), u16(name.length), name, u16(16), cookie]),
    { mode: 0o600 },
  );
}

function readDisplayFd(child, what) {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`${what} did not start`)), 15000);
    child.stdio[3].on('data', (chunk) => {
      text += chunk;
      if (text.includes('\n')) {
        clearTimeout(timer);
        resolve(Number.parseInt(text, 10));
      }
    });
    child.on('exit', (code) => reject(new Error(`${what} exited with ${code}`)));
  });
}

const children = new Set();
process.on('exit', () => {
  for (const child of children) {
    for (const target of [-child.pid, child.pid]) { // its group, or itself
      try {
        process.kill(target, 'SIGKILL');
      } catch {}
    }
  }
});

// Starts a process in its own group so stop() takes its children too.
export function startProcess(command, args, options = {}) {
  const child = spawn(command, args, { detached: true, stdio: 'ignore', ...options });
  children.add(child);
  child.exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  child.exited.then(() => children.delete(child));
  child.stop = async () => {
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {}
    const done = await Promise.race([child.exited, sleep(3000).then(() => null)]);
    if (!done) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {}
      await child.exited;
    }
  };
  return child;
}

// A real TigerVNC Xvnc listening on a private UNIX socket (and optionally
// TCP), with its own X cookie. Returns what X clients need.
export async function startXvnc({ width = 1024, height = 768, extra = [] } = {}) {
  const dir = tempDir('lizard-test-xvnc-');
  const socket = path.join(dir, 'vnc.sock');
  const xauthority = path.join(dir, 'Xauthority');
  writeXauthority(xauthority);
  const child = startProcess(
    'Xvnc',
    ['-displayfd', '3', '-geometry', `${width}x${height}`, '-depth', '24', '-rfbport', '-1',
      '-rfbunixpath', socket, '-rfbunixmode', '0600', '-SecurityTypes', 'None',
      '-auth', xauthority, '-nolisten', 'tcp', '-AlwaysShared', ...extra],
    { stdio: ['ignore', 'ignore', 'ignore', 'pipe'] },
  );
  const display = await readDisplayFd(child, 'Xvnc');
  await waitFor(() => fs.existsSync(socket), { timeout: 5000 });
  const env = { ...process.env, DISPLAY: `:${display}`, XAUTHORITY: xauthority, LC_ALL: 'C.UTF-8', LANG: 'C.UTF-8' };
  return {
    display, socket, xauthority, env, dir, process: child,
    url: `unix://${socket}`,
    async stop() {
      await child.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

// Xvfb + x11vnc protected by a VNC password, on a loopback TCP port.
export async function startX11vnc({ width = 800, height = 600, password = 'sekrit42' } = {}) {
  const dir = tempDir('lizard-test-x11vnc-');
  const xauthority = path.join(dir, 'Xauthority');
  writeXauthority(xauthority);
  const xvfb = startProcess(
    'Xvfb',
    ['-displayfd', '3', '-screen', '0', `${width}x${height}x24`, '-auth', xauthority, '-nolisten', 'tcp'],
    { stdio: ['ignore', 'ignore', 'ignore', 'pipe'] },
  );
  const display = await readDisplayFd(xvfb, 'Xvfb');
  const env = { ...process.env, DISPLAY: `:${display}`, XAUTHORITY: xauthority, LC_ALL: 'C.UTF-8', LANG: 'C.UTF-8' };
  const passwdFile = path.join(dir, 'passwd');
  execFileSync('x11vnc', ['-storepasswd', password, passwdFile], { stdio: 'ignore' });
  const port = 15900 + Math.floor(Math.random() * 2000);
  let x11vnc;
  let log = '';
  const startVnc = async () => {
    x11vnc = startProcess(
      'x11vnc',
      ['-display', `:${display}`, '-auth', xauthority, '-rfbauth', passwdFile, '-rfbport', String(port),
        '-localhost', '-forever', '-shared', '-nopw', '-noxdamage', '-quiet'],
      { env, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    x11vnc.stderr.on('data', (d) => (log += d));
    const listening = await waitFor(() => {
      try {
        return execFileSync('ss', ['-ltn', `sport = :${port}`]).toString().includes(`:${port}`);
      } catch {
        return false;
      }
    }, { timeout: 15000 });
    if (!listening) throw new Error(`x11vnc did not listen on ${port}: ${log}`);
  };
  await startVnc();
  return {
    display, env, port, password, dir,
    url: `vnc://127.0.0.1:${port}`,
    startVnc,
    stopVnc: () => x11vnc.stop(),
    async stop() {
      await x11vnc.stop();
      await xvfb.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

// The X server's own picture of the root window, as raw RGB bytes.
export function captureRootRgb(env) {
  const xwd = execFileSync('xwd', ['-root', '-silent'], { env, maxBuffer: 64 << 20 });
  return execFileSync('convert', ['xwd:-', '-depth', '8', 'rgb:-'], { input: xwd, maxBuffer: 64 << 20 });
}

export function decodePng(base64) {
  return PNG.sync.read(Buffer.from(base64, 'base64'));
}

// RGBA (pngjs) to packed RGB, for comparison with captureRootRgb.
export function rgbaToRgb(png) {
  const out = Buffer.alloc(png.width * png.height * 3);
  for (let i = 0, o = 0; i < png.data.length; i += 4, o += 3) {
    out[o] = png.data[i];
    out[o + 1] = png.data[i + 1];
    out[o + 2] = png.data[i + 2];
  }
  return out;
}

export function countDifferentPixels(a, b) {
  let differing = 0;
  for (let i = 0; i < Math.min(a.length, b.length); i += 3) {
    if (a[i] !== b[i] || a[i + 1] !== b[i + 1] || a[i + 2] !== b[i + 2]) differing++;
  }
  return differing + Math.abs(a.length - b.length) / 3;
}

// lizard-bridge stdio as an MCP server, with the official SDK client.
export async function connectBridge(args = [], { env = {} } = {}) {
  const transport = new StdioClientTransport({
    command: bridgeBin,
    args: ['stdio', ...args],
    env: bridgeEnv(env),
    stderr: 'pipe',
  });
  let log = '';
  transport.stderr.on('data', (d) => {
    log += d;
    if (process.env.LIZARD_TEST_VERBOSE) process.stderr.write(d);
  });
  const client = new Client({ name: 'lizard-bridge-tests', version: '1.0.0' });
  await client.connect(transport);
  return {
    client,
    transport,
    get log() {
      return log;
    },
    pid: transport.pid,
    call: (name, args = {}) => client.callTool({ name, arguments: args }),
    async close() {
      await client.close();
    },
  };
}

// The text of a tool result's first text block.
export function textOf(result) {
  const block = result.content.find((c) => c.type === 'text');
  return block ? block.text : '';
}

export function imageOf(result) {
  return result.content.find((c) => c.type === 'image');
}

// The local desktop the bridge started, as its log line describes it.
const relays = new Map(); // socket path -> host display number

// A host display number for a sandbox's X socket (x11-relay.py), started
// once per socket and waited for: callers use it synchronously.
function hostDisplayFor(socket) {
  if (relays.has(socket)) return relays.get(socket);
  const ready = path.join(os.tmpdir(), `lizard-x11-relay-${randomBytes(6).toString('hex')}`);
  const relay = spawn('python3', [path.join(here, 'x11-relay.py'), socket, ready],
    { stdio: ['pipe', 'ignore', 'inherit'] });
  relay.unref();
  relay.stdin.unref?.();
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let waited = 0; waited < 10000 && !fs.existsSync(ready); waited += 20) Atomics.wait(pause, 0, 0, 20);
  const display = Number(fs.readFileSync(ready, 'utf8'));
  fs.rmSync(ready, { force: true });
  relays.set(socket, display);
  return display;
}

export function desktopFromLog(log) {
  const m = /local desktop on display :(\d+) .*files in (\S+)/.exec(log);
  if (!m) return null;
  const xauthority = path.join(m[2], 'Xauthority');
  const display = hostDisplayFor(path.join(m[2], '.X11-unix', `X${m[1]}`));
  return {
    display: Number(m[1]), // inside the sandbox
    dir: m[2],
    // The sandbox's HOME on the host (the run directory's sibling).
    home: path.join(m[2], '..', 'home'),
    env: { ...process.env, DISPLAY: `:${display}`, XAUTHORITY: xauthority, LC_ALL: 'C.UTF-8', LANG: 'C.UTF-8' },
  };
}

function readLinkOrNull(file) {
  try {
    return fs.readlinkSync(file);
  } catch {
    return null;
  }
}

// The PID namespace (as /proc/PID/ns/pid reads) of the sandbox that runs
// X display :display: the one its X clients (openbox) live in.
// The PID namespace of a local session's sandbox, found by its private
// directory (or its run directory): its processes' mount table names it as
// the source of /home/user.
export function sandboxPidNamespace(dir) {
  const own = readLinkOrNull('/proc/self/ns/pid');
  const privateDir = path.basename(dir) === 'run' ? path.dirname(dir) : dir;
  // A session with a disk: HOME is the root /home of the device mounted at
  // privateDir. Without: the bind's root is its path, relative to its
  // filesystem's root as the kernel shows it.
  const disk = fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n')
    .map((line) => line.split(' ')).find((f) => f[4] === privateDir && f[3] === '/');
  const matches = disk
    ? (info) => info.split('\n').some((line) => {
      const f = line.split(' ');
      return f[2] === disk[2] && f[3] === '/home' && f[4] === '/home/user';
    })
    : (info) => info.includes(`/${path.basename(path.dirname(privateDir))}/${path.basename(privateDir)}/home /home/user `);
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const namespace = readLinkOrNull(`/proc/${pid}/ns/pid`);
      if (namespace && namespace !== own && matches(fs.readFileSync(`/proc/${pid}/mountinfo`, 'utf8'))) {
        return namespace;
      }
    } catch {}
  }
  return null;
}

// Every host process in that PID namespace.
export function processesInPidNamespace(namespace) {
  return fs
    .readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p) && readLinkOrNull(`/proc/${p}/ns/pid`) === namespace)
    .map(Number);
}

function commandLine(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return [];
  }
}

// A local session's sandbox as the host sees it: its processes (its PID
// namespace, which its root reads inside) and its private directory on the
// host (the source of its /home/user in its mount table).
export async function sandboxOf(client, session) {
  const r = await client.call('exec', { session, user: 'root', command: 'readlink /proc/1/ns/pid; grep " /home/user " /proc/1/mountinfo' });
  const [namespace, mount] = r.structuredContent.stdout.split('\n');
  const [, , device, root] = mount.split(' ');
  // A session with a disk has HOME on its own filesystem: the host mounts
  // that (same device) somewhere, and HOME is the bind's root below it.
  const host = fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n')
    .map((line) => line.split(' ')).find((f) => f[2] === device && f[3] === '/' && f.includes('ext4'));
  let home = host ? path.join(host[4], root) : root;
  // Otherwise the bind's root is its path on its filesystem: the host path
  // when the private directory is on the root filesystem, else below /tmp.
  if (!host && !fs.existsSync(home)) home = path.join('/tmp', home);
  return { namespace, dir: path.dirname(home), processes: () => processesInPidNamespace(namespace) };
}

// What a file in a session's sandbox holds once it has at least `length`
// characters (read with read_file), or null at the deadline.
export function sandboxText(client, session, file, length, options) {
  return waitFor(async () => {
    const r = await client.call('read_file', { session, path: file });
    const text = r.isError ? '' : r.structuredContent.text ?? '';
    return text.length >= length ? text : null;
  }, options);
}

export function pidsMatching(pattern) {
  try {
    return execFileSync('pgrep', ['-f', pattern]).toString().trim().split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

export function pointerLocation(env) {
  const out = execFileSync('xdotool', ['getmouselocation', '--shell'], { env }).toString();
  const x = Number(/X=(\d+)/.exec(out)[1]);
  const y = Number(/Y=(\d+)/.exec(out)[1]);
  return { x, y };
}

// An xterm whose shell copies everything typed into file (UTF-8 locale).
export function startTypingTarget(env, file, geometry = '80x10+0+0') {
  return startProcess(
    'xterm',
    ['-geometry', geometry, '-u8', '-e', 'sh', '-c', `stty -echo -icanon; exec cat > ${file}`],
    { env },
  );
}

// xev on its own window, logging events to a growing string.
export function startXev(env, geometry = '400x300+100+100') {
  const [size, x, y] = [geometry.split('+')[0], ...geometry.split('+').slice(1)];
  const child = startProcess('stdbuf', ['-oL', 'xev', '-geometry', geometry, '-event', 'keyboard', '-event', 'mouse', '-event', 'structure'], {
    env,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  child.output = '';
  child.stdout.on('data', (d) => (child.output += d));
  child.origin = { x: Number(x), y: Number(y), size };
  return child;
}

// Whether a visible window with this name (or WM_CLASS, with by: 'class') exists.
export function windowReady(env, name, by = 'name') {
  try {
    return execFileSync('xdotool', ['search', '--onlyvisible', `--${by}`, name], { env }).toString().trim() !== '';
  } catch {
    return false;
  }
}

// Pages for the desktop's browser, served by a test host of the test's own
// (tests/lib/testhost.mjs): a local session has a network of its own
// without the host's loopback and reaches the test host through
// slirp4netns. Pages can report back with POST /report (JSON), collected in
// reports. Where no test host can be made, url is null and unavailable
// says why, for the tests that need pages to skip with.
export async function startPageServer(pages) {
  const unavailable = testHostUnavailable();
  if (unavailable) return { url: null, unavailable, reports: [], close: async () => {} };
  const host = await startTestHost();
  let server;
  try {
    server = await host.serve('page', { pages });
  } catch (e) {
    await host.close();
    throw e;
  }
  return {
    url: `http://${host.address}:${server.port}`,
    get reports() {
      return server.events.filter((e) => 'report' in e).map((e) => e.report);
    },
    close: () => host.close(),
  };
}

// For a test that needs startPageServer's pages: true (and the test marked
// SKIP, with the reason) where there are none.
export function skipWithoutPages(t, server) {
  if (!server.unavailable) return false;
  t.skip(`no test host to serve pages: ${server.unavailable}`);
  return true;
}

// The RGB of one pixel of a decoded PNG.
export function pixelAt(png, x, y) {
  const i = (y * png.width + x) * 4;
  return [png.data[i], png.data[i + 1], png.data[i + 2]];
}

// Client-area geometry (absolute, as xwininfo gives it) of the first
// visible window with this name.
export function windowGeometry(env, name) {
  try {
    const id = execFileSync('xdotool', ['search', '--onlyvisible', '--name', name], { env }).toString().trim().split('\n')[0];
    const out = execFileSync('xwininfo', ['-id', id], { env }).toString();
    const get = (label) => Number(new RegExp(`${label}:\\s+(-?\\d+)`).exec(out)[1]);
    return { id, x: get('Absolute upper-left X'), y: get('Absolute upper-left Y'), width: get('Width'), height: get('Height') };
  } catch {
    return null;
  }
}

// lizard-bridge serve on a free loopback port (or a UNIX socket), with a
// known API key. Resolves once it listens.
// wrap may turn the daemon's command line into another that ends up
// running it in the same process (such as unshare ... exec "$@").
export async function startDaemon({ listen, key = `test-key-${randomBytes(12).toString('hex')}`, args = [], env = {}, wrap = (argv) => argv } = {}) {
  if (!listen) {
    const net = await import('node:net');
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
  children.add(child);
  let log = '';
  child.stderr.on('data', (d) => {
    log += d;
    if (process.env.LIZARD_TEST_VERBOSE) process.stderr.write(d);
  });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
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
    async stop() {
      child.kill('SIGTERM');
      const done = await Promise.race([exited, sleep(10000).then(() => null)]);
      if (!done) child.kill('SIGKILL');
      children.delete(child);
      return exited;
    },
  };
}

// MCP SDK clients for a daemon: Streamable HTTP with the key in a header,
// or WebSocket with the key in the URL (Node 20 needs ws as WebSocket).
export async function httpClient(daemon, name = 'http-test') {
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${daemon.key}` } },
  }));
  return wrapClient(client);
}

export async function wsClient(daemon, name = 'ws-test') {
  const { default: WebSocket } = await import('ws');
  globalThis.WebSocket ??= WebSocket;
  const { WebSocketClientTransport } = await import('@modelcontextprotocol/sdk/client/websocket.js');
  const client = new Client({ name, version: '1.0.0' });
  const url = new URL(`${daemon.url.replace('http://', 'ws://')}/mcp`);
  url.searchParams.set('access_token', daemon.key);
  await client.connect(new WebSocketClientTransport(url));
  return wrapClient(client);
}

function wrapClient(client) {
  return {
    client,
    call: (name, args = {}) => client.callTool({ name, arguments: args }, undefined, { timeout: 120000 }),
    close: () => client.close(),
  };
}

// Headless Debian Chromium under playwright-core, as the probe set it up.
export async function launchChromium() {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
}

// A daemon with one local desktop, its viewer links, a headless Chromium
// and a scratch directory: what the browser viewer tests start from.
// work is a scratch directory inside the sandbox (in its HOME); host(p)
// is where a path under it is on the host, for the test to read.
export async function viewerFixture(prefix, size = '800x600') {
  const f = { work: `/home/user/${prefix}${randomBytes(4).toString('hex')}` };
  f.daemon = await startDaemon();
  f.client = await httpClient(f.daemon);
  f.session = JSON.parse(textOf(await f.client.call('create_session', { template: 'desktop', size }))).session;
  await f.client.call('exec', { session: f.session, command: `mkdir -p ${f.work}` });
  const box = await sandboxOf(f.client, f.session);
  f.host = (p) => path.join(box.dir, 'home', path.relative('/home/user', p));
  f.links = JSON.parse(textOf(await f.client.call('start_stream', { session: f.session })));
  f.browser = await launchChromium();
  f.stop = async () => {
    await f.browser?.close();
    await f.client?.call('kill_session', { session: f.session }).catch(() => {});
    await f.client?.close();
    await f.daemon?.stop();
  };
  return f;
}
