// The browser viewer under motion and input: keys that never stick, a
// canvas that ends exact, copies instead of pixels. Headless Debian
// Chromium (playwright-core) against a real local desktop.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  startDaemon, httpClient, waitFor, textOf, imageOf, decodePng, tempDir, launchChromium,
} from './lib.mjs';

let daemon, client, browser, session, links, work;

before(async () => {
  work = tempDir('lizard-viewer-live-');
  daemon = await startDaemon();
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
  assert.ok(await waitFor(() => fs.existsSync(file)));
  await client.call('wait', { session, quiet_ms: 300 });
  return file;
}

async function focusTerminal(file) {
  // Through MCP, so the viewer's own clicks are not part of what is tested.
  await client.call('click', { session, x: 150, y: 60 });
  await client.call('type', { session, text: '.' });
  assert.ok(await waitFor(() => fs.readFileSync(file, 'utf8') === '.'));
}

const read = (file) => fs.readFileSync(file, 'utf8');

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
