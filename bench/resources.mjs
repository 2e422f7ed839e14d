// SPDX-License-Identifier: MIT
// Sizes and pause: pause_session and resume_session latency on a desktop
// with Chromium showing a page, and the memory of that idle desktop as its
// cgroup counts it, with how many such sessions fit in 8 GiB.
//
// Usage: node bench/resources.mjs [rounds]   (scripts/bench.sh runs it)
// Needs a daemon that can create cgroups (root on v1, or v2 delegation).
import { desktopWithPage, median, percentile, timeAsync } from './lib.mjs';

const rounds = Number(process.argv[2] || 20);
const ms = (v) => `${v.toFixed(2)} ms`;
const mib = (bytes) => `${(bytes / 1048576).toFixed(0)} MiB`;

const { bridge, close } = await desktopWithPage();
try {
  const info = async () => {
    const r = await bridge.call('session_info', {});
    if (r.isError) throw new Error(r.content[0].text);
    return r.structuredContent;
  };
  if (!(await info()).resources) throw new Error(`no cgroup for the session: ${bridge.log}`);
  const pause = [];
  const resume = [];
  for (let i = 0; i < rounds; i++) {
    pause.push(...(await timeAsync(1, async () => {
      const r = await bridge.call('pause_session', { session: 'default' });
      if (r.isError) throw new Error(r.content[0].text);
    })));
    resume.push(...(await timeAsync(1, async () => {
      const r = await bridge.call('resume_session', { session: 'default' });
      if (r.isError) throw new Error(r.content[0].text);
    })));
  }
  // Idle: let Chromium finish what the page started, then sample.
  await new Promise((resolve) => setTimeout(resolve, 5000));
  const samples = [];
  for (let i = 0; i < 5; i++) {
    samples.push((await info()).resources.usage.memory_bytes);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const memory = median(samples);
  const fit = Math.floor((8 * 1024 ** 3) / memory);

  console.log('\nPause, resume and idle memory (one run)\n');
  console.log('| measurement | median | p95 | notes |');
  console.log('|---|---:|---:|---|');
  console.log(`| \`pause_session\`, desktop with Chromium on a page | ${ms(median(pause))} | ${ms(percentile(pause, 95))} | ${rounds} runs, over MCP stdio |`);
  console.log(`| \`resume_session\`, the same | ${ms(median(resume))} | ${ms(percentile(resume, 95))} | ${rounds} runs |`);
  console.log(`| idle desktop memory (Xvnc + openbox + Chromium on one page), from the cgroup | ${mib(memory)} | | ${fit} such sessions fit in 8 GiB (page cache included) |`);
} finally {
  await close();
}
