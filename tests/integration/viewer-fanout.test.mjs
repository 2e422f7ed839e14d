// SPDX-License-Identifier: MIT
// Ten viewers of one desktop while a window moves without pause: each gets
// every change to a marker on the desktop (a robustness deadline, not a
// performance figure; the measured latencies go to the test's diagnostics),
// and MCP screenshots keep answering. The viewers are plain WebSocket
// clients that decode nothing, as bench/viewer.mjs's fan-out.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { waitFor } from '../lib/process.mjs';
import { startDaemon } from '../lib/bridge.mjs';
import { textOf, imageOf, httpClient } from '../lib/mcp.mjs';
import { sandboxOf } from '../lib/sandbox.mjs';
import { decodeUpdate } from '../../bridge/viewer/wire.js';

const VIEWERS = 10;
const MARKERS = 5;
const DEADLINE_MS = 5000; // per viewer and marker: a bound, not a goal
// The marker: a square of the root window, away from the moving window
// (y 300 and below, x under 560) and the pointer (the screen's centre).
const MARKER = { x: 640, y: 40, w: 40, h: 40 };

let daemon, client, session, links, work, host;

before(async () => {
  daemon = await startDaemon();
  client = await httpClient(daemon);
  session = JSON.parse(textOf(await client.call('create_session', { template: 'desktop', size: '800x600' }))).session;
  work = `/home/user/lizard-fanout-${randomBytes(4).toString('hex')}`;
  await client.call('exec', { session, command: `mkdir -p ${work}` });
  const box = await sandboxOf(client, session);
  host = (p) => path.join(box.dir, 'home', path.relative('/home/user', p));
  links = JSON.parse(textOf(await client.call('start_stream', { session })));
});

after(async () => {
  if (work && host) fs.writeFileSync(host(path.join(work, 'stop')), '');
  await client?.call('kill_session', { session }).catch(() => {});
  await client?.close();
  await daemon?.stop();
});

// The rectangles an update paints (images and fills, read by the page's
// own reader, bridge/viewer/wire.js); copies move pixels already shown.
const PAINTS = new Set(['png', 'jpeg', 'fill', 'indexed']);
function paintedRects(buffer) {
  return decodeUpdate(buffer).ops.filter((op) => PAINTS.has(op.kind))
    .map((op) => ({ x: op.x, y: op.y, w: op.width, h: op.height }));
}

// A viewer that acknowledges each update at once and, while a marker
// change is pending, notes when what it was sent since covers the marker.
function viewer(token) {
  const ws = new WebSocket(`${daemon.url.replace('http', 'ws')}/viewer`, 'lizard-viewer');
  const v = { ws, updates: 0, since: 0, covered: null, latencies: [] };
  ws.on('error', () => {});
  ws.on('open', () => ws.send(JSON.stringify({ session, token })));
  ws.on('message', (data, binary) => {
    if (!binary) return;
    ws.send('{"type":"ack"}');
    v.updates++;
    if (!v.covered) return;
    const now = Date.now();
    for (const r of paintedRects(data)) {
      for (let y = Math.max(r.y, MARKER.y); y < Math.min(r.y + r.h, MARKER.y + MARKER.h); y++) {
        for (let x = Math.max(r.x, MARKER.x); x < Math.min(r.x + r.w, MARKER.x + MARKER.w); x++) {
          v.covered[(y - MARKER.y) * MARKER.w + (x - MARKER.x)] = 1;
        }
      }
    }
    if (v.covered.every(Boolean)) {
      v.latencies.push(now - v.since);
      v.covered = null;
    }
  });
  return v;
}

// Runs a shell script in the desktop in the background.
const inDesktop = (script) => client.call('launch', { session, command: `sh -c '${script}'` });

test(`${VIEWERS} viewers each get every marker change while a window moves; screenshots keep answering`, async (t) => {
  const stop = path.join(work, 'stop'), fifo = path.join(work, 'marker');
  // The marker: the root window's colour, set whenever the test names one.
  await inDesktop(`mkfifo ${fifo}; while [ ! -e ${stop} ]; do read c < ${fifo} && xsetroot -solid "$c"; done`);
  await client.call('launch', { session, command: 'xterm -geometry 40x12+0+300 -title fanmover -e sh -c "ls -lR /usr/share | head -300; sleep 600"' });
  await inDesktop(`w=""; while [ -z "$w" ]; do w=$(xdotool search --name fanmover | head -1); done; ` +
    `touch ${work}/moving; while [ ! -e ${stop} ]; do for i in $(seq 0 40); do xdotool windowmove $w $((i * 6)) 300; done; done`);
  assert.ok(await waitFor(() => fs.existsSync(host(path.join(work, 'moving'))), { timeout: 20000 }), 'the window moves');

  const token = new URL(links.url).hash.match(/token=([0-9a-f]+)/)[1];
  const viewers = Array.from({ length: VIEWERS }, () => viewer(token));
  assert.ok(await waitFor(() => viewers.every((v) => v.updates > 0), { timeout: 15000 }), 'every viewer has a first frame');

  // Screenshots all along, each answered within the deadline.
  let shooting = true, shots = 0, slowest = 0;
  const screenshots = (async () => {
    while (shooting) {
      const t0 = Date.now();
      const shot = await Promise.race([client.call('screenshot', { session }),
        new Promise((resolve) => setTimeout(resolve, DEADLINE_MS, null))]);
      assert.ok(shot && imageOf(shot).data.length > 0, `a screenshot answered within ${DEADLINE_MS} ms`);
      slowest = Math.max(slowest, Date.now() - t0);
      shots++;
    }
  })();

  const colours = ['#c03030', '#3030c0'];
  try {
    for (let i = 0; i < MARKERS; i++) {
      const before = viewers.map((v) => v.updates);
      // Opened without waiting: the loop in the desktop is its only reader.
      let fd;
      assert.ok(await waitFor(() => {
        try {
          fd = fs.openSync(host(fifo), fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
          return true;
        } catch {
          return false;
        }
      }), 'the marker loop listens');
      const since = Date.now();
      for (const v of viewers) Object.assign(v, { since, covered: new Uint8Array(MARKER.w * MARKER.h) });
      fs.writeSync(fd, `${colours[i % 2]}\n`);
      fs.closeSync(fd);
      const all = await waitFor(() => viewers.every((v) => !v.covered), { timeout: DEADLINE_MS + 1000, interval: 5 });
      assert.ok(all, `marker ${i}: viewers without it after ${DEADLINE_MS} ms: ${viewers.filter((v) => v.covered).length}`);
      for (const v of viewers) assert.ok(v.latencies[i] <= DEADLINE_MS, `marker ${i}: a viewer got it after ${v.latencies[i]} ms`);
      // Motion goes on meanwhile: every viewer was sent more than the marker.
      assert.ok(await waitFor(() => viewers.every((v, k) => v.updates > before[k] + 1), { timeout: DEADLINE_MS }),
        'the moving window keeps updating every viewer');
    }
  } finally {
    shooting = false;
    await screenshots;
    for (const v of viewers) v.ws.close();
  }
  assert.ok(shots >= 2, `screenshots answered: ${shots}`);
  const latencies = viewers.flatMap((v) => v.latencies).sort((a, b) => a - b);
  t.diagnostic(`marker latency over ${VIEWERS} viewers x ${MARKERS} changes: median ${latencies[latencies.length >> 1]} ms, ` +
    `max ${latencies[latencies.length - 1]} ms; ${shots} screenshots, slowest ${slowest} ms`);
});
