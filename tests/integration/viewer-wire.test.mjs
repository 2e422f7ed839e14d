// SPDX-License-Identifier: MIT
// The viewer's wire format as bridge/viewer/wire.js reads it, outside a
// browser: wire.h and wire.js give the operations the same codes, and a
// viewer over a plain WebSocket that paints each update from its decoded
// operations alone (copies, fills, PNG and palette images, the pointer)
// ends with exactly the screen an MCP screenshot shows, on a real Xvnc
// with real X clients.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import { PNG } from 'pngjs';
import WebSocket from 'ws';
import { startProcess, waitFor } from '../lib/process.mjs';
import { startDaemon } from '../lib/bridge.mjs';
import { httpClient, textOf, imageOf } from '../lib/mcp.mjs';
import { startXvnc } from '../lib/x11.mjs';
import { decodePng } from '../lib/png.mjs';
import { decodeUpdate, indexedPixels, WIRE_OP } from '../../bridge/viewer/wire.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const WIDTH = 640, HEIGHT = 480;

let xvnc, daemon, client, session, token;
const apps = [];

before(async () => {
  xvnc = await startXvnc({ width: WIDTH, height: HEIGHT });
  daemon = await startDaemon();
  client = await httpClient(daemon);
  session = JSON.parse(textOf(await client.call('create_session', { vnc: xvnc.url }))).session;
  const links = JSON.parse(textOf(await client.call('start_stream', { session })));
  token = /token=([0-9a-f]{32})/.exec(links.url)[1];
});

after(async () => {
  for (const app of apps) await app.stop();
  await client?.call('kill_session', { session }).catch(() => {});
  await client?.close();
  await daemon?.stop();
  await xvnc?.stop();
});

test('wire.h and wire.js give every operation the same code', () => {
  const header = fs.readFileSync(path.join(here, '../../bridge/viewer/wire.h'), 'utf8');
  const codes = Object.fromEntries([...header.matchAll(/VIEWER_WIRE_OP_(\w+) = (\d+)/g)].map((m) => [m[1], Number(m[2])]));
  assert.deepEqual(codes, { ...WIRE_OP });
});

// A canvas of RGBA bytes that applies operations as the page does,
// counting them by kind; the pointer is drawn over it only when looked at.
function nodeCanvas(width, height) {
  const c = { width, height, rgba: new Uint8Array(width * height * 4), pointer: { x: 0, y: 0, shape: null }, kinds: {}, errors: [] };
  const put = (x, y, w, h, pixel) => { // pixel(i, j) -> [r, g, b]
    for (let j = 0; j < h; j++) {
      for (let i = 0; i < w; i++) {
        if (x + i < width && y + j < height) c.rgba.set([...pixel(i, j), 255], ((y + j) * width + x + i) * 4);
      }
    }
  };
  const image = (w, rgba) => (i, j) => rgba.subarray((j * w + i) * 4, (j * w + i) * 4 + 3);
  c.apply = (op) => {
    c.kinds[op.kind] = (c.kinds[op.kind] ?? 0) + 1;
    if (op.kind === 'copy') {
      const from = new Uint8Array(op.width * op.height * 4); // read whole first, as getImageData
      for (let j = 0; j < op.height; j++) {
        const at = ((op.srcY + j) * width + op.srcX) * 4;
        from.set(c.rgba.subarray(at, at + op.width * 4), j * op.width * 4);
      }
      put(op.x, op.y, op.width, op.height, image(op.width, from));
    } else if (op.kind === 'fill') {
      put(op.x, op.y, op.width, op.height, () => op.rgb);
    } else if (op.kind === 'png') {
      const png = PNG.sync.read(Buffer.from(op.data));
      put(op.x, op.y, png.width, png.height, image(png.width, png.data));
    } else if (op.kind === 'indexed') {
      const rgba = indexedPixels(op.width, op.height, op.depth, op.palette, zlib.inflateSync(op.zlib));
      put(op.x, op.y, op.width, op.height, image(op.width, rgba));
    } else if (op.kind === 'pointer' || op.kind === 'pointer-moved') {
      Object.assign(c.pointer, { x: op.x, y: op.y });
      if (op.kind === 'pointer') c.pointer.shape = op.width && op.height ? op : null;
    } else {
      c.errors.push(`${op.kind} was not asked for`); // JPEG: only for "fast"
    }
  };
  // Pixels differing from a decoded screenshot, the pointer drawn in.
  c.differing = (shot) => {
    const shown = Uint8Array.from(c.rgba), s = c.pointer.shape;
    for (let j = 0; s && j < s.height; j++) {
      for (let i = 0; i < s.width; i++) {
        const x = c.pointer.x + i, y = c.pointer.y + j, k = (j * s.width + i) * 4;
        if (x >= 0 && y >= 0 && x < width && y < height && s.rgba[k + 3]) shown.set(s.rgba.subarray(k, k + 3), (y * width + x) * 4);
      }
    }
    let n = 0;
    for (let i = 0; i < shown.length; i += 4) {
      if (shown[i] !== shot.data[i] || shown[i + 1] !== shot.data[i + 1] || shown[i + 2] !== shot.data[i + 2]) n++;
    }
    return n;
  };
  return c;
}

// A viewer that paints every update into a node canvas, then acknowledges.
function viewer() {
  const ws = new WebSocket(`${daemon.url.replace('http', 'ws')}/viewer`, 'lizard-viewer');
  const v = { ws, canvas: null };
  ws.on('open', () => ws.send(JSON.stringify({ session, token })));
  ws.on('message', (data, binary) => {
    if (!binary) {
      const m = JSON.parse(data);
      if (m.type === 'hello') v.canvas = nodeCanvas(m.width, m.height);
      return;
    }
    const { ops, error } = decodeUpdate(data);
    if (error) v.canvas.errors.push(error);
    for (const op of ops) v.canvas.apply(op);
    ws.send('{"type":"ack"}');
  });
  return v;
}

// The canvas equals the screen once it has settled (or says by how much not).
// Each look takes a new screenshot: on a loaded machine a program may still
// draw after a quiet spell (the terminal's lines come 0.1 s apart).
async function assertExact(v, what) {
  await client.call('wait', { session, quiet_ms: 200, timeout_ms: 5000 });
  let differing = null;
  const same = await waitFor(async () => {
    const shot = decodePng(imageOf(await client.call('screenshot', { session })).data);
    differing = v.canvas ? v.canvas.differing(shot) : null;
    return differing === 0;
  }, { timeout: 10000, interval: 200 });
  assert.ok(same, `${what}: ${differing} pixels differing from a screenshot`);
  assert.deepEqual(v.canvas.errors, [], `${what}: updates read whole`);
}

test('a viewer painting only what wire.js decodes ends with the screen a screenshot shows', async () => {
  const env = xvnc.env;
  execFileSync('xsetroot', ['-solid', '#2a6b9c'], { env });
  const v = viewer();
  try {
    await assertExact(v, 'the first screen');
    // A line at a time: each a small rectangle of few colours.
    apps.push(startProcess('xterm', ['-geometry', '50x14+20+20', '-title', 'wire', '-e', 'sh', '-c',
      'for i in $(seq 1 30); do echo "line $i of the wire test"; sleep 0.1; done; sleep 600'], { env }));
    assert.ok(await waitFor(() => v.canvas.kinds.indexed > 0, { timeout: 15000 }), `text as palette images: ${JSON.stringify(v.canvas.kinds)}`);
    await assertExact(v, 'with a terminal of text');
    const images = v.canvas.kinds.png ?? 0;
    apps.push(startProcess('display', ['-title', 'photo', '-geometry', '+300+200', '-size', '300x200', 'plasma:fractal'], { env }));
    assert.ok(await waitFor(() => v.canvas.kinds.png > images, { timeout: 15000 }), `a photograph as PNG: ${JSON.stringify(v.canvas.kinds)}`);
    await assertExact(v, 'with a photograph');
    const copies = v.canvas.kinds.copy ?? 0;
    execFileSync('sh', ['-c', 'xdotool search --name "^wire$" windowmove 120 120'], { env });
    assert.ok(await waitFor(() => (v.canvas.kinds.copy ?? 0) > copies, { timeout: 15000 }), `a moved window as a copy: ${JSON.stringify(v.canvas.kinds)}`);
    await assertExact(v, 'after the window moved');
    // Each move waited for: the first may bring the pointer's shape along.
    for (let i = 0; i < 4; i++) {
      const was = { ...v.canvas.pointer };
      await client.call('move_mouse', { session, x: 500 + i * 20, y: 100 + i * 10 });
      assert.ok(await waitFor(() => v.canvas.pointer.x !== was.x || v.canvas.pointer.y !== was.y), `move ${i} arrived`);
    }
    await assertExact(v, 'with the pointer moved');
    for (const kind of ['fill', 'pointer', 'pointer-moved']) assert.ok(v.canvas.kinds[kind] > 0, `${kind} seen: ${JSON.stringify(v.canvas.kinds)}`);
  } finally {
    v.ws.close();
  }
});
