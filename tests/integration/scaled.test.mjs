// SPDX-License-Identifier: MIT
// Screens larger than models take are shown scaled, and coordinates read
// from such a screenshot land on the right screen pixels.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '../lib/process.mjs';
import { connectBridge, textOf, imageOf } from '../lib/mcp.mjs';
import { startXvnc } from '../lib/x11.mjs';
import { windowReady, startXev } from '../lib/x11-apps.mjs';
import { decodePng, pixelAt } from '../lib/png.mjs';

let x, bridge, xev;

before(async () => {
  x = await startXvnc({ width: 2560, height: 1600 });
  xev = startXev(x.env, '300x200+1700+1100');
  assert.ok(await waitFor(() => windowReady(x.env, 'Event Tester')));
  bridge = await connectBridge(['--vnc', x.url]);
});

after(async () => {
  await bridge?.close();
  await xev?.stop();
  await x?.stop();
});

test('a 2560x1600 screen is shown as 1356x847 and the text says how', async () => {
  assert.deepEqual(JSON.parse(textOf(await bridge.call('screen_size'))),
    { width: 1356, height: 847, native_width: 2560, native_height: 1600 });
  const result = await bridge.call('screenshot', { show_cursor: false });
  const png = decodePng(imageOf(result).data);
  assert.deepEqual([png.width, png.height], [1356, 847]);
  assert.match(textOf(result), /2560x1600 screen is shown scaled by 0\.529/);
  const outside = await bridge.call('click', { x: 1400, y: 10 });
  assert.equal(outside.isError, true);
  assert.match(textOf(outside), /outside the 1356x847 screen \(the scaled space/);
});

test('a click at a point read from the scaled screenshot lands on the right screen pixel', async () => {
  const png = decodePng(imageOf(await bridge.call('screenshot', { show_cursor: false })).data);
  // The xev window is the only light area on the black root window.
  let minX = Infinity, minY = Infinity, maxX = -1, maxY = -1;
  for (let y = 0; y < png.height; y++) {
    for (let xx = 0; xx < png.width; xx++) {
      const [r, g, b] = pixelAt(png, xx, y);
      if (r + g + b > 600) {
        minX = Math.min(minX, xx); maxX = Math.max(maxX, xx);
        minY = Math.min(minY, y); maxY = Math.max(maxY, y);
      }
    }
  }
  assert.ok(maxX > 0, 'the window is visible in the scaled screenshot');
  // Where it shows, scaled: 1700..2000 x 1100..1300 times 1356/2560.
  assert.ok(Math.abs(minX - 1700 * 1356 / 2560) <= 2 && Math.abs(maxX - 2000 * 1356 / 2560) <= 2, `x ${minX}..${maxX}`);
  const target = { x: Math.round((minX + maxX) / 2), y: Math.round((minY + maxY) / 2) };
  const clicked = await bridge.call('click', { x: target.x, y: target.y });
  assert.equal(clicked.isError, false, textOf(clicked));
  const press = await waitFor(() => {
    const m = /ButtonPress event[^]*?root:\((\d+),(\d+)\)/.exec(xev.output);
    return m ? { x: Number(m[1]), y: Number(m[2]) } : null;
  });
  assert.ok(press, 'xev saw the click');
  // The screen pixels that scaled pixel stands for.
  const nativeX = [target.x * 2560 / 1356, (target.x + 1) * 2560 / 1356];
  const nativeY = [target.y * 1600 / 847, (target.y + 1) * 1600 / 847];
  assert.ok(press.x >= Math.floor(nativeX[0]) && press.x < Math.ceil(nativeX[1]), `x ${press.x} in ${nativeX}`);
  assert.ok(press.y >= Math.floor(nativeY[0]) && press.y < Math.ceil(nativeY[1]), `y ${press.y} in ${nativeY}`);
  assert.deepEqual(JSON.parse(textOf(await bridge.call('cursor_position'))), target);
});

test('a region zooms to full resolution, not the scaled one', async () => {
  const zoom = await bridge.call('screenshot', { region: [900, 582, 1060, 688], show_cursor: false });
  const png = decodePng(imageOf(zoom).data);
  // 160x106 scaled pixels are about 302x200 screen pixels.
  assert.ok(Math.abs(png.width - 302) <= 2 && Math.abs(png.height - 200) <= 2, `${png.width}x${png.height}`);
  assert.match(textOf(zoom), /Zoomed view of region \[900, 582, 1060, 688\]/);
});
