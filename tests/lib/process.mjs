// SPDX-License-Identifier: MIT
// Processes a test starts, and waiting for what they do. Every child
// started here (startProcess), or handed over with killAtExit, is killed
// with its process group when the test runner exits, however the test
// ended, so no X server or daemon outlives the run that made it.
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

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

// Where a process that will not end is: each thread's state and the
// kernel function it sleeps in (a D state there is the kernel's, not ours).
export function stuckReport(pid) {
  const read = (file) => {
    try {
      return fs.readFileSync(file, 'utf8').trim();
    } catch (e) {
      return `(${e.code})`;
    }
  };
  let tasks;
  try {
    tasks = fs.readdirSync(`/proc/${pid}/task`);
  } catch (e) {
    return `pid ${pid}: ${e.code}`;
  }
  return tasks.map((tid) => {
    const at = `/proc/${pid}/task/${tid}`;
    const state = /^\S+ \(.*\) (\S)/.exec(read(`${at}/stat`))?.[1];
    return `thread ${tid} ${read(`${at}/comm`)} state ${state} in ${read(`${at}/wchan`)}\n${read(`${at}/stack`)}`;
  }).join('\n');
}

// Resolves with what exited resolves to, or with null once ms passed.
export const within = (promise, ms) => {
  let timer;
  const late = new Promise((resolve) => { timer = setTimeout(resolve, ms, null); });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
};

export function tempDir(prefix) {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
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

// The child is killed (its group, or itself) when this process exits;
// the function returned forgets it again.
export function killAtExit(child) {
  children.add(child);
  return () => children.delete(child);
}

// Starts a process in its own group so stop() takes its children too.
export function startProcess(command, args, options = {}) {
  const child = spawn(command, args, { detached: true, stdio: 'ignore', ...options });
  const forget = killAtExit(child);
  child.exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  child.exited.then(forget);
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

// Host processes whose command line matches (pgrep -f).
export function pidsMatching(pattern) {
  try {
    return execFileSync('pgrep', ['-f', pattern]).toString().trim().split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

// Every process below pid, as the host sees them.
export function descendants(pid) {
  const parents = new Map();
  for (const p of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      parents.set(Number(p), Number(/^PPid:\s+(\d+)$/m.exec(fs.readFileSync(`/proc/${p}/status`, 'utf8'))[1]));
    } catch {}
  }
  const below = (p) => { for (let q = parents.get(p); q; q = parents.get(q)) if (q === pid) return true; return false; };
  return [...parents.keys()].filter(below);
}
