// SPDX-License-Identifier: MIT
// screenshot returns exactly what the X server shows.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startProcess, waitFor } from '../lib/process.mjs';
import { connectBridge, imageOf, textOf } from '../lib/mcp.mjs';
import { startXvnc } from '../lib/x11.mjs';
import { windowReady, captureRootRgb } from '../lib/x11-apps.mjs';
import { decodePng, rgbaToRgb, countDifferentPixels } from '../lib/png.mjs';

let x, bridge;
const apps = [];

before(async () => {
  x = await startXvnc({ width: 1024, height: 768 });
  apps.push(startProcess('xterm', ['-geometry', '70x20+40+40', '-bg', '#203040', '-fg', '#f0e0a0',
    '-title', 'shot-term', '-e', 'sh', '-c', 'echo lizard screenshot test; ls -la /; exec sleep 600'], { env: x.env }));
  apps.push(startProcess('xlogo', ['-geometry', '220x220+720+380', '-fg', 'red', '-bg', 'white'], { env: x.env }));
  assert.ok(await waitFor(() => windowReady(x.env, 'shot-term') && windowReady(x.env, 'xlogo')));
  bridge = await connectBridge(['--vnc', x.url]);
});

after(async () => {
  await bridge?.close();
  for (const app of apps) await app.stop();
  await x?.stop();
});

test('screenshot pixels are identical to the X server capture (xwd)', async () => {
  await bridge.call('move_mouse', { x: 1000, y: 10 });
  let diff = -1;
  let text = '';
  // Two independent captures taken moments apart: retry briefly in case an
  // application repainted in between, but they must come to agree exactly.
  await waitFor(async () => {
    const result = await bridge.call('screenshot', { settle: true, show_cursor: false });
    assert.equal(result.isError, false, textOf(result));
    text = textOf(result);
    const png = decodePng(imageOf(result).data);
    assert.equal(png.width, 1024);
    assert.equal(png.height, 768);
    diff = countDifferentPixels(rgbaToRgb(png), captureRootRgb(x.env));
    return diff === 0;
  }, { timeout: 8000, interval: 200 });
  assert.equal(diff, 0, 'pixels differing from xwd');
  assert.match(text, /1024x768/);
});

test('screenshot draws the mouse pointer where it is', async () => {
  // Over the bare root window, where only the pointer can make a difference.
  await bridge.call('move_mouse', { x: 400, y: 600 });
  const withCursor = decodePng(imageOf(await bridge.call('screenshot', { settle: true })).data);
  const without = decodePng(imageOf(await bridge.call('screenshot', { show_cursor: false })).data);
  let minX = Infinity, minY = Infinity, maxX = -1, maxY = -1;
  for (let y = 0; y < withCursor.height; y++) {
    for (let xx = 0; xx < withCursor.width; xx++) {
      const i = (y * withCursor.width + xx) * 4;
      if (withCursor.data.readUInt32BE(i) !== without.data.readUInt32BE(i)) {
        minX = Math.min(minX, xx); maxX = Math.max(maxX, xx);
        minY = Math.min(minY, y); maxY = Math.max(maxY, y);
      }
    }
  }
  assert.ok(maxX >= 0, 'the pointer is visible in the screenshot');
  assert.ok(minX >= 400 - 32 && maxX <= 400 + 32, `pointer drawn at x ${minX}..${maxX}`);
  assert.ok(minY >= 600 - 32 && maxY <= 600 + 32, `pointer drawn at y ${minY}..${maxY}`);
});
