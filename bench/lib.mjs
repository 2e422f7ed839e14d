// Shared by the benchmarks: a local desktop with Chromium showing a real
// page, timing helpers and the result table.
import { spawnSync, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectBridge, desktopFromLog, startProcess, waitFor, tempDir, imageOf } from '../tests/integration/lib.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

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
  const times = [];
  for (let i = 0; i < n; i++) {
    const start = process.hrtime.bigint();
    const run = spawnSync(command, args, { env, stdio: 'ignore' });
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
    if (run.status !== 0) throw new Error(`${command} ${args.join(' ')} failed`);
  }
  return times;
}

// The bridge on its own 1280x800 desktop, with Chromium showing page.html.
export async function desktopWithPage() {
  const bridge = await connectBridge(['--size', '1280x800']);
  const desktop = desktopFromLog(bridge.log);
  const work = tempDir('lizard-bench-');
  fs.copyFileSync(path.join(here, 'page.html'), path.join(work, 'page.html'));
  execFileSync('convert', ['-size', '480x360', '-seed', '7', 'plasma:fractal', path.join(work, 'photo.png')]);
  const chromium = startProcess('chromium', [
    '--no-sandbox', '--no-first-run', '--disable-background-networking', '--disable-component-update',
    '--disable-sync', '--disable-gpu', '--password-store=basic', `--user-data-dir=${work}/profile`,
    '--window-position=0,0', '--window-size=1280,800', '--hide-scrollbars',
    `file://${work}/page.html`,
  ], { env: desktop.env });
  // Ready when the page has painted and the screen has stopped changing.
  const ready = await waitFor(async () => {
    const shot = await bridge.call('screenshot', { settle: true });
    return !shot.isError && imageOf(shot).data.length > 100000;
  }, { timeout: 60000, interval: 1000 });
  if (!ready) throw new Error('Chromium never showed the page');
  await bridge.call('move_mouse', { x: 1270, y: 790 });
  await bridge.call('screenshot', { settle: true });
  return {
    bridge, desktop,
    async close() {
      await chromium.stop();
      await bridge.close();
      fs.rmSync(work, { recursive: true, force: true });
    },
  };
}

export function printTable(title, rows) {
  console.log(`\n${title}\n`);
  console.log('| measurement | median ms | p95 ms | ratio |');
  console.log('|---|---:|---:|---:|');
  for (const row of rows) {
    console.log(`| ${row.name} | ${median(row.times).toFixed(2)} | ${percentile(row.times, 95).toFixed(2)} | ${row.ratio ?? ''} |`);
  }
}
