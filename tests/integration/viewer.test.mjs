// SPDX-License-Identifier: MIT
// The browser viewer, in headless Debian Chromium driven by playwright-core.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { waitFor, tempDir, sleep } from '../lib/process.mjs';
import { startDaemon } from '../lib/bridge.mjs';
import { httpClient, textOf, imageOf } from '../lib/mcp.mjs';
import { decodePng } from '../lib/png.mjs';
import { launchChromium } from '../lib/browser.mjs';

let daemon, client, browser, session, links, work;

before(async () => {
  work = tempDir('lizard-viewer-');
  // The WebSocket viewer's own tests: video (on by default) has its own
  // in viewer-webrtc.test.mjs.
  daemon = await startDaemon({ args: ['--no-webrtc'] });
  client = await httpClient(daemon);
  session = JSON.parse(textOf(await client.call('create_session', { template: 'desktop', size: '800x600' }))).session;
  links = JSON.parse(textOf(await client.call('start_stream', { session })));
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await client?.call('kill_session', { session }).catch(() => {});
  await client?.close();
  await daemon?.stop();
  fs.rmSync(work, { recursive: true, force: true });
});

async function openViewer(url) {
  const page = await browser.newPage({ viewport: { width: 1000, height: 700 } });
  await page.goto(url);
  return page;
}

const viewerState = (page) => page.evaluate(() => ({ ...window.lizardViewer }));

// The canvas as RGBA rows, at the desktop's own resolution.
async function canvasPixels(page) {
  return page.evaluate(() => {
    const canvas = document.getElementById('screen');
    const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    return { width: canvas.width, height: canvas.height, data: Array.from(data) };
  });
}

test('start_stream gives two different 128-bit links; the token rides in the fragment', () => {
  const control = /#token=([0-9a-f]{32})$/.exec(links.url);
  const view = /#token=([0-9a-f]{32})$/.exec(links.view_only_url);
  assert.ok(control && view);
  assert.notEqual(control[1], view[1]);
  assert.ok(links.url.startsWith(`${daemon.url}/view/${session}#`));
});

test('the control page shows the desktop: canvas pixels match an MCP screenshot', async () => {
  const page = await openViewer(links.url);
  assert.ok(await waitFor(async () => (await viewerState(page)).frames > 0, { timeout: 15000 }));
  const state = await viewerState(page);
  assert.equal(state.role, 'control');
  assert.equal(state.state, 'connected');
  assert.match(await page.textContent('#mode'), /control/);
  // --no-webrtc: no video is offered, so the page never tries it.
  assert.equal(state.transport, 'websocket');
  assert.equal(await page.textContent('#transport'), 'WebSocket', 'the page says which mode it is in');
  assert.equal(await page.evaluate(() => pc), null, 'no peer connection');
  assert.match(daemon.log, /--no-webrtc: viewers get the WebSocket viewer's updates/);
  let differing = -1;
  await waitFor(async () => {
    await client.call('wait', { session, quiet_ms: 300 });
    const shot = decodePng(imageOf(await client.call('screenshot', { session })).data);
    const canvas = await canvasPixels(page);
    assert.deepEqual([canvas.width, canvas.height], [shot.width, shot.height]);
    differing = 0;
    for (let i = 0; i < shot.data.length; i += 4) {
      if (shot.data[i] !== canvas.data[i] || shot.data[i + 1] !== canvas.data[i + 1] || shot.data[i + 2] !== canvas.data[i + 2]) differing++;
    }
    return differing === 0;
  }, { timeout: 10000, interval: 300 });
  assert.equal(differing, 0);
  await page.close();
});

// A terminal in the desktop that saves what it is given, in the sandbox's
// HOME; contents() reads it back with read_file.
async function terminal(name, geometry = '50x6+20+20') {
  const file = `${name}.txt`;
  await client.call('launch', { session, command: `xterm -geometry ${geometry} -title ${name} -e sh -c 'stty -echo -icanon; exec cat > ${file}'` });
  const contents = async () => {
    const r = await client.call('read_file', { session, path: file });
    return r.isError ? null : r.structuredContent.text;
  };
  assert.ok(await waitFor(async () => (await contents()) !== null));
  await client.call('wait', { session, quiet_ms: 300 });
  return contents;
}

// Where a desktop point is on the page.
async function pagePoint(page, x, y) {
  return page.evaluate(([px, py]) => {
    const canvas = document.getElementById('screen');
    const r = canvas.getBoundingClientRect();
    return { x: r.left + (px + 0.5) * r.width / canvas.width, y: r.top + (py + 0.5) * r.height / canvas.height };
  }, [x, y]);
}

test('a click and typed text in the control viewer reach an application', async () => {
  const contents = await terminal('control-typing');
  const page = await openViewer(links.url);
  assert.ok(await waitFor(async () => (await viewerState(page)).frames > 0));
  const p = await pagePoint(page, 150, 60);
  await page.mouse.click(p.x, p.y);
  await page.keyboard.type('Hello from the browser!');
  await page.keyboard.press('Enter');
  const typed = await waitFor(async () => {
    const text = await contents();
    return text.includes('\n') && text;
  });
  assert.equal(typed, 'Hello from the browser!\n');
  const where = JSON.parse(textOf(await client.call('cursor_position', { session })));
  assert.deepEqual(where, { x: 150, y: 60 });
  await page.close();
});

test('the view-only page changes nothing, even when it sends input itself', async () => {
  const contents = await terminal('view-only');
  await client.call('move_mouse', { session, x: 700, y: 500 });
  const page = await openViewer(links.view_only_url);
  assert.ok(await waitFor(async () => (await viewerState(page)).frames > 0));
  assert.equal((await viewerState(page)).role, 'view');
  assert.match(await page.textContent('#mode'), /view only/);
  const p = await pagePoint(page, 150, 60);
  await page.mouse.click(p.x, p.y);
  await page.keyboard.type('must not arrive');
  // A hostile page: input sent straight down the socket.
  await page.evaluate(() => {
    socket.send(JSON.stringify({ type: 'pointer', x: 150, y: 60, buttons: 1 }));
    socket.send(JSON.stringify({ type: 'pointer', x: 150, y: 60, buttons: 0 }));
    for (const k of [0x61, 0x62]) {
      socket.send(JSON.stringify({ type: 'key', keysym: k, down: true }));
      socket.send(JSON.stringify({ type: 'key', keysym: k, down: false }));
    }
  });
  // Something that does arrive, sent after: when it is there, the rest would be too.
  await client.call('click', { session, x: 150, y: 60 });
  await client.call('type', { session, text: 'marker\n' });
  const content = await waitFor(async () => {
    const text = await contents();
    return text.includes('marker\n') && text;
  });
  assert.equal(content, 'marker\n');
  await page.close();
});

test('a wrong or missing token shows an error and receives no frame', async () => {
  for (const url of [links.url.replace(/#token=.*/, '#token=' + '0'.repeat(32)), links.url.replace(/#.*/, '')]) {
    const page = await openViewer(url);
    const state = await waitFor(async () => {
      const s = await viewerState(page);
      return s.error ? s : null;
    });
    assert.ok(state, `an error is shown for ${url.replace(/token=.*/, 'token=...')}`);
    await sleep(500);
    assert.equal((await viewerState(page)).frames, 0);
    assert.match(await page.textContent('#status'), /error/);
    await page.close();
  }
});

test('a change made through MCP shows up in an open viewer', async () => {
  const page = await openViewer(links.view_only_url);
  assert.ok(await waitFor(async () => (await viewerState(page)).frames > 0));
  await client.call('launch', { session, command: 'xterm -geometry 20x5+500+400 -bg "#00c000" -title green' });
  const green = await waitFor(async () => {
    const c = await page.evaluate(() => Array.from(document.getElementById('screen').getContext('2d').getImageData(560, 440, 1, 1).data));
    return c[0] === 0 && c[1] === 0xc0 && c[2] === 0;
  }, { timeout: 10000 });
  assert.ok(green, 'the green terminal appears in the viewer');
  await page.close();
});

test('ten viewers at once all stay current, and MCP calls are still answered', async () => {
  const pages = [];
  for (let i = 0; i < 10; i++) pages.push(await openViewer(i % 2 ? links.url : links.view_only_url));
  assert.ok(await waitFor(async () => (await Promise.all(pages.map(viewerState))).every((s) => s.frames > 0), { timeout: 20000 }));
  await client.call('launch', { session, command: 'xterm -geometry 20x5+100+300 -bg "#c00000" -title red' });
  for (let round = 0; round < 3; round++) {
    const listed = await client.call('list_sessions');
    assert.equal(listed.isError, false);
  }
  const allRed = await waitFor(async () => {
    const colours = await Promise.all(pages.map((page) => page.evaluate(() => Array.from(document.getElementById('screen').getContext('2d').getImageData(160, 340, 1, 1).data))));
    return colours.every((c) => c[0] === 0xc0 && c[1] === 0 && c[2] === 0);
  }, { timeout: 15000 });
  assert.ok(allRed, 'every viewer shows the new window');
  // Viewers of earlier tests may take a moment to be counted out.
  const counted = await waitFor(async () => /^lizard_viewers 10$/m.test(await fetch(`${daemon.url}/metrics`).then((r) => r.text())));
  assert.ok(counted, 'the metrics count ten viewers');
  for (const page of pages) await page.close();
});

test('a second start_stream revokes the old links and disconnects their viewers', async () => {
  const page = await openViewer(links.url);
  assert.ok(await waitFor(async () => (await viewerState(page)).frames > 0));
  const fresh = JSON.parse(textOf(await client.call('start_stream', { session })));
  assert.notEqual(fresh.url, links.url);
  assert.ok(await waitFor(async () => /revoked/.test((await viewerState(page)).error || '')));
  const again = await openViewer(links.url);
  assert.ok(await waitFor(async () => (await viewerState(again)).error));
  links = fresh;
  await page.close();
  await again.close();
});

test('a desktop resize reaches the page', async () => {
  const page = await openViewer(links.view_only_url);
  assert.ok(await waitFor(async () => (await viewerState(page)).frames > 0));
  await client.call('launch', { session, command: 'xrandr --fb 1024x768' });
  const resized = await waitFor(async () => {
    const size = await page.evaluate(() => [document.getElementById('screen').width, document.getElementById('screen').height]);
    return size[0] === 1024 && size[1] === 768;
  }, { timeout: 10000 });
  assert.ok(resized, 'the canvas follows the desktop to 1024x768');
  assert.deepEqual(JSON.parse(textOf(await client.call('screen_size', { session }))), { width: 1024, height: 768 });
  await client.call('launch', { session, command: 'xrandr --fb 800x600' });
  await page.close();
});

test('stop_stream revokes the links; killing the session tells viewers it ended', async () => {
  const page = await openViewer(links.url);
  assert.ok(await waitFor(async () => (await viewerState(page)).frames > 0));
  await client.call('stop_stream', { session });
  assert.ok(await waitFor(async () => /revoked/.test((await viewerState(page)).error || '')));
  await page.close();

  links = JSON.parse(textOf(await client.call('start_stream', { session })));
  const watcher = await openViewer(links.view_only_url);
  assert.ok(await waitFor(async () => (await viewerState(watcher)).frames > 0));
  await client.call('kill_session', { session });
  assert.ok(await waitFor(async () => (await viewerState(watcher)).state === 'ended'), 'the status line says ended');
  assert.match(await watcher.textContent('#status'), /ended/);
  await watcher.close();
});
