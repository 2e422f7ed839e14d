// Viewer throughput: frames per second and bytes per second delivered to
// browser viewers (headless Chromium) while a window moves continuously on a
// 1280x800 desktop, for one viewer and for ten.
//
// Usage: node bench/viewer.mjs [seconds]   (scripts/bench.sh runs it)
import { startDaemon, httpClient, textOf, waitFor, sleep, launchChromium } from '../tests/integration/lib.mjs';
import { median } from './lib.mjs';

const seconds = Number(process.argv[2] || 5);
const daemon = await startDaemon();
const client = await httpClient(daemon);
const browser = await launchChromium();
try {
  const session = JSON.parse(textOf(await client.call('create_session', { template: 'desktop', size: '1280x800' }))).session;
  const links = JSON.parse(textOf(await client.call('start_stream', { session })));
  // A terminal that a loop inside the desktop keeps moving, 50 times a second.
  await client.call('launch', { session, command: 'xterm -geometry 80x24+0+100 -title mover -e top' });
  await client.call('wait', { session, quiet_ms: 500 });
  await client.call('launch', {
    session,
    command: 'while :; do for x in $(seq 0 16 640) $(seq 640 -16 0); do xdotool search --name mover windowmove %@ $x 120; sleep 0.02; done; done',
  });

  console.log(`\nViewer updates while a window moves continuously (1280x800, ${seconds} s per run)\n`);
  console.log('| viewers | frames/s per viewer (median) | bytes/s per viewer (median) | bytes/s all viewers |');
  console.log('|---:|---:|---:|---:|');
  for (const count of [1, 10]) {
    const pages = [];
    for (let i = 0; i < count; i++) {
      const page = await browser.newPage({ viewport: { width: 1280, height: 830 } });
      await page.goto(links.view_only_url);
      pages.push(page);
    }
    await waitFor(async () => (await Promise.all(pages.map((p) => p.evaluate(() => window.lizardViewer.frames)))).every((f) => f > 0), { timeout: 20000 });
    await sleep(1000);
    const before = await Promise.all(pages.map((p) => p.evaluate(() => ({ ...window.lizardViewer }))));
    await sleep(seconds * 1000);
    const after = await Promise.all(pages.map((p) => p.evaluate(() => ({ ...window.lizardViewer }))));
    const fps = after.map((a, i) => (a.frames - before[i].frames) / seconds);
    const bps = after.map((a, i) => (a.bytes - before[i].bytes) / seconds);
    const total = bps.reduce((x, y) => x + y, 0);
    console.log(`| ${count} | ${median(fps).toFixed(1)} | ${(median(bps) / 1e6).toFixed(2)} MB/s | ${(total / 1e6).toFixed(2)} MB/s |`);
    for (const page of pages) await page.close();
    await sleep(500);
  }
  await client.call('kill_session', { session });
} finally {
  await browser.close();
  await client.close();
  await daemon.stop();
}
