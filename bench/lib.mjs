// SPDX-License-Identifier: MIT
// Shared by the benchmarks: the bridge on its own desktop with Chromium
// showing a real page, a lean MCP stdio client, timing helpers and tables.
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../tests/lib/process.mjs';
import { bridgeBin, bridgeEnv } from '../tests/lib/bridge.mjs';
import { desktopFromLog } from '../tests/lib/x11.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

// Settles as promise does, or fails after ms naming what did not answer:
// every wait of a benchmark has a deadline, so one stuck step shows as a
// row that says so instead of a run that never ends.
export function within(promise, ms, what) {
  let timer;
  const late = new Promise((resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

// A benchmark that starts servers and browsers ends them however it ends.
// The cleanup returned runs once: at a normal end, or on SIGINT, SIGTERM,
// SIGHUP or an error nobody caught, after which the process exits and
// tests/lib/process.mjs's exit hook kills whatever child is still there (a
// second signal exits at once). Node's default for these signals is to die
// without that hook, which is how an interrupted run used to leave its X
// server and websockify behind.
export function endOnSignals(cleanup, deadline = 30000) {
  let ending = null;
  const end = () => (ending ??= within(Promise.resolve().then(cleanup), deadline, 'ending the benchmark\'s processes')
    .catch((e) => console.error(`bench: ${e.message}`)));
  const endThenExit = (why, code) => {
    if (ending) process.exit(code);
    console.error(`bench: ${why}: ending its processes`);
    end().finally(() => process.exit(code));
  };
  for (const [signal, number] of [['SIGINT', 2], ['SIGTERM', 15], ['SIGHUP', 1]]) {
    process.on(signal, () => endThenExit(signal, 128 + number));
  }
  for (const event of ['uncaughtException', 'unhandledRejection']) {
    process.on(event, (e) => endThenExit(e?.stack ?? String(e), 1));
  }
  return end;
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

export async function timeAsync(n, fn) {
  const times = [];
  for (let i = 0; i < n; i++) {
    const start = process.hrtime.bigint();
    await fn(i);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return times;
}

export function timeCommand(n, command, args, env) {
  return timeCommands(n, [[command, args]], env);
}

// Runs a pipeline of commands one after another, n times; times each round.
export function timeCommands(n, commands, env) {
  const times = [];
  for (let i = 0; i < n; i++) {
    const start = process.hrtime.bigint();
    for (const [command, args] of commands) {
      const run = spawnSync(command, args, { env, stdio: 'ignore' });
      if (run.status !== 0) throw new Error(`${command} ${args.join(' ')} failed`);
    }
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return times;
}

// A lean MCP client over stdio, as an agent framework would run one: one
// JSON line out, one parsed JSON line back. The official SDK's own cost
// (schema validation of every result) is measured separately.
export class StdioBridge {
  constructor(args, env = {}) {
    this.child = spawn(bridgeBin, ['stdio', ...args], { stdio: ['pipe', 'pipe', 'pipe'], env: bridgeEnv(env) });
    this.log = '';
    this.child.stderr.on('data', (d) => (this.log += d));
    this.pending = new Map();
    this.nextId = 1;
    // Chunks are kept until a newline arrives, then joined once.
    let chunks = [];
    this.child.stdout.on('data', (chunk) => {
      let start = 0;
      let nl;
      while ((nl = chunk.indexOf(10, start)) >= 0) {
        chunks.push(chunk.subarray(start, nl));
        const message = JSON.parse(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
        chunks = [];
        start = nl + 1;
        this.pending.get(message.id)?.(message);
        this.pending.delete(message.id);
      }
      if (start < chunk.length) chunks.push(chunk.subarray(start));
    });
  }
  request(method, params) {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
    });
  }
  async call(name, args = {}) {
    const reply = await this.request('tools/call', { name, arguments: args });
    if (reply.error) throw new Error(reply.error.message);
    return reply.result;
  }
  async start() {
    await this.request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } });
    this.child.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  }
  close() {
    this.child.stdin.end();
    return new Promise((resolve) => this.child.on('exit', resolve));
  }
}

export const imageBytes = (result) => Buffer.from(result.content.find((c) => c.type === 'image').data, 'base64');

// The bridge on its own 1280x800 desktop, with Chromium showing page.html
// (text, links, a form and a photograph-like image).
export async function desktopWithPage() {
  const bridge = new StdioBridge(['--size', '1280x800']);
  await bridge.start();
  const desktop = desktopFromLog(bridge.log);
  // The pages go into the sandbox's HOME, the only place its browser sees.
  const work = path.join(desktop.home, 'bench');
  fs.mkdirSync(work, { recursive: true });
  for (const file of fs.readdirSync(here).filter((f) => f.endsWith('.html'))) {
    fs.copyFileSync(path.join(here, file), path.join(work, file));
  }
  execFileSync('convert', ['-size', '480x360', '-seed', '7', 'plasma:fractal', path.join(work, 'photo.png')]);
  const home = (await bridge.call('exec', { command: 'printf %s "$HOME"' })).structuredContent.stdout;
  const url = (file) => `file://${home}/bench/${file}`;
  await bridge.call('open_url', { url: url('page.html'), screenshot: true });
  // Ready when the page, image included, has painted and settled.
  const ready = await waitFor(async () => {
    const shot = await bridge.call('screenshot', { settle: true });
    return imageBytes(shot).length > 300000;
  }, { timeout: 60000, interval: 500 });
  if (!ready) throw new Error('Chromium never showed the page');
  return {
    bridge, desktop, work, url,
    async close() {
      await bridge.close();
    },
  };
}

export function printTable(title, rows) {
  console.log(`\n${title}\n`);
  console.log('| measurement | median | p95 | ratio |');
  console.log('|---|---:|---:|---:|');
  for (const row of rows) {
    const unit = row.unit ?? 'ms';
    const fmt = (v) => `${v.toFixed(unit === 'ms' ? 2 : 0)} ${unit}`;
    console.log(`| ${row.name} | ${fmt(median(row.times))} | ${row.noP95 ? '' : fmt(percentile(row.times, 95))} | ${row.ratio ?? ''} |`);
  }
}
