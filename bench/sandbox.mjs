// SPDX-License-Identifier: MIT
// The sandbox's costs: an exec round trip, the time from create_session to
// the first screenshot of a desktop with and without the sandbox and with
// the sandbox but without its network helper (the same run, alternating),
// write_file + read_file throughput, and a TCP transfer from a test host in
// a network namespace (tests/lib/testhost.mjs) through the sandbox's
// user-mode network.
//
// Usage: node bench/sandbox.mjs [rounds]   (scripts/bench.sh runs it)
// LIZARD_BENCH_UNSANDBOXED=1 is an internal switch for this comparison only:
// it starts sessions with no isolation at all and is not for real use.
import { StdioBridge, median, percentile, timeAsync } from './lib.mjs';
import { startTestHost, testHostUnavailable } from '../tests/lib/testhost.mjs';

const rounds = Number(process.argv[2] || 10);
const ms = (v) => `${v.toFixed(2)} ms`;

async function startBridge(env) {
  const bridge = new StdioBridge(['--size', '320x240'], env);
  await bridge.start();
  return bridge;
}

const sandboxed = await startBridge({});
const plain = await startBridge({ LIZARD_BENCH_UNSANDBOXED: '1' });
try {
  // exec "true": the whole round trip through MCP, the init and a fork.
  for (let i = 0; i < 20; i++) await sandboxed.call('exec', { argv: ['true'] });
  const exec = await timeAsync(rounds * 20, async () => {
    const r = await sandboxed.call('exec', { argv: ['true'] });
    if (r.structuredContent.exit_code !== 0) throw new Error('exec true failed');
  });

  // create_session -> first screenshot, alternating so both see the same
  // machine load.
  const startup = { sandboxed: [], offline: [], plain: [] };
  for (let i = 0; i < rounds; i++) {
    for (const [name, bridge, network] of [['sandboxed', sandboxed, true], ['offline', sandboxed, false], ['plain', plain, true]]) {
      const start = process.hrtime.bigint();
      const created = await bridge.call('create_session', { template: 'desktop', size: '1280x800', network });
      if (created.isError) throw new Error(created.content[0].text);
      const session = JSON.parse(created.content[0].text).session;
      const shot = await bridge.call('screenshot', { session });
      if (shot.isError) throw new Error(shot.content[0].text);
      startup[name].push(Number(process.hrtime.bigint() - start) / 1e6);
      await bridge.call('kill_session', { session });
    }
  }

  // 1 MB written and read back.
  const bytes = Buffer.alloc(1 << 20);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 131 + 7) & 255;
  const data = bytes.toString('base64');
  const files = await timeAsync(rounds * 2, async () => {
    const w = await sandboxed.call('write_file', { session: 'default', path: '/tmp/bench.bin', data });
    const r = await sandboxed.call('read_file', { session: 'default', path: '/tmp/bench.bin' });
    if (w.isError || r.isError || r.structuredContent.length !== bytes.length) throw new Error('file round trip failed');
  });

  // 64 MB from a test host (beyond this machine's loopback, which the
  // sandbox cannot reach) into a program inside, timed inside; the same
  // program run unsandboxed, on the host's network, for comparison.
  const transferBytes = 64 << 20;
  const transfer = { sandboxed: [], plain: [] };
  const noTestHost = testHostUnavailable();
  if (!noTestHost) {
    const host = await startTestHost();
    try {
      const source = await host.serve('bulk', { bytes: transferBytes });
      const receive = `python3 -c "
import socket, time
s = socket.create_connection(('${host.address}', ${source.port}), 10)
t = time.monotonic(); n = 0
while True:
    b = s.recv(1 << 20)
    if not b: break
    n += len(b)
print(n, (time.monotonic() - t) * 1000)"`;
      for (let i = 0; i < 3; i++) {
        for (const [name, bridge] of [['sandboxed', sandboxed], ['plain', plain]]) {
          const r = await bridge.call('exec', { command: receive });
          const [n, took] = r.structuredContent.stdout.trim().split(' ').map(Number);
          if (n !== transferBytes) throw new Error(`transfer got ${r.structuredContent.stdout} ${r.structuredContent.stderr}`);
          transfer[name].push(took);
        }
      }
    } finally {
      await host.close();
    }
  }
  const rate = (t) => ((transferBytes / (1 << 20)) / (t / 1000)).toFixed(0);

  console.log('\nSandbox costs (one run)\n');
  console.log('| measurement | median | p95 | notes |');
  console.log('|---|---:|---:|---|');
  console.log(`| \`exec\` \`true\`, round trip over MCP stdio | ${ms(median(exec))} | ${ms(percentile(exec, 95))} | ${exec.length} runs |`);
  const added = median(startup.sandboxed) - median(startup.plain);
  console.log(`| \`create_session\` (desktop, 1280x800) to first screenshot, sandboxed | ${ms(median(startup.sandboxed))} | ${ms(percentile(startup.sandboxed, 95))} | ${rounds} runs |`);
  console.log(`| the same without the sandbox | ${ms(median(startup.plain))} | ${ms(percentile(startup.plain, 95))} | the sandbox adds ${ms(added)} |`);
  console.log(`| the same sandboxed with \`network: false\` (no slirp4netns) | ${ms(median(startup.offline))} | ${ms(percentile(startup.offline, 95))} | the network helper adds ${ms(median(startup.sandboxed) - median(startup.offline))} |`);
  if (noTestHost) {
    console.log(`| 64 MB over TCP from a test host in a network namespace into \`exec\` | skipped | | ${noTestHost} |`);
  } else {
    console.log(`| 64 MB over TCP from a test host in a network namespace into \`exec\`, sandboxed | ${ms(median(transfer.sandboxed))} | | ${rate(median(transfer.sandboxed))} MB/s through slirp4netns, 3 runs |`);
    console.log(`| the same without the sandbox | ${ms(median(transfer.plain))} | | ${rate(median(transfer.plain))} MB/s over the veth from the host's network, 3 runs |`);
  }
  const mbps = (t) => (2 / (t / 1000)).toFixed(1);
  console.log(`| \`write_file\` + \`read_file\` of 1 MB | ${ms(median(files))} | ${ms(percentile(files, 95))} | ${mbps(median(files))} MB/s (2 MB moved per round) |`);
} finally {
  await sandboxed.close();
  await plain.close();
}
