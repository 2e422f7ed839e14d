// SPDX-License-Identifier: MIT
// The browser viewer's clipboard (both ways, control viewers only) and its
// wheel (clicks that follow the wheel's delta). Headless Debian Chromium
// (playwright-core) against a real local desktop: xclip and an xterm on
// the desktop side, xev counting the wheel's button presses.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import WebSocket from 'ws';
import { waitFor } from '../lib/process.mjs';
import { textOf } from '../lib/mcp.mjs';
import { viewerFixture } from '../lib/browser.mjs';

let fixture, daemon, client, browser, session, links, work, host, context;

before(async () => {
  fixture = await viewerFixture('lizard-viewer-input-', undefined, { args: ['--no-webrtc'] });
  ({ daemon, client, browser, session, links, work, host } = fixture);
  // The browser's own clipboard, as a person's browser would allow it.
  context = await browser.newContext({ viewport: { width: 1000, height: 700 }, permissions: ['clipboard-read', 'clipboard-write'] });
});

after(() => fixture?.stop());

async function openViewer(url = links.url) {
  const page = await context.newPage();
  await page.goto(url);
  assert.ok(await waitFor(async () => (await page.evaluate(() => window.lizardViewer.frames)) > 0, { timeout: 15000 }),
    'the viewer shows a first frame');
  return page;
}

const desktopClipboard = async () => JSON.parse(textOf(await client.call('clipboard_get', { session }))).text;
const viewerClipboard = (page) => page.evaluate(() => window.lizardViewer.clipboard);

test('text copied on the desktop reaches a control viewer and its browser clipboard, not a view-only one', async () => {
  const page = await openViewer();
  const watcher = await openViewer(links.view_only_url);
  const text = 'copied on the desktop: café, 3 × 4\nsecond line';
  await client.call('clipboard_set', { session, text });
  assert.equal(await waitFor(async () => (await viewerClipboard(page)) === text, { timeout: 5000 }), true,
    `the control viewer got ${JSON.stringify(await viewerClipboard(page))}`);
  assert.ok(await waitFor(() => page.evaluate(() => window.lizardViewer.copied > 0)), 'written to the browser clipboard');
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), text);
  assert.equal(await viewerClipboard(watcher), null, 'the view-only viewer got no clipboard');

  // RFB cut text is Latin-1: what it cannot carry arrives as "?".
  await client.call('clipboard_set', { session, text: 'snow ☃ man' });
  assert.equal(await waitFor(async () => (await viewerClipboard(page)) === 'snow ? man', { timeout: 5000 }), true,
    `the control viewer got ${JSON.stringify(await viewerClipboard(page))}`);
  assert.equal(await viewerClipboard(watcher), null);
  await page.close();
  await watcher.close();
});

test('a megabyte of text copied on the desktop arrives whole; more is announced, not sent', async () => {
  const page = await openViewer();
  // Not quite 1 MiB: xclip hands larger selections over in pieces (INCR),
  // which Xvnc 1.12 does not take.
  const big = 'x'.repeat(1000000 - 6) + 'ending';
  await client.call('clipboard_set', { session, text: big });
  assert.ok(await waitFor(async () => (await page.evaluate(() => window.lizardViewer.clipboard?.length)) === big.length, { timeout: 10000 }));
  assert.ok(await page.evaluate(() => window.lizardViewer.clipboard.endsWith('ending')));
  assert.equal((await page.evaluate(() => navigator.clipboard.readText())).length, big.length);

  // 600000 "é" are 600000 bytes of Latin-1 on the wire but 1.2 MB of
  // UTF-8: over the viewers' 1 MiB, so the page is told, not sent.
  await client.call('launch', { session, command: `sh -c "head -c 600000 /dev/zero | tr '\\0' '\\351' | xclip -selection clipboard -t STRING -i"` });
  assert.ok(await waitFor(async () => /1200000 bytes, over the 1 MiB limit/.test(await page.textContent('#clip')), { timeout: 10000 }),
    `the page says: ${await page.textContent('#clip')}`);
  assert.equal((await viewerClipboard(page)).length, big.length, 'the page kept what it had');
  await page.close();
});

// A terminal in the desktop that saves what it is given, raw.
async function terminal(name, geometry = '50x6+20+20') {
  const file = path.join(work, `${name}.txt`);
  await client.call('launch', { session, command: `xterm -geometry ${geometry} -title ${name} -e sh -c 'stty -echo -icanon; exec cat > ${file}'` });
  assert.ok(await waitFor(() => fs.existsSync(host(file))));
  await client.call('wait', { session, quiet_ms: 300 });
  await client.call('click', { session, x: 150, y: 60 });
  await client.call('type', { session, text: '.' });
  assert.ok(await waitFor(() => fs.readFileSync(host(file), 'utf8') === '.'));
  return file;
}

test('text pasted into a control viewer goes to the desktop clipboard, and the desktop pastes it', async () => {
  const file = await terminal('paste');
  const page = await openViewer();
  const text = 'pasted from the browser: naïve';
  await page.evaluate((t) => navigator.clipboard.writeText(t), text);
  // shift+Insert: the page's paste event sends the text, then the key,
  // which makes xterm paste (the PRIMARY selection Xvnc now holds too).
  await page.keyboard.press('Shift+Insert');
  assert.equal(await waitFor(() => fs.readFileSync(host(file), 'utf8') === `.${text}`, { timeout: 5000 }), true,
    `the terminal got ${JSON.stringify(fs.readFileSync(host(file), 'utf8'))}`);
  assert.equal(await desktopClipboard(), text);

  // ctrl+v the same way; beyond Latin-1 becomes "?", and the page says so.
  await page.evaluate(() => navigator.clipboard.writeText('snow ☃\r\nman'));
  await client.call('click', { session, x: 600, y: 500 }); // off the terminal: ^V stays out of it
  await page.keyboard.press('Control+V');
  assert.equal(await waitFor(async () => (await desktopClipboard()) === 'snow ?\nman', { timeout: 5000 }), true,
    `the desktop clipboard holds ${JSON.stringify(await desktopClipboard())}`);
  assert.match(await page.textContent('#clip'), /1 characters beyond Latin-1 became "\?"/);
  await page.close();
});

test('text over 1 MiB is not pasted; a view-only viewer pastes nothing, even sending it itself', async () => {
  const page = await openViewer();
  await page.evaluate(() => navigator.clipboard.writeText('y'.repeat(1024 * 1024 + 1)));
  await page.keyboard.press('Control+V');
  assert.match(await page.textContent('#clip'), /over the 1 MiB limit/);
  await page.close();

  // The server holds the bound, whatever a page sends.
  const raw = await rawViewer(links.url);
  raw.send(JSON.stringify({ type: 'clipboard', text: 'z'.repeat(1024 * 1024 + 1) }));
  const limit = 'z'.repeat(1024 * 1024 - 5) + 'limit';
  raw.send(JSON.stringify({ type: 'clipboard', text: limit }));
  assert.equal(await waitFor(async () => (await desktopClipboard()) === limit, { timeout: 10000 }), true,
    'exactly 1 MiB is pasted whole');
  assert.equal(raw.readyState, WebSocket.OPEN, 'a refused paste does not cost the socket');
  raw.close();

  const watcher = await rawViewer(links.view_only_url);
  watcher.send(JSON.stringify({ type: 'clipboard', text: 'from a view-only viewer' }));
  const taken = await waitFor(async () => (await desktopClipboard()) === 'from a view-only viewer', { timeout: 1500 });
  assert.equal(taken, false, 'the view-only viewer\'s text was dropped');
  watcher.close();
});

// A viewer socket without a page: joins and acknowledges.
async function rawViewer(url) {
  const token = new URL(url).hash.match(/token=([0-9a-f]+)/)[1];
  const ws = new WebSocket(`${daemon.url.replace('http', 'ws')}/viewer`, 'lizard-viewer');
  ws.on('message', (data, binary) => binary && ws.send('{"type":"ack"}'));
  await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
  ws.send(JSON.stringify({ session, token }));
  assert.ok(await new Promise((resolve) => ws.once('message', () => resolve(true))), 'joined');
  return ws;
}

// xev's button presses so far, as a list of button numbers.
function presses(file) {
  const out = fs.existsSync(host(file)) ? fs.readFileSync(host(file), 'utf8') : '';
  return out.split(/\n\s*\n/).filter((b) => b.startsWith('ButtonPress')).map((b) => Number(/button (\d+)/.exec(b)?.[1]));
}

test('wheel clicks follow the wheel\'s delta: notches, flicks, trackpads, lines, pages, sideways', async () => {
  const file = path.join(work, 'xev.txt');
  await client.call('launch', { session, command: `stdbuf -oL xev -geometry 400x300+200+150 -event button > ${file}` });
  assert.ok(await waitFor(() => fs.existsSync(host(file))));
  await client.call('wait', { session, quiet_ms: 300 });
  const page = await openViewer();
  // Over the xev window, in page coordinates of the scaled canvas.
  const box = await page.evaluate(() => {
    const r = document.getElementById('screen').getBoundingClientRect();
    return { x: r.left + (400 * r.width) / 800, y: r.top + (300 * r.height) / 600, height: document.getElementById('screen').clientHeight };
  });
  await page.mouse.move(box.x, box.y);
  let barriers = 0;
  const expected = { 4: 0, 5: 0, 6: 0, 7: 0 };
  // After each step, a middle click through the same socket: once xev has
  // it, everything the step sent has arrived, and the counts must match.
  async function step(what, action, more) {
    await action();
    await page.mouse.down({ button: 'middle' });
    await page.mouse.up({ button: 'middle' });
    barriers++;
    assert.ok(await waitFor(() => presses(file).filter((b) => b === 2).length === barriers, { timeout: 5000 }), `${what}: xev saw the step end`);
    for (const [button, n] of Object.entries(more)) expected[button] += n;
    const seen = { 4: 0, 5: 0, 6: 0, 7: 0 };
    for (const b of presses(file)) if (b in seen) seen[b]++;
    assert.deepEqual(seen, expected, `${what}: wheel buttons pressed so far`);
  }
  const wheelEvent = (init) => page.evaluate((i) => {
    document.getElementById('screen').dispatchEvent(new WheelEvent('wheel', { bubbles: true, cancelable: true, clientX: i.x, clientY: i.y, ...i.init }));
  }, { x: box.x, y: box.y, init });

  await step('one notch down', () => page.mouse.wheel(0, 100), { 5: 1 });
  await step('a flick of three', () => page.mouse.wheel(0, 300), { 5: 3 });
  await step('a trackpad: ten small deltas up', async () => {
    for (let i = 0; i < 10; i++) await page.mouse.wheel(0, -10);
  }, { 4: 1 });
  await step('a half notch and then another', async () => {
    await page.mouse.wheel(0, 50);
    await page.mouse.wheel(0, 50);
  }, { 5: 1 });
  await step('three lines (deltaMode 1)', () => wheelEvent({ deltaY: 3, deltaMode: 1 }), { 5: 1 });
  await step('one page (deltaMode 2): the canvas height in notches', () => wheelEvent({ deltaY: -1, deltaMode: 2 }),
    { 4: Math.trunc(box.height / 100) });
  await step('sideways', async () => {
    await page.mouse.wheel(100, 0);
    await page.mouse.wheel(-200, 0);
  }, { 7: 1, 6: 2 });
  await page.close();
});
