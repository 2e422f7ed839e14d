// SPDX-License-Identifier: MIT
// X clients the tests drive and watch on a display (env: its DISPLAY and
// XAUTHORITY, from x11.mjs): an xterm that copies what is typed into a
// file, xev logging events, windows found by name, the pointer's place,
// and the X server's own picture of the screen.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { startProcess, waitFor } from './process.mjs';

// The X server's own picture of the root window, as raw RGB bytes.
export function captureRootRgb(env) {
  const xwd = execFileSync('xwd', ['-root', '-silent'], { env, maxBuffer: 64 << 20 });
  return execFileSync('convert', ['xwd:-', '-depth', '8', 'rgb:-'], { input: xwd, maxBuffer: 64 << 20 });
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

// What a typing target's file holds once at least `length` characters (UTF-16
// units, as JavaScript counts them) have arrived, or null at the deadline.
export function typedText(file, length, options) {
  return waitFor(() => {
    const content = fs.readFileSync(file, 'utf8');
    return content.length >= length ? content : null;
  }, options);
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
