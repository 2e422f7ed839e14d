// SPDX-License-Identifier: MIT
// open_url and launch with screenshot: true wait for what they started to
// draw, then for the screen to settle; a quiet screen before the program
// drew anything is not "settled". Long waits report progress and stop when
// the client cancels them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connectBridge, textOf, imageOf } from '../lib/mcp.mjs';
import { decodePng, pixelAt } from '../lib/png.mjs';
import { startPageServer, skipWithoutPages } from '../lib/pages.mjs';

const pages = {
  '/color': `<!doctype html><title>cold start</title>
    <body style="margin:0;background:#12ab34"><h1 style="color:white">first paint</h1></body>`,
};

let bridge, server;

before(async () => {
  server = await startPageServer(pages);
  bridge = await connectBridge([]);
});

after(async () => {
  await bridge?.close();
  await server?.close();
});

const texts = (result) => result.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');

test('open_url on a cold start returns a screenshot of the painted page', async (t) => {
  if (skipWithoutPages(t, server)) return;
  const opened = await bridge.call('open_url', { url: `${server.url}/color`, screenshot: true });
  assert.equal(opened.isError, false, textOf(opened));
  assert.match(textOf(opened), /^Started Chromium/, 'Chromium was not running before this call');
  try {
    assert.match(texts(opened), /The screen changed after \d+ ms, then was quiet for \d+ ms\./);
    const png = decodePng(imageOf(opened).data);
    assert.deepEqual(pixelAt(png, 640, 600), [0x12, 0xab, 0x34], `the page colour, not the empty desktop: ${texts(opened)}`);
  } finally {
    await bridge.call('press', { keys: 'ctrl+w' });
  }
});

test('launch with a screenshot shows the window it opened', async () => {
  const launched = await bridge.call('launch', {
    command: 'xterm -geometry 30x6+200+300 -bg "#c00000" -title settle-red', screenshot: true,
  });
  assert.equal(launched.isError, false, textOf(launched));
  assert.match(texts(launched), /The screen changed after \d+ ms, then was quiet for \d+ ms\./);
  const png = decodePng(imageOf(launched).data);
  assert.deepEqual(pixelAt(png, 260, 340), [0xc0, 0, 0], 'the new terminal is in the screenshot');
  await bridge.call('press', { keys: 'alt+F4' });
});

test('waiting for a program that never draws reports progress and stops when cancelled', async () => {
  const progress = [];
  const controller = new AbortController();
  let gotTwo;
  const twoNotes = new Promise((resolve) => (gotTwo = resolve));
  const started = Date.now();
  const waiting = bridge.client.callTool(
    { name: 'launch', arguments: { command: 'sleep 30', screenshot: true } },
    undefined,
    {
      signal: controller.signal,
      timeout: 30000,
      onprogress: (p) => {
        progress.push(p);
        if (progress.length === 2) gotTwo();
      },
    },
  );
  await twoNotes;
  controller.abort('enough');
  await assert.rejects(waiting, /abort|enough|cancel/i);
  assert.equal(progress[0].total, 15000);
  assert.ok(progress[1].progress > progress[0].progress, JSON.stringify(progress));
  assert.match(progress[0].message, /^\d+ of 15000 ms$/);
  // Input runs after the launch in the same lane: it is answered once the
  // cancelled wait has stopped, long before its 10 s would have run out.
  const moved = await bridge.call('move_mouse', { x: 10, y: 10 });
  assert.equal(moved.isError, false, textOf(moved));
  assert.ok(Date.now() - started < 9000, `answered ${Date.now() - started} ms after the launch`);
  assert.match(bridge.log, /tool launch cancelled by the client/);
});
