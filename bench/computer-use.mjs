// SPDX-License-Identifier: MIT
// lizard-bridge against the tools computer-use agents use today, in one run
// on one 1280x800 desktop showing a text-and-image page in Chromium:
// screenshots (scrot, scrot + ImageMagick resize), input (xdotool), typing
// (xdotool type) and settling (a fixed 2 s sleep). Prints medians, p95 and
// ratios as Markdown tables.
//
// Usage: node bench/computer-use.mjs   (scripts/bench.sh sets everything up)
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import {
  desktopWithPage, timeAsync, timeCommand, timeCommands, median, printTable, imageBytes,
} from './lib.mjs';
import { waitFor, sleep } from '../tests/lib/process.mjs';
import { decodePng, pixelAt } from '../tests/lib/png.mjs';

const quick = process.env.LIZARD_BENCH_QUICK;
const SHOTS = quick ? 5 : 100, INPUTS = quick ? 5 : 60, TYPING_ROUNDS = quick ? 1 : 3, SETTLE_ROUNDS = 5;
const ratio = (base, ours) => `${(median(base) / median(ours)).toFixed(1)}x`;

const { bridge, desktop, work, url, close } = await desktopWithPage();
const env = desktop.env;
const results = {};
try {
  // Screenshots.
  await timeAsync(3, () => bridge.call('screenshot'));
  const unchanged = await timeAsync(SHOTS, () => bridge.call('screenshot'));
  // The bridge's own part of that: until the reply starts to arrive.
  let firstByte = 0n;
  bridge.child.stdout.prependListener('data', () => { if (!firstByte) firstByte = process.hrtime.bigint(); });
  const unchangedFirstByte = [];
  for (let i = 0; i < SHOTS; i++) {
    firstByte = 0n;
    const t = process.hrtime.bigint();
    await bridge.call('screenshot');
    unchangedFirstByte.push(Number(firstByte - t) / 1e6);
  }
  let bytes = 0;
  const afterPointer = [];
  for (let i = 0; i < SHOTS; i++) {
    await bridge.call('move_mouse', { x: 300 + (i % 2) * 400, y: 400 });
    const t = process.hrtime.bigint();
    bytes = imageBytes(await bridge.call('screenshot')).length;
    afterPointer.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  const afterScroll = [];
  for (let i = 0; i < SHOTS; i++) {
    await bridge.call('scroll', { x: 400, y: 400, direction: i % 2 ? 'up' : 'down', amount: 2 });
    await bridge.call('wait', { quiet_ms: 150 });
    const t = process.hrtime.bigint();
    await bridge.call('screenshot');
    afterScroll.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  const shotFile = path.join(work, 'scrot.png');
  const scrot = timeCommand(SHOTS, 'scrot', ['-o', '-p', shotFile], env);
  const scrotResize = timeCommands(SHOTS, [
    ['scrot', ['-o', '-p', shotFile]],
    ['convert', [shotFile, '-resize', '1280x800!', shotFile]],
  ], env);
  printTable(`Full-screen screenshot, 1280x800, Chromium page with text and an image (${SHOTS} rounds; PNG ${bytes} bytes)`, [
    { name: 'bridge, screen unchanged', times: unchanged, ratio: `${ratio(scrot, unchanged)} vs scrot` },
    { name: 'bridge, screen unchanged: until the reply starts (the rest is the client reading it)', times: unchangedFirstByte },
    { name: 'bridge, after the pointer moved', times: afterPointer, ratio: `${ratio(scrot, afterPointer)} vs scrot, ${ratio(scrotResize, afterPointer)} vs scrot+resize` },
    { name: 'bridge, after scrolling the page (most of the screen new)', times: afterScroll, ratio: `${ratio(scrot, afterScroll)} vs scrot, ${ratio(scrotResize, afterScroll)} vs scrot+resize` },
    { name: 'scrot -p', times: scrot, ratio: '1x' },
    { name: 'scrot -p + convert -resize (reference pipeline)', times: scrotResize },
  ]);
  results.screenshot = { unchanged: median(unchanged), afterPointer: median(afterPointer), afterScroll: median(afterScroll), scrot: median(scrot), scrotResize: median(scrotResize) };

  // Input round trips.
  const click = await timeAsync(INPUTS, () => bridge.call('click', { x: 1200, y: 760 }));
  const xdoClick = timeCommand(INPUTS, 'xdotool', ['mousemove', '1200', '760', 'click', '1'], env);
  const key = await timeAsync(INPUTS, () => bridge.call('press', { keys: 'shift' }));
  const xdoKey = timeCommand(INPUTS, 'xdotool', ['key', 'shift'], env);
  printTable(`Input round trip (${INPUTS} rounds)`, [
    { name: 'bridge click', times: click, ratio: `${ratio(xdoClick, click)} faster` },
    { name: 'xdotool mousemove + click', times: xdoClick, ratio: '1x' },
    { name: 'bridge press', times: key, ratio: `${ratio(xdoKey, key)} faster` },
    { name: 'xdotool key', times: xdoKey, ratio: '1x' },
  ]);

  // An action whose result shows 200 ms later: settled screenshot vs sleep.
  await bridge.call('open_url', { url: url('button.html'), screenshot: true });
  await sleep(1000);
  if (process.env.LIZARD_BENCH_DEBUG) fs.writeFileSync('/tmp/bench-settle.png', imageBytes(await bridge.call('screenshot')));
  let saves = 0;
  const showsSave = (png) => {
    const [r, g, b] = pixelAt(png, 640, 500);
    return saves % 2 ? r === 0x20 && g === 0x60 && b === 0xc0 : r === 0x20 && g === 0xa0 && b === 0x40;
  };
  const settledCorrect = [], sleepCorrect = [];
  const settled = await timeAsync(SETTLE_ROUNDS, async () => {
    const result = await bridge.call('click', { x: 160, y: 165, screenshot: true });
    saves++;
    settledCorrect.push(showsSave(decodePng(imageBytes(result).toString('base64'))));
  });
  const slept = await timeAsync(SETTLE_ROUNDS, async () => {
    await bridge.call('click', { x: 160, y: 165 });
    await sleep(2000);
    saves++;
    sleepCorrect.push(showsSave(decodePng(imageBytes(await bridge.call('screenshot')).toString('base64'))));
  });
  printTable(`Click a button whose result shows after 200 ms, then screenshot (${SETTLE_ROUNDS} rounds)`, [
    { name: `bridge click with screenshot: true (showed the result: ${settledCorrect.filter(Boolean).length}/${SETTLE_ROUNDS})`, times: settled, ratio: `${ratio(slept, settled)} faster` },
    { name: `click + sleep 2 s + screenshot (showed the result: ${sleepCorrect.filter(Boolean).length}/${SETTLE_ROUNDS})`, times: slept, ratio: '1x' },
  ]);

  // Typing 1000 mixed characters into a terminal. Last: xdotool type leaves
  // the keyboard mapping changed behind it.
  const unit = 'Hello, wörld — ñ € 漢字! The quick brown fox jumps over 13 lazy dogs; ÅÆØ ß ~@#%. ';
  const text = [...unit.repeat(20)].slice(0, 1000).join('');
  const typedFile = path.join(desktop.home, 'typed.txt');
  await bridge.call('launch', { command: "xterm -geometry 100x30+100+100 -title typing -u8 -e sh -c 'stty -echo -icanon; exec cat >> typed.txt'" });
  await waitFor(() => fs.existsSync(typedFile), { timeout: 15000 });
  await bridge.call('click', { x: 400, y: 300, screenshot: true });
  const wrongCharacters = (got) => {
    const a = [...got], b = [...text];
    let wrong = Math.abs(a.length - b.length);
    for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) wrong++;
    return wrong;
  };
  // Time until the last character arrived: done at 1000 characters, or
  // once nothing more has come for a second (characters lost on the way).
  const typeRound = async (send) => {
    fs.truncateSync(typedFile, 0);
    const start = process.hrtime.bigint();
    let last = start, length = 0;
    const sending = send();
    for (;;) {
      const now = [...fs.readFileSync(typedFile, 'utf8')].length;
      if (now !== length) {
        length = now;
        last = process.hrtime.bigint();
      }
      if (length >= 1000 || Number(process.hrtime.bigint() - last) / 1e6 > 1000) break;
      await sleep(2);
    }
    await sending;
    const ms = Number(last - start) / 1e6;
    return { ms, length, wrong: wrongCharacters(fs.readFileSync(typedFile, 'utf8')) };
  };
  const bridgeTyping = [], xdoTyping = [];
  for (let i = 0; i < TYPING_ROUNDS; i++) bridgeTyping.push(await typeRound(() => bridge.call('type', { text })));
  for (let i = 0; i < TYPING_ROUNDS; i++) {
    xdoTyping.push(await typeRound(() => new Promise((resolve) => spawn('xdotool', ['type', text], { env }).on('exit', resolve))));
  }
  const cps = (rounds) => rounds.map((r) => r.length / (r.ms / 1000));
  printTable(`Typing 1000 mixed characters (ASCII, Latin-1, CJK, symbols) into xterm (${TYPING_ROUNDS} rounds)`, [
    { name: `bridge type (wrong characters: ${bridgeTyping.map((r) => r.wrong).join(', ')})`, times: cps(bridgeTyping), unit: 'chars/s', noP95: true, ratio: `${(median(cps(bridgeTyping)) / median(cps(xdoTyping))).toFixed(1)}x the throughput` },
    { name: `xdotool type, default delay (wrong characters: ${xdoTyping.map((r) => r.wrong).join(', ')})`, times: cps(xdoTyping), unit: 'chars/s', noP95: true, ratio: '1x' },
  ]);
  results.typing = { bridge: bridgeTyping, xdotool: xdoTyping };
  await bridge.call('press', { keys: 'ctrl+c' }); // ends cat, and with it the terminal

} finally {
  await close();
}
