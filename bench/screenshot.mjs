// Full-screen screenshot through the bridge (MCP stdio, end to end: call,
// PNG, base64, JSON line, parse) against scrot on the same display.
// Usage: node bench/screenshot.mjs [rounds]
import { desktopWithPage, timeAsync, timeCommand, median, printTable } from './lib.mjs';
import { imageOf } from '../tests/integration/lib.mjs';

const rounds = Number(process.argv[2] || 30);
const { bridge, desktop, close } = await desktopWithPage();
try {
  let bytes = 0;
  await timeAsync(3, () => bridge.call('screenshot')); // warm up
  const bridgeTimes = await timeAsync(rounds, async () => {
    const shot = await bridge.call('screenshot');
    bytes = Buffer.from(imageOf(shot).data, 'base64').length;
  });
  const out = `/tmp/lizard-bench-scrot-${process.pid}.png`;
  const scrotTimes = timeCommand(rounds, 'scrot', ['-o', '-p', out], desktop.env);
  const ratio = (median(scrotTimes) / median(bridgeTimes)).toFixed(1);
  printTable(`Full-screen screenshot, 1280x800, Chromium showing a page (${rounds} rounds, PNG ${bytes} bytes)`, [
    { name: 'lizard-bridge screenshot (MCP stdio)', times: bridgeTimes, ratio: `${ratio}x faster` },
    { name: 'scrot -p (process per shot)', times: scrotTimes, ratio: '1x' },
  ]);
} finally {
  await close();
}
