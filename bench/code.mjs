// SPDX-License-Identifier: MIT
// The code interpreter: run_code("1+1") on a warm context and 1 MB of
// stdout through run_code, each against jupyter_client driving the same
// kind of kernel (bench/code-jupyter.py) in the same run; and
// create_session template=interpreter to its first result.
//
// Usage: node bench/code.mjs [rounds]   (scripts/bench.sh runs it)
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { StdioBridge, median, percentile, timeAsync } from './lib.mjs';

const rounds = Number(process.argv[2] || 100);
const ms = (v) => `${v.toFixed(2)} ms`;
const jupyterScript = fileURLToPath(new URL('./code-jupyter.py', import.meta.url));

const bridge = new StdioBridge(['--size', '320x240']);
await bridge.start();
try {
  const created = await bridge.call('create_session', { template: 'interpreter' });
  if (created.isError) throw new Error(created.content[0].text);
  const session = created.structuredContent.session;
  const run = async (code) => {
    const r = await bridge.call('run_code', { session, code });
    if (r.isError || r.structuredContent.error) throw new Error(JSON.stringify(r));
    return r.structuredContent;
  };
  for (let i = 0; i < 20; i++) await run('1+1');
  const roundTrip = await timeAsync(rounds, async () => {
    if ((await run('1+1')).results[0].text !== '2') throw new Error('1+1 is not 2');
  });
  const megabyte = await timeAsync(Math.max(3, Math.floor(rounds / 20)), async () => {
    const r = await run("import sys\nsys.stdout.write('x' * (1 << 20))\nsys.stdout.flush()");
    const got = r.logs.stdout.reduce((n, chunk) => n + chunk.length, 0);
    if (got !== 1 << 20) throw new Error(`1 MB came as ${got} bytes`);
  });
  await bridge.call('kill_session', { session });

  // create_session to the first result, a fresh interpreter each time.
  const firstResult = await timeAsync(Math.max(3, Math.floor(rounds / 20)), async () => {
    const made = await bridge.call('create_session', { template: 'interpreter' });
    const id = made.structuredContent.session;
    const r = await bridge.call('run_code', { session: id, code: '1+1' });
    if (r.structuredContent.results[0].text !== '2') throw new Error('first result');
    await bridge.call('kill_session', { session: id });
  });

  const jupyter = JSON.parse(execFileSync('/usr/bin/python3', [jupyterScript, String(rounds)], { encoding: 'utf8' }));
  const ratio = (a, b) => `${(median(a) / median(b)).toFixed(2)}x`;
  console.log('\nCode interpreter (one run)\n');
  console.log('| measurement | lizard-bridge `run_code` (MCP stdio) | jupyter_client `execute_interactive` | ratio |');
  console.log('|---|---:|---:|---:|');
  console.log(`| \`1+1\` on a warm kernel, median | ${ms(median(roundTrip))} | ${ms(median(jupyter.round_trips))} | ${ratio(roundTrip, jupyter.round_trips)} |`);
  console.log(`| \`1+1\` on a warm kernel, p95 | ${ms(percentile(roundTrip, 95))} | ${ms(percentile(jupyter.round_trips, 95))} | |`);
  console.log(`| 1 MB of stdout, median | ${ms(median(megabyte))} | ${ms(median(jupyter.megabyte))} | ${ratio(megabyte, jupyter.megabyte)} |`);
  console.log(`| a fresh kernel to its first result | ${ms(median(firstResult))} (\`create_session template=interpreter\`, sandboxed) | ${ms(jupyter.ready_ms)} (\`start_new_kernel\`, no sandbox, no first call) | |`);
  console.log(`\n${roundTrip.length} round trips each; the kernel is ipykernel ${execFileSync('/usr/bin/python3', ['-c', 'import ipykernel; print(ipykernel.__version__)'], { encoding: 'utf8' }).trim()} in both.`);
} finally {
  await bridge.close();
}
