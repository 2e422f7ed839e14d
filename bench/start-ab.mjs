// SPDX-License-Identifier: MIT
// Two builds' session starts side by side: create_session template=base to
// the end of its first exec, alternating between a stdio bridge of each
// build, so that the machine's load falls on both alike; medians, the
// fastest start, and the ratio. Starts are 0.5 s apart.
//
// Usage: node bench/start-ab.mjs OLD_BINARY NEW_BINARY [rounds]
// Needs a root daemon's sandbox, as the suite runs.
import { median } from './lib.mjs';
import { sleep } from '../tests/lib/process.mjs';
import { connectBridge, textOf } from '../tests/lib/mcp.mjs';

const [oldBin, newBin, roundsText] = process.argv.slice(2);
if (!oldBin || !newBin) {
  console.error('usage: node bench/start-ab.mjs OLD_BINARY NEW_BINARY [rounds]');
  process.exit(2);
}
const rounds = Number(roundsText || 15);
const SETTLE_MS = 500;
const bridges = [];
try {
  for (const bin of [oldBin, newBin]) bridges.push({ bin, times: [], bridge: await connectBridge([], { bin }) });
  for (let i = 0; i < rounds; i++) {
    for (const b of bridges) {
      const t0 = performance.now();
      const created = await b.bridge.call('create_session', { template: 'base' });
      if (created.isError) throw new Error(`${b.bin}: ${textOf(created)}`);
      const { session } = created.structuredContent;
      await b.bridge.call('exec', { session, command: 'true' });
      b.times.push(performance.now() - t0);
      await b.bridge.call('kill_session', { session });
      // What a daemon does after a start (its next spare disk, made once
      // no start runs) is over before the other's start.
      await sleep(SETTLE_MS);
    }
  }
  console.log(`\nSession start, create_session template=base to first exec (${rounds} each, alternating)\n`);
  console.log('| build | median | fastest |');
  console.log('|---|---:|---:|');
  for (const b of bridges) console.log(`| ${b.bin} | ${median(b.times).toFixed(1)} ms | ${Math.min(...b.times).toFixed(1)} ms |`);
  console.log(`\nnew / old: ${(median(bridges[1].times) / median(bridges[0].times)).toFixed(2)}`);
} finally {
  for (const b of bridges) await b.bridge.close().catch(() => {});
}
