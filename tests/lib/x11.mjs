// SPDX-License-Identifier: MIT
// X servers for the tests, each with a cookie of its own: a real TigerVNC
// Xvnc on a private UNIX socket, Xvfb behind a password-protected x11vnc on
// loopback, and the local desktop of a bridge's session, whose X socket
// sits in the sandbox's network namespace and is relayed to a host display
// number (x11-relay.py) so host X clients can reach it.
import { spawn, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startProcess, tempDir, waitFor } from './process.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

// An Xauthority file with one FamilyWild entry that fits any display.
function writeXauthority(file) {
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

// The local desktop the bridge started, as its log line describes it.
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
