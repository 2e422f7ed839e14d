// SPDX-License-Identifier: MIT
// The browser viewer under motion and input: keys that never stick, a
// canvas that ends exact, copies instead of pixels. Headless Debian
// Chromium (playwright-core) against a real local desktop.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { waitFor } from '../lib/process.mjs';
import { textOf, imageOf } from '../lib/mcp.mjs';
import { viewerFixture, canvasDiff } from '../lib/browser.mjs';

let fixture, daemon, client, browser, session, links, work, host;

before(async () => {
  fixture = await viewerFixture('lizard-viewer-live-', undefined, { args: ['--no-webrtc'] });
  ({ daemon, client, browser, session, links, work, host } = fixture);
});

after(() => fixture?.stop());

async function openViewer(url = links.url) {
  const page = await browser.newPage({ viewport: { width: 1000, height: 700 } });
  await page.goto(url);
  assert.ok(await waitFor(async () => (await page.evaluate(() => window.lizardViewer.frames)) > 0, { timeout: 15000 }),
    'the viewer shows a first frame');
  return page;
}

// A terminal in the desktop that saves what it is given, raw.
async function terminal(name, geometry = '50x6+20+20') {
  const file = path.join(work, `${name}.txt`);
  await client.call('launch', { session, command: `xterm -geometry ${geometry} -title ${name} -e sh -c 'stty -echo -icanon; exec cat > ${file}'` });
  assert.ok(await waitFor(() => fs.existsSync(host(file))));
  await client.call('wait', { session, quiet_ms: 300 });
  return file;
}

async function focusTerminal(file) {
  // Through MCP, so the viewer's own clicks are not part of what is tested.
  await client.call('click', { session, x: 150, y: 60 });
  await client.call('type', { session, text: '.' });
  assert.ok(await waitFor(() => fs.readFileSync(host(file), 'utf8') === '.'));
}

const read = (file) => fs.readFileSync(host(file), 'utf8');

test('Shift let go before the letter: exactly one capital, no repeats', async () => {
  const file = await terminal('shift-first');
  const page = await openViewer();
  await focusTerminal(file);
  await page.keyboard.down('Shift');
  await page.keyboard.down('KeyA'); // arrives as "A", code KeyA
  await page.keyboard.up('Shift');
  await page.keyboard.up('KeyA');   // arrives as "a": must release "A"
  await client.call('type', { session, text: 'z' });
  assert.ok(await waitFor(() => read(file).endsWith('z')));
  // A key left down repeats after X's autorepeat delay (660 ms); watch
  // well past it that nothing more arrives.
  const repeated = await waitFor(() => read(file) !== '.Az', { timeout: 1500 });
  assert.equal(repeated, false, `the terminal got ${JSON.stringify(read(file))}`);
  await page.close();
});

test('a viewer that goes away holding Shift leaves nothing held', async () => {
  const file = await terminal('shift-held');
  const page = await openViewer();
  await focusTerminal(file);
  await page.keyboard.down('Shift');
  await page.keyboard.down('KeyQ');
  // The keys reached the desktop (the viewer's socket and the MCP call
  // below are two connections: nothing else orders them).
  await waitFor(() => read(file) === '.Q');
  // The socket dies without the page saying anything (as when a tab crashes).
  await page.evaluate(() => { socket.onclose = null; socket.close(); });
  await page.close();
  await client.call('type', { session, text: 'b' });
  const content = await waitFor(() => /b|B/.test(read(file)) && read(file));
  assert.equal(content, '.Qb', 'Q typed once, then b in lower case: Shift and Q were released');
  const again = await waitFor(() => read(file) !== '.Qb', { timeout: 1500 });
  assert.equal(again, false, `the terminal got ${JSON.stringify(read(file))}`);
});

test('the page lets go of its keys when it loses focus', async () => {
  const file = await terminal('blur');
  const page = await openViewer();
  await focusTerminal(file);
  await page.keyboard.down('Shift');
  await page.evaluate(() => window.dispatchEvent(new Event('blur')));
  await client.call('type', { session, text: 'c' });
  assert.equal(await waitFor(() => /c|C/.test(read(file)) && read(file)), '.c');
  await page.keyboard.up('Shift');
  await page.close();
});

test('full screen: the page fills the screen, keys still reach the desktop, and it leaves again', async () => {
  const file = await terminal('full');
  const page = await openViewer();
  await focusTerminal(file);
  await page.click('#full');
  assert.ok(await waitFor(() => page.evaluate(() => document.fullscreenElement === document.documentElement)),
    'the page is full screen');
  await page.keyboard.type('f');
  assert.equal(await waitFor(() => read(file) === '.f' && read(file)), '.f', 'a key after the button reaches the desktop');
  await page.click('#full');
  assert.ok(await waitFor(() => page.evaluate(() => document.fullscreenElement === null)), 'the page left full screen');
  await page.close();
});

// Runs a shell script in the desktop and waits until it has finished.
async function inDesktop(name, script) {
  const done = path.join(work, `${name}.done`);
  fs.rmSync(host(done), { force: true });
  await client.call('launch', { session, command: `sh -c '${script}; touch ${done}'` });
  assert.ok(await waitFor(() => fs.existsSync(host(done)), { timeout: 60000 }), `${name} finished`);
}

// Every page equals the screen within `within` ms of it settling.
async function assertExact(pages, what, within = 1000) {
  await client.call('wait', { session, quiet_ms: 200, timeout_ms: 5000 });
  const shot = imageOf(await client.call('screenshot', { session })).data;
  const deadline = Date.now() + within;
  const diffs = await waitFor(async () => {
    const d = await Promise.all(pages.map((page) => canvasDiff(page, shot)));
    return d.every((n) => n === 0) ? d : Date.now() > deadline && d;
  }, { timeout: within + 2000, interval: 50 });
  assert.ok(diffs.every((n) => n === 0), `${what}: differing pixels per viewer ${diffs}`);
}

for (const viewers of [1, 5]) {
  test(`after a burst of motion the canvas is exact within 1 s (${viewers} viewer${viewers > 1 ? 's' : ''})`, async () => {
    const pages = [];
    try {
      await burst(pages, viewers);
    } finally {
      for (const page of pages) await page.close();
    }
  });
}

// Moves a window in a burst of 60 steps; then every page must be exact.
async function burst(pages, viewers) {
  for (let i = 0; i < viewers; i++) pages.push(await openViewer(i % 2 ? links.view_only_url : links.url));
  const title = `burst${viewers}`;
  await client.call('launch', { session, command: `xterm -geometry 40x12+10+200 -title ${title} -e sh -c "ls -lR /usr/share | head -200; sleep 600"` });
  assert.ok(await waitFor(async () => {
    await inDesktop(`${title}-find`, `xdotool search --name ${title} > ${path.join(work, title)}`);
    return fs.readFileSync(host(path.join(work, title)), 'utf8').trim();
  }));
  await inDesktop(title, `for i in $(seq 1 60); do xdotool search --name ${title} windowmove %@ $((i * 7)) $((200 + i % 13 * 9)); done`);
  await assertExact(pages, 'after the burst');
  await inDesktop(`${title}-close`, `xdotool search --name ${title} windowkill`);
}

test('a window moved by 200 px arrives as a copy, and the canvas ends exact', async () => {
  const page = await openViewer(links.view_only_url);
  const title = 'mover';
  await client.call('launch', { session, command: `xterm -geometry 60x20+20+40 -title ${title} -e sh -c "head -c 4000 /dev/urandom | base64; sleep 600"` });
  let geometry;
  assert.ok(await waitFor(async () => {
    await inDesktop('mover-find', `xdotool search --name ${title} getwindowgeometry > ${path.join(work, 'mover.geom')}`);
    geometry = /Geometry: (\d+)x(\d+)/.exec(fs.readFileSync(host(path.join(work, 'mover.geom')), 'utf8'));
    return geometry;
  }));
  const area = Number(geometry[1]) * Number(geometry[2]);
  await assertExact([page], 'before the move');
  const before = await page.evaluate(() => window.lizardViewer.bytes);
  await inDesktop('mover-move', `xdotool search --name ${title} windowmove %@ 220 40`);
  await assertExact([page], 'after the move');
  const bytes = (await page.evaluate(() => window.lizardViewer.bytes)) - before;
  // Pixels would cost about a byte per window pixel for this noisy text;
  // a copy costs what was uncovered (flat background) and a few bytes.
  assert.ok(bytes < area / 20, `the move cost ${bytes} bytes for a window of ${area} pixels`);
  await inDesktop('mover-close', `xdotool search --name ${title} windowkill`);
  await page.close();
});

test('"fast" sends a photograph as JPEG, and the canvas is exact once it is still', async () => {
  const page = await openViewer(links.view_only_url);
  await page.selectOption('#quality', 'fast');
  const title = 'photo';
  await client.call('launch', { session, command: `display -title ${title} -size 400x300 plasma:fractal` });
  assert.ok(await waitFor(async () => (await page.evaluate(() => window.lizardViewer.jpeg)) > 0, { timeout: 15000 }),
    'a JPEG arrived');
  // The exact refresh follows 300 ms of stillness; the machine may be busy.
  await assertExact([page], 'after the photograph was still', 3000);
  assert.equal(await page.evaluate(() => localStorage.getItem('lizard-quality')), 'fast');
  await inDesktop('photo-close', `xdotool search --name ${title} windowkill`);
  await page.evaluate(() => localStorage.removeItem('lizard-quality'));
  await page.close();
});

test('a solid area arrives as a fill of a few bytes, and the canvas equals a screenshot', async () => {
  const page = await openViewer(links.view_only_url);
  await assertExact([page], 'before the fill');
  const before = await page.evaluate(() => ({ ...window.lizardViewer }));
  // The whole background turns one colour: a PNG would be hundreds of
  // bytes even with a palette, a fill op is twelve.
  await inDesktop('fill', 'xsetroot -solid "#2a6b9c"');
  await assertExact([page], 'after the background changed');
  const after = await page.evaluate(() => ({ ...window.lizardViewer }));
  assert.ok(after.fills > before.fills, `fills ${before.fills} -> ${after.fills}`);
  const bytes = after.bytes - before.bytes;
  assert.ok(bytes < 600 * (after.frames - before.frames), `the change cost ${bytes} bytes in ${after.frames - before.frames} updates`);
  await inDesktop('fill-back', 'xsetroot -solid "#303030"');
  await page.close();
});

test('the pointer moving costs a few bytes, and the page draws it where the screenshot shows it', async () => {
  const page = await openViewer(links.view_only_url);
  await client.call('move_mouse', { session, x: 300, y: 300 });
  await assertExact([page], 'with the pointer at 300,300');
  const before = await page.evaluate(() => ({ ...window.lizardViewer }));
  for (let i = 1; i <= 10; i++) await client.call('move_mouse', { session, x: 300 + i * 20, y: 300 + i * 7 });
  await assertExact([page], 'after the pointer moved');
  const after = await page.evaluate(() => ({ ...window.lizardViewer }));
  // Pixels would be two images per move (where it was, where it is).
  assert.equal(after.png + after.jpeg, before.png + before.jpeg, 'no image was sent for the pointer');
  assert.ok(after.bytes - before.bytes < 40 * (after.frames - before.frames) + 1,
    `the moves cost ${after.bytes - before.bytes} bytes in ${after.frames - before.frames} updates`);
  await page.close();
});

test('text arrives as palette indices without a PNG container, and the canvas is exact', async () => {
  const page = await openViewer(links.view_only_url);
  const before = await page.evaluate(() => window.lizardViewer.indexed);
  const title = 'indexed';
  await client.call('launch', { session, command: `xterm -geometry 40x8+30+30 -title ${title} -e sh -c "ls /usr/share; sleep 600"` });
  assert.ok(await waitFor(async () => (await page.evaluate(() => window.lizardViewer.indexed)) > before, { timeout: 15000 }),
    'an indexed image arrived');
  await assertExact([page], 'with the terminal open');
  await inDesktop('indexed-close', `xdotool search --name ${title} windowkill`);
  await page.close();
});
