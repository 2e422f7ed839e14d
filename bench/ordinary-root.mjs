// SPDX-License-Identifier: MIT
// What a writable root costs a daemon that is not root, whose sessions'
// overlays are a fuse-overlayfs process inside the sandbox
// (sandbox/root_fuse.h): create_session template=base to its first exec,
// and a first Python start that reads some hundred files of /usr, with the
// FUSE root (also with a sandbox started ahead, --warm-sandboxes 1), with
// the read-only host root (--no-fuse-root),
// and, for comparison, on a root daemon's kernel overlay; interleaved in
// one run.
//
// Usage: node bench/ordinary-root.mjs [rounds]   (scripts/bench.sh runs it)
// Needs root (to start the daemons as uid 65534 and as root) and
// fuse-overlayfs.
import { median, percentile } from './lib.mjs';
import { startDaemon, startOrdinaryDaemon } from '../tests/lib/bridge.mjs';
import { httpClient, strictCall } from '../tests/lib/mcp.mjs';

const rounds = Number(process.argv[2] || 10);
const ms = (v) => `${v.toFixed(1)} ms`;
const PYTHON = 'python3 -c "import json, email.parser, http.server, sqlite3, asyncio, decimal"';

async function connect(daemon) {
  const client = await httpClient(daemon);
  const call = strictCall(client);
  return { call, close: async () => { await client.close(); await daemon.stop(); } };
}

// Milliseconds to the end of the first exec, and the Python start's own.
async function round(b) {
  const t0 = performance.now();
  const { session } = await b.call('create_session', { template: 'base' });
  await b.call('exec', { session, command: 'true' });
  const start = performance.now() - t0;
  const t1 = performance.now();
  const r = await b.call('exec', { session, command: PYTHON });
  const python = performance.now() - t1;
  if (r.exit_code !== 0) throw new Error(`python: ${r.stderr}`);
  await b.call('kill_session', { session });
  return { start, python };
}

const kinds = {
  fuse: await connect(await startOrdinaryDaemon()),
  // The same with a sandbox started ahead (sandbox/pool.h); the other
  // kinds' rounds give it time to start the next.
  fuseWarm: await connect(await startOrdinaryDaemon({ args: ['--warm-sandboxes', '1'] })),
  readOnly: await connect(await startOrdinaryDaemon({ args: ['--no-fuse-root'] })),
  kernel: await connect(await startDaemon()),
};
try {
  const times = Object.fromEntries(Object.keys(kinds).map((k) => [k, { start: [], python: [] }]));
  for (let i = 0; i < rounds; i++) {
    for (const [kind, b] of Object.entries(kinds)) {
      const r = await round(b);
      times[kind].start.push(r.start);
      times[kind].python.push(r.python);
    }
  }
  const row = (label, t, note) =>
    console.log(`| ${label} | ${ms(median(t.start))} | ${ms(percentile(t.start, 95))} | ${ms(median(t.python))} | ${ms(percentile(t.python, 95))} | ${note} |`);
  const ratio = (a, b) => (median(a) / median(b)).toFixed(2);
  console.log(`\nA writable root for a daemon that is not root (one run, ${rounds} rounds, interleaved)\n`);
  console.log('| root | start to first `exec`, median | p95 | first Python start, median | p95 | notes |');
  console.log('|---|---:|---:|---:|---:|---|');
  row('ordinary daemon, fuse-overlayfs (writable)', times.fuse,
    `start ×${ratio(times.fuse.start, times.readOnly.start)}, Python ×${ratio(times.fuse.python, times.readOnly.python)} of the read-only root`);
  row('ordinary daemon, fuse-overlayfs, `--warm-sandboxes 1`', times.fuseWarm,
    `start ×${ratio(times.fuseWarm.start, times.readOnly.start)} of the read-only root: the sandbox was started ahead`);
  row('ordinary daemon, host root read-only', times.readOnly, '--no-fuse-root');
  row('root daemon, kernel overlay (writable)', times.kernel, 'idmapped lowers, for comparison');
} finally {
  for (const b of Object.values(kinds)) await b.close();
}
