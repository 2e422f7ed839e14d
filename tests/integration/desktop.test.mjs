// SPDX-License-Identifier: MIT
// The full tool set on the bridge's own desktop (Xvnc + openbox + Chromium),
// checked against what real applications show and receive.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '../lib/process.mjs';
import { connectBridge, textOf, imageOf } from '../lib/mcp.mjs';
import { desktopFromLog } from '../lib/x11.mjs';
import { windowGeometry } from '../lib/x11-apps.mjs';
import { decodePng, pixelAt } from '../lib/png.mjs';
import { startPageServer, skipWithoutPages } from '../lib/pages.mjs';

const pages = {
  '/color': `<!doctype html><title>color page</title>
    <body style="margin:0;background:#12ab34"><h1 style="color:white">Served by the test</h1></body>`,
  '/tall': `<!doctype html><title>tall page</title><body style="margin:0">
    ${['#ff0000', '#00ff00', '#0000ff', '#ffff00', '#00ffff', '#ff00ff', '#808080', '#000000']
      .map((c) => `<div style="height:600px;background:${c}"></div>`).join('')}</body>`,
  '/animate': `<!doctype html><title>animate page</title>
    <body style="margin:0;background:#ffffff">
    <button id="go" style="position:absolute;left:40px;top:40px;width:200px;height:80px">Go</button>
    <div id="box" style="position:absolute;left:0;top:200px;width:100px;height:100px;background:#ff0000"></div>
    <script>
      document.getElementById('go').onclick = () => {
        const box = document.getElementById('box');
        const start = performance.now();
        function step(now) {
          const t = Math.min(1, (now - start) / 1000);
          box.style.left = (t * 600) + 'px';
          if (t < 1) requestAnimationFrame(step);
          else document.body.style.background = '#0000ff';
        }
        requestAnimationFrame(step);
      };
    </script></body>`,
  '/paste': `<!doctype html><title>paste page</title><body style="margin:0;background:#f0f0f0">
    <textarea id="t" style="position:absolute;left:20px;top:20px;width:600px;height:200px;font-size:20px"></textarea>
    <script>
      const t = document.getElementById('t');
      t.addEventListener('input', () => fetch('/report', { method: 'POST', body: JSON.stringify({ value: t.value }) }));
    </script></body>`,
  '/copy': `<!doctype html><title>copy page</title><body style="margin:0;background:#f0f0f0">
    <textarea id="t" style="position:absolute;left:20px;top:20px;width:600px;height:200px;font-size:20px">Ünïcødé from the page: 漢字 ✓ — ok</textarea></body>`,
};

let bridge, desktop, server;

before(async () => {
  server = await startPageServer(pages);
  bridge = await connectBridge([]);
  desktop = desktopFromLog(bridge.log);
});

after(async () => {
  await bridge?.close();
  await server?.close();
});

async function shot(args = {}) {
  const result = await bridge.call('screenshot', args);
  assert.equal(result.isError, false, textOf(result));
  return decodePng(imageOf(result).data);
}

// Opens a page and waits until a pixel shows the colour the page paints.
async function showPage(path, x, y, rgb) {
  const opened = await bridge.call('open_url', { url: `${server.url}${path}`, screenshot: true });
  assert.equal(opened.isError, false, textOf(opened));
  const shown = await waitFor(async () => {
    const png = await shot({ show_cursor: false });
    return JSON.stringify(pixelAt(png, x, y)) === JSON.stringify(rgb);
  }, { timeout: 30000, interval: 250 });
  assert.ok(shown, `${path} shows ${rgb} at (${x}, ${y})`);
}

test('open_url shows a page served by the test', async (t) => {
  if (skipWithoutPages(t, server)) return;
  await showPage('/color', 640, 600, [0x12, 0xab, 0x34]);
  await bridge.call('press', { keys: 'ctrl+w' });
});

test('scroll moves a scrollable page', async (t) => {
  if (skipWithoutPages(t, server)) return;
  await showPage("/tall", 900, 400, [255, 0, 0]);
  const before = pixelAt(await shot(), 900, 400);
  const result = await bridge.call('scroll', { x: 640, y: 400, direction: "down", amount: 10, screenshot: true });
  assert.equal(result.isError, false, textOf(result));
  const after = pixelAt(decodePng(imageOf(result).data), 900, 400);
  assert.notDeepEqual(after, before, 'the page scrolled under the pointer');
  await bridge.call('press', { keys: 'ctrl+w' });
});

test('a settled screenshot shows the end of a 1 s animation, well before a 2 s sleep would', async (t) => {
  if (skipWithoutPages(t, server)) return;
  // The red box itself: a white screen is also what a tab shows while loading.
  await showPage('/animate', 50, 337, [255, 0, 0]);
  const png = await shot();
  // The red box is 100x100 at page (0, 200); the button 160 px above its top.
  let boxTop = -1;
  for (let y = 0; y < 800 && boxTop < 0; y++) if (JSON.stringify(pixelAt(png, 50, y)) === '[255,0,0]') boxTop = y;
  assert.ok(boxTop > 0, 'the red box is on screen');
  const start = Date.now();
  const result = await bridge.call('click', { x: 140, y: boxTop - 160 + 40, screenshot: true });
  const elapsed = Date.now() - start;
  assert.equal(result.isError, false, textOf(result));
  const final = decodePng(imageOf(result).data);
  assert.deepEqual(pixelAt(final, 640, 700), [0, 0, 255], 'the final state of the page');
  assert.ok(elapsed < 2000, `returned after ${elapsed} ms`);
  await bridge.call('press', { keys: 'ctrl+w' });
});

test('clipboard_set takes just under 1 MiB of UTF-8 and refuses 1 MiB at once, leaving the clipboard working', async () => {
  const most = 'é'.repeat(524287) + 'x'; // 1048575 bytes
  const set = await bridge.call('clipboard_set', { text: most });
  assert.equal(set.isError, false, textOf(set));
  assert.equal((await bridge.call('clipboard_get')).structuredContent?.text, most);
  const tooBig = await bridge.call('clipboard_set', { text: 'é'.repeat(524288) }); // 1048576 bytes
  assert.equal(tooBig.isError, true);
  assert.match(textOf(tooBig), /1048576 bytes of UTF-8; the desktop's clipboard takes at most 1048575/);
  assert.equal((await bridge.call('clipboard_set', { text: 'after' })).isError, false);
  assert.equal((await bridge.call('clipboard_get')).structuredContent?.text, 'after');
});

test('clipboard text survives a round trip into and out of Chromium', async (t) => {
  if (skipWithoutPages(t, server)) return;
  await showPage('/paste', 640, 600, [240, 240, 240]);
  const text = 'Grüße aus dem Clipboard: 漢字 ✓ 🙂 — ok';
  const set = await bridge.call('clipboard_set', { text });
  assert.equal(set.isError, false, textOf(set));
  // As an agent would: click, look (the settled screenshot), then paste.
  await bridge.call('click', { x: 200, y: 200, screenshot: true });
  await bridge.call('press', { keys: 'ctrl+v' });
  const pasted = await waitFor(() => server.reports.find((r) => r.value === text));
  assert.ok(pasted, `the page received: ${JSON.stringify(server.reports)}`);
  await bridge.call('press', { keys: 'ctrl+w' });

  await showPage('/copy', 640, 600, [240, 240, 240]);
  await bridge.call('click', { x: 200, y: 200, screenshot: true });
  await bridge.call('press', { keys: 'ctrl+a ctrl+c' });
  const copied = await waitFor(async () => {
    const got = (await bridge.call('clipboard_get')).structuredContent?.text;
    return got === 'Ünïcødé from the page: 漢字 ✓ — ok' ? got : null;
  });
  assert.equal(copied, 'Ünïcødé from the page: 漢字 ✓ — ok');
  await bridge.call('press', { keys: 'ctrl+w' });
});

test('a window dragged by its title bar really moves (drag and computer left_click_drag)', async () => {
  const launched = await bridge.call('launch', { command: 'xterm -geometry 50x8+100+150 -title dragme' });
  assert.equal(launched.isError, false, textOf(launched));
  const start = await waitFor(() => windowGeometry(desktop.env, 'dragme'));
  assert.ok(start, 'xterm appeared');
  // openbox draws the title bar just above the client area.
  const grab = { x: start.x + 60, y: start.y - 8 };
  const result = await bridge.call('drag', { from: [grab.x, grab.y], to: [grab.x + 300, grab.y + 200] });
  assert.equal(result.isError, false, textOf(result));
  const moved = await waitFor(() => {
    const g = windowGeometry(desktop.env, 'dragme');
    return g && Math.abs(g.x - (start.x + 300)) <= 2 && Math.abs(g.y - (start.y + 200)) <= 2 ? g : null;
  });
  assert.ok(moved, `window at ${JSON.stringify(windowGeometry(desktop.env, 'dragme'))}, expected +300,+200 from ${JSON.stringify(start)}`);

  const again = await bridge.call('computer', {
    action: 'left_click_drag', start_coordinate: [moved.x + 60, moved.y - 8],
    coordinate: [moved.x + 60 - 250, moved.y - 8 - 100], screenshot: false,
  });
  assert.equal(again.isError, false, textOf(again));
  const back = await waitFor(() => {
    const g = windowGeometry(desktop.env, 'dragme');
    return g && Math.abs(g.x - (moved.x - 250)) <= 2 && Math.abs(g.y - (moved.y - 100)) <= 2 ? g : null;
  });
  assert.ok(back, `window at ${JSON.stringify(windowGeometry(desktop.env, 'dragme'))}`);
  await bridge.call('press', { keys: 'alt+F4' });
});

test('screenshot region zooms at full resolution and jpeg is a JPEG', async () => {
  let differing = -1;
  // Two captures moments apart: retried in case something blinked between.
  await waitFor(async () => {
    const zoom = await shot({ region: [100, 50, 300, 150], show_cursor: false });
    const full = await shot({ show_cursor: false });
    assert.equal(zoom.width, 200);
    assert.equal(zoom.height, 100);
    differing = 0;
    for (let y = 0; y < 100; y++) {
      for (let x = 0; x < 200; x++) {
        if (JSON.stringify(pixelAt(zoom, x, y)) !== JSON.stringify(pixelAt(full, 100 + x, 50 + y))) differing++;
      }
    }
    return differing === 0;
  }, { timeout: 5000, interval: 200 });
  assert.equal(differing, 0);
  const jpeg = await bridge.call('screenshot', { format: 'jpeg', quality: 60 });
  const image = imageOf(jpeg);
  assert.equal(image.mimeType, 'image/jpeg');
  assert.deepEqual([...Buffer.from(image.data, 'base64').subarray(0, 2)], [0xff, 0xd8]);
});

test('wait reports a fixed wait and a settled screen', async () => {
  const fixed = await bridge.call('wait', { ms: 200 });
  assert.match(textOf(fixed), /Waited 200 ms/);
  const settled = await bridge.call('wait', { quiet_ms: 100, timeout_ms: 3000 });
  assert.match(textOf(settled), /settled after \d+ ms/);
});

test('the computer tool takes screenshots, zooms, types and reports the pointer', async () => {
  const screenshot = await bridge.call('computer', { action: 'screenshot' });
  assert.equal(decodePng(imageOf(screenshot).data).width, 1280);
  const moved = await bridge.call('computer', { action: 'mouse_move', coordinate: [333, 222] });
  assert.equal(moved.isError, false);
  assert.ok(imageOf(moved), 'actions come back with a screenshot');
  assert.equal(textOf(await bridge.call('computer', { action: 'cursor_position' })), 'X=333,Y=222');
  const zoom = await bridge.call('computer', { action: 'zoom', region: [0, 0, 640, 400] });
  assert.equal(decodePng(imageOf(zoom).data).width, 640);
  const bad = await bridge.call('computer', { action: 'mouse_move' });
  assert.equal(bad.isError, true);
  assert.match(textOf(bad), /mouse_move needs coordinate/);
});
