// SPDX-License-Identifier: MIT
// Writable roots, snapshots and restores: create_session template=base to
// its first exec with the writable root and with the read-only host root
// of before (LIZARD_BENCH_READ_ONLY_ROOT=1) in the same run, a snapshot of
// a session that changed 100 MB, and a restore of a base snapshot to its
// first exec; and the first start after the host's /etc changed, which
// copies what others may read of it (sandbox/root_copy.h); and
// fork_session of a desktop to the fork's first screenshot; and the base
// start again with a sandbox started ahead (--warm-sandboxes 1). The
// first exec of each start is also reported alone: what running through
// the overlays costs.
//
// Usage: node bench/images.mjs [rounds]   (scripts/bench.sh runs it)
// Needs a root daemon (a writable root needs idmapped mounts).
import fs from 'node:fs';
import { median, percentile } from './lib.mjs';
import { startDaemon } from '../tests/lib/bridge.mjs';
import { httpClient, strictCall } from '../tests/lib/mcp.mjs';
import { tempDir, sleep } from '../tests/lib/process.mjs';

const rounds = Number(process.argv[2] || 10);
const SETTLE_MS = 1000; // between the interleaved starts
const ms = (v) => `${v.toFixed(1)} ms`;
const dataDir = tempDir('lizard-bench-images-');

async function bridge(env = {}, args = []) {
  const daemon = await startDaemon({ args: ['--data-dir', dataDir, ...args], env });
  const client = await httpClient(daemon);
  const call = strictCall(client);
  return { call, close: async () => { await client.close(); await daemon.stop(); } };
}

// Milliseconds from create_session to the end of its first exec; the
// exec's own into execs, when given.
async function startToExec(b, template, execs) {
  const t0 = performance.now();
  const { session } = await b.call('create_session', { template });
  const t1 = performance.now();
  await b.call('exec', { session, command: 'true' });
  const took = performance.now() - t0;
  execs?.push(performance.now() - t1);
  await b.call('kill_session', { session });
  return took;
}

const writable = await bridge();
const readOnly = await bridge({ LIZARD_BENCH_READ_ONLY_ROOT: '1' });
// A sandbox started ahead for each plain session (sandbox/pool.h); the
// other two rounds give it time to start the next.
const warm = await bridge({}, ['--warm-sandboxes', '1']);
try {
  const times = { writable: [], readOnly: [], warm: [], changed: [], snapshot: [], restore: [], fork: [] };
  const execs = { writable: [], readOnly: [], warm: [] };
  const daemons = [['writable', writable], ['readOnly', readOnly], ['warm', warm]];
  // One start each first, not counted: the writable daemon's first start
  // copies the host's /etc (the row after a change of /etc measures that),
  // and each daemon's first start finds no spare disk made ahead.
  for (const [, b] of daemons) {
    await startToExec(b, 'base');
    await sleep(SETTLE_MS);
  }
  // Interleaved, so that the machine's load falls on all alike, in an
  // order that turns each round, so that none always comes first; with a
  // pause after each start: what a daemon does after one (formatting its
  // next spare disk, refilling its pool) is then over before the next
  // daemon's start, which it would otherwise slow. Twice the rounds of the
  // other rows, at least 20: two starts differ by a few ms, and one busy
  // moment of the machine moves a median of 10 by as much.
  const startRounds = Math.max(2 * rounds, 20);
  for (let i = 0; i < startRounds; i++) {
    for (let j = 0; j < daemons.length; j++) {
      const [name, b] = daemons[(i + j) % daemons.length];
      times[name].push(await startToExec(b, 'base', execs[name]));
      await sleep(SETTLE_MS);
    }
  }
  const probe = `/etc/lizard-bench-${process.pid}`;
  try {
    for (let i = 0; i < rounds; i++) {
      fs.writeFileSync(probe, `${i}\n`);
      times.changed.push(await startToExec(writable, 'base'));
    }
  } finally {
    fs.rmSync(probe, { force: true });
  }
  const { session } = await writable.call('create_session', { template: 'base' });
  await writable.call('exec', { session, user: 'root', timeout_ms: 120000, command: 'head -c 104857600 /dev/urandom > /usr/bench-100m' });
  const snapshots = [];
  for (let i = 0; i < Math.min(rounds, 5); i++) {
    const t0 = performance.now();
    snapshots.push((await writable.call('snapshot_session', { session })).snapshot);
    times.snapshot.push(performance.now() - t0);
  }
  await writable.call('kill_session', { session });
  const { session: plain } = await writable.call('create_session', { template: 'base' });
  const base = (await writable.call('snapshot_session', { session: plain })).snapshot;
  await writable.call('kill_session', { session: plain });
  for (let i = 0; i < rounds; i++) times.restore.push(await startToExec(writable, base));
  for (const id of [...snapshots, base]) await writable.call('delete_snapshot', { snapshot: id });
  const { session: desk } = await writable.call('create_session', { template: 'desktop', size: '1280x720' });
  try {
    await writable.call('screenshot', { session: desk });
    for (let i = 0; i < Math.min(rounds, 5); i++) {
      const t0 = performance.now();
      const fork = await writable.call('fork_session', { session: desk });
      await writable.call('screenshot', { session: fork.session });
      times.fork.push(performance.now() - t0);
      await writable.call('kill_session', { session: fork.session });
    }
  } finally {
    await writable.call('kill_session', { session: desk });
  }

  const overhead = (median(times.writable) / median(times.readOnly) - 1) * 100;
  const execOverhead = (median(execs.writable) / median(execs.readOnly) - 1) * 100;
  console.log('\nWritable roots, snapshots and restores (one run)\n');
  console.log('| measurement | median | p95 | goal | notes |');
  console.log('|---|---:|---:|---:|---|');
  console.log(`| \`create_session template=base\` to first \`exec\`, writable root | ${ms(median(times.writable))} | ${ms(percentile(times.writable, 95))} | < 50 ms | ${times.writable.length} runs over HTTP, interleaved with the next two rows; fastest ${ms(Math.min(...times.writable))} |`);
  console.log(`| the same, read-only host root (LIZARD_BENCH_READ_ONLY_ROOT=1) | ${ms(median(times.readOnly))} | ${ms(percentile(times.readOnly, 95))} | | writable root adds ${overhead.toFixed(0)}% (goal < 10%); fastest ${ms(Math.min(...times.readOnly))} |`);
  console.log(`| of which the first \`exec\` alone, writable root | ${ms(median(execs.writable))} | ${ms(percentile(execs.writable, 95))} | | through the overlays; read-only host root ${ms(median(execs.readOnly))} (p95 ${ms(percentile(execs.readOnly, 95))}): writable adds ${execOverhead.toFixed(0)}% |`);
  console.log(`| the same, with \`--warm-sandboxes 1\` | ${ms(median(times.warm))} | ${ms(percentile(times.warm, 95))} | < 50 ms | a sandbox started ahead, taken by the session |`);
  console.log(`| the same, just after a change of the host's \`/etc\` | ${ms(median(times.changed))} | ${ms(percentile(times.changed, 95))} | | a copy of what others may read of \`/etc\` (${rounds} runs) |`);
  console.log(`| \`snapshot_session\`, 100 MB changed | ${ms(median(times.snapshot))} | ${ms(percentile(times.snapshot, 95))} | < 2 s | ${times.snapshot.length} runs, processes frozen for the copy |`);
  console.log(`| \`fork_session\` of a desktop to the fork's first \`screenshot\` | ${ms(median(times.fork))} | ${ms(percentile(times.fork, 95))} | | ${times.fork.length} runs, 1280x720 |`);
  console.log(`| restore of a base snapshot to first \`exec\` | ${ms(median(times.restore))} | ${ms(percentile(times.restore, 95))} | < 400 ms | ${rounds} runs |`);
} finally {
  await writable.close();
  await readOnly.close();
  await warm.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
