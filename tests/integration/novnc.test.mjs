// SPDX-License-Identifier: MIT
// noVNC as the fallback viewer: Debian's noVNC in headless Chromium, served
// by the bridge, speaking raw RFB to the bridge's relay with the same
// control and view-only tokens as the bridge's own viewer.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import WebSocket from 'ws';
import { waitFor, sleep } from '../lib/process.mjs';
import { textOf } from '../lib/mcp.mjs';
import { startX11vnc } from '../lib/x11.mjs';
import { viewerFixture } from '../lib/browser.mjs';

let fixture, daemon, client, browser, session, links, work, host;

before(async () => {
  assert.ok(fs.existsSync('/usr/share/novnc/core/rfb.js'), "Debian's novnc package is installed (scripts/setup.sh)");
  fixture = await viewerFixture('lizard-novnc-');
  ({ daemon, client, browser, session, links, work, host } = fixture);
});

after(() => fixture?.stop());

const novncState = (page) => page.evaluate(() => window.lizardNovnc?.state);

async function openNovnc(url) {
  const page = await browser.newPage({ viewport: { width: 1000, height: 700 } });
  await page.goto(url);
  return page;
}

async function connected(page) {
  assert.ok(await waitFor(async () => /^connected/.test(await novncState(page)), { timeout: 15000 }),
    `noVNC connects (state: ${await novncState(page)})`);
}

async function terminal(name) {
  const file = path.join(work, `${name}.txt`);
  await client.call('launch', { session, command: `xterm -geometry 50x6+20+20 -title ${name} -e sh -c 'stty -echo -icanon; exec cat > ${file}'` });
  assert.ok(await waitFor(() => fs.existsSync(host(file))));
  await client.call('wait', { session, quiet_ms: 300 });
  return file;
}

// Where a desktop point is on the page, through noVNC's scaled canvas.
function pagePoint(page, x, y) {
  return page.evaluate(([px, py]) => {
    const canvas = document.querySelector('#screen canvas');
    const r = canvas.getBoundingClientRect();
    return { x: r.left + (px + 0.5) * r.width / canvas.width, y: r.top + (py + 0.5) * r.height / canvas.height };
  }, [x, y]);
}

test('start_stream returns noVNC links with the same tokens', () => {
  assert.equal(links.novnc_url, links.url.replace('/view/', '/novnc/'));
  assert.equal(links.novnc_view_only_url, `${links.view_only_url.replace('/view/', '/novnc/')}&view_only=1`);
});

test('the control link types into an xterm through noVNC', async () => {
  const file = await terminal('novnc-control');
  const page = await openNovnc(links.novnc_url);
  await connected(page);
  const p = await pagePoint(page, 150, 60);
  await page.mouse.click(p.x, p.y);
  await page.keyboard.type('typed in noVNC');
  await page.keyboard.press('Enter');
  const typed = await waitFor(() => fs.readFileSync(host(file), 'utf8').includes('\n') && fs.readFileSync(host(file), 'utf8'));
  assert.equal(typed, 'typed in noVNC\n');
  await page.close();
});

test('the view-only link cannot type or click, even when its page sends input', async () => {
  const file = await terminal('novnc-view');
  await client.call('move_mouse', { session, x: 700, y: 500 });
  const page = await openNovnc(links.novnc_view_only_url);
  await connected(page);
  const p = await pagePoint(page, 150, 60);
  await page.mouse.click(p.x, p.y);
  await page.keyboard.type('nope');
  // A hostile page: noVNC told to send input after all.
  await page.evaluate(() => {
    const rfb = window.lizardNovnc.rfb;
    rfb.viewOnly = false;
    rfb.sendKey(0x61, 'KeyA', true);
    rfb.sendKey(0x61, 'KeyA', false);
    rfb.clipboardPasteFrom('pasted');
  });
  await page.mouse.click(p.x, p.y);
  await page.keyboard.type('nope');
  // Sent after, by MCP: once it is there, the rest would have been too.
  await client.call('click', { session, x: 150, y: 60 });
  await client.call('type', { session, text: 'marker\n' });
  const content = await waitFor(() => fs.readFileSync(host(file), 'utf8').includes('marker\n') && fs.readFileSync(host(file), 'utf8'));
  assert.equal(content, 'marker\n');
  const where = JSON.parse(textOf(await client.call('cursor_position', { session })));
  assert.deepEqual(where, { x: 150, y: 60 });
  assert.match(daemon.log, /a view-only noVNC viewer joined/);
  await page.close();
});

test('a wrong token gets nothing: no page connection, no RFB bytes', async () => {
  const page = await openNovnc(links.novnc_url.replace(/token=[0-9a-f]+/, `token=${'0'.repeat(32)}`));
  assert.ok(await waitFor(async () => /error/.test(await novncState(page)), { timeout: 10000 }));
  await page.close();
  const url = `${daemon.url.replace('http', 'ws')}/rfb/${session}`;
  for (const protocols of [['lizard-rfb', '0'.repeat(32)], ['lizard-rfb'], ['binary']]) {
    const ws = new WebSocket(url, protocols);
    let bytes = 0;
    ws.on('message', (d) => { bytes += d.length; });
    const outcome = await new Promise((resolve) => {
      ws.on('unexpected-response', (req, res) => resolve(res.statusCode));
      ws.on('open', () => resolve('open'));
      ws.on('error', () => resolve('error'));
    });
    assert.notEqual(outcome, 'open', `refused for ${protocols}`);
    assert.equal(bytes, 0);
  }
});

test('a new start_stream disconnects noVNC viewers of the old links', async () => {
  const page = await openNovnc(links.novnc_url);
  await connected(page);
  const fresh = JSON.parse(textOf(await client.call('start_stream', { session })));
  assert.ok(await waitFor(async () => !/^connected/.test(await novncState(page)), { timeout: 5000 }),
    'the old noVNC viewer is disconnected');
  links = fresh;
  await page.close();
  await sleep(100);
});

// An RFB client over the relay, up to the ServerInit; resolves with it.
function rfbHandshake(url, token) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, ['lizard-rfb', token]);
    let got = Buffer.alloc(0);
    ws.on('message', (d) => {
      got = Buffer.concat([got, d]);
      if (got.length === 12) ws.send(Buffer.from('RFB 003.008\n'));
      if (got.length === 14) ws.send(Buffer.from([1])); // None, all the relay offers
      if (got.length === 18) ws.send(Buffer.from([1])); // ClientInit
      if (got.length >= 18 + 24 && got.length >= 18 + 24 + got.readUInt32BE(18 + 20)) {
        ws.close();
        resolve({ security: [...got.subarray(12, 14)], width: got.readUInt16BE(18), height: got.readUInt16BE(20) });
      }
    });
    ws.on('error', reject);
    setTimeout(() => reject(new Error(`no ServerInit, ${got.length} bytes`)), 10000);
  });
}

test('an attached server behind a VNC password: the relay authenticates, the client never needs it', async () => {
  const x11vnc = await startX11vnc({ width: 640, height: 480 });
  try {
    const attached = JSON.parse(textOf(await client.call('create_session', { vnc: `vnc://:${x11vnc.password}@127.0.0.1:${x11vnc.port}` }))).session;
    const own = JSON.parse(textOf(await client.call('start_stream', { session: attached })));
    const token = /token=([0-9a-f]{32})/.exec(own.novnc_url)[1];
    const init = await rfbHandshake(`${daemon.url.replace('http', 'ws')}/rfb/${attached}`, token);
    assert.deepEqual(init, { security: [1, 1], width: 640, height: 480 });
    await client.call('kill_session', { session: attached });
  } finally {
    await x11vnc.stop();
  }
});
