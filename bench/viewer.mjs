// SPDX-License-Identifier: MIT
// Remote viewing side by side: lizard-bridge's viewer (its WebSocket
// updates, and its WebRTC video, on by default) and noVNC
// behind websockify, watching the same Xvnc desktop (1280x800) at the same
// time.
//
// Scenarios: a still screen, a window moved continuously, a Chromium page
// scrolling itself, and a full-screen animation (a page of moving shapes,
// every frame different). For each: one headless Chromium viewer per system
// (bytes/s on the wire, counted at a TCP relay in front of each server,
// and the payload after permessage-deflate; animation frames that received
// data per second, change latency: a colour change on the desktop until that pixel
// shows on the page's canvas, and the server's CPU), then 1 and 10
// WebSocket viewers that decode nothing (bytes/s each; latency until a
// viewer has the whole update that paints the changed pixel, found by the
// update's rectangles; the server's CPU per added viewer; bytes read from
// the socket, compressed or not).
// The bridge's CPU includes its own VNC connection; websockify decodes
// nothing, so it is the floor any re-encoding server pays above.
// WebRTC's bytes are the RTP it received (payload and headers, from the
// page's getStats; UDP, so no proxy sees them) plus what its socket
// carried (signalling, and the exact updates once the screen is still);
// its frames are frames decoded, and its latency is read from the decoded
// video while it is shown, else from the canvas.
// Each page's picture quality: SSIM of what it has against a screenshot
// taken with the motion frozen (frozenQuality says how; the median of
// QUALITY_MOMENTS such moments), and its
// glass-to-glass latency: the desktop shows the clock as blocks
// (viewer-clock.py) and the page reads them back from what it shows
// (clockLatencies). A table of WebRTC's transport follows: RTP, what else
// crossed (RTCP, STUN), keyframes, NACKs and PLIs.
//
// Usage: node bench/viewer.mjs [seconds per run] [scenario, ...]
// (LIZARD_BENCH_CODEC=VP8 or H264 has the WebRTC page ask for that codec
// first; without it the page asks for H.264 first, as it does for users)
// (scripts/bench.sh runs all scenarios; the scenario "fan-out" runs only
// the WebSocket viewers of "window moving")
//
// Every wait has a deadline: a viewer that cannot be measured (no video,
// a page that stops answering) gets a row that says why, and the run goes
// on. Whatever the run started (Xvnc, websockify, the daemon, Chromium,
// the moving programs) ends with it, also when it is interrupted (SIGINT,
// SIGTERM) or fails.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { startProcess, waitFor, sleep, tempDir } from '../tests/lib/process.mjs';
import { startDaemon } from '../tests/lib/bridge.mjs';
import { httpClient, textOf, imageOf } from '../tests/lib/mcp.mjs';
import { startXvnc } from '../tests/lib/x11.mjs';
import { launchChromium } from '../tests/lib/browser.mjs';
import { WebSocket } from '../tests/lib/websocket.mjs';
import { decodeUpdate } from '../bridge/viewer/wire.js';
import { median, percentile, within, endOnSignals } from './lib.mjs';

const here = path.dirname(new URL(import.meta.url).pathname);
const COMMAND_MS = 10000; // an X client run on the desktop
const run = (command, args, options) => promisify(execFile)(command, args, { timeout: COMMAND_MS, ...options });
const seconds = Number(process.argv[2] || 10);
// The codec the WebRTC page asks for first (LIZARD_BENCH_CODEC=H264 or
// VP8); by default the page's own choice, H.264 where Chromium decodes it.
const CODEC = process.env.LIZARD_BENCH_CODEC || '';
let videoCodecs = [];
const only = process.argv.slice(3);
const LATENCY_SAMPLES = 9; // changes timed per page,
const LATENCY_ROUNDS = 3; // in this many rounds per server, a page alone
const FAN_OUT_SAMPLES = 30; // changes timed per fan-out run,
const FAN_OUT_ROUNDS = 3; // in this many rounds per server
const PROBE = { x: 1200, y: 20 }; // root window, never covered below
const COLOURS = ['#ff0000', '#0000ff'];
// Deadlines: a call into a page, loading one (and its first picture or
// video), closing one, a change showing before it counts as missed.
const EVALUATE_MS = 10000;
const OPEN_MS = 20000;
const CLOSE_MS = 10000;
const CHANGE_MS = 5000;
const SESSION_MS = 6 * 3600 * 1000;
// The clock painted on the desktop for glass-to-glass latency
// (bench/viewer-clock.py): its row's corner and block size, on the root
// window above every moving window (all start at y >= 40), and how long
// each page reads it. Blocks on the 16-pixel grid stay sharp in video.
const CLOCK = { x: 96, y: 16, block: 16, bits: 24, checkBits: 8 };
const CLOCK_MS = 8000;
const SETTLE_MS = 5000; // the screen settling after motion is frozen
// Moments each page's picture is compared at (frozenQuality), the motion
// going on for MOTION_BETWEEN_MS between them; the median is reported: one
// moment's frame is one sample of an encoder that varies frame to frame.
const QUALITY_MOMENTS = 3;
const MOTION_BETWEEN_MS = 1000;

const freePort = () => new Promise((resolve) => {
  const probe = net.createServer();
  probe.listen(0, '127.0.0.1', () => {
    const { port } = probe.address();
    probe.close(() => resolve(port));
  });
});

// CPU seconds (user + system) a process, its live children and those it
// has reaped have used so far (websockify forks one child per connection;
// one that ended between two readings is counted by its parent's cutime,
// so the difference never goes negative).
function cpuSeconds(pid) {
  let total = 0;
  for (const entry of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const fields = fs.readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ');
      if (Number(entry) === pid) total += (Number(fields[13]) + Number(fields[14])) / 100;
      if (Number(entry) === pid || Number(fields[1]) === pid) total += (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {}
  }
  return total;
}

// A TCP relay in front of a server that counts the bytes it sends: what
// crosses the wire, compressed or not (the browser's protocol monitor shows
// payloads after permessage-deflate has inflated them).
// Closing it ends the connections still open (server.close alone would
// wait for them).
async function countingProxy(targetPort) {
  const counter = { bytes: 0 };
  const open = new Set();
  const server = net.createServer((inbound) => {
    const outbound = net.connect(targetPort, '127.0.0.1');
    outbound.on('data', (data) => { counter.bytes += data.length; });
    inbound.pipe(outbound).pipe(inbound);
    inbound.on('error', () => outbound.destroy());
    outbound.on('error', () => inbound.destroy());
    for (const s of [inbound, outbound]) {
      open.add(s);
      s.on('close', () => open.delete(s));
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  counter.port = server.address().port;
  counter.close = () => new Promise((resolve) => {
    server.close(resolve);
    for (const s of open) s.destroy();
  });
  return counter;
}

// Counts the 60 Hz display frames in which anything arrived on a page's
// WebSockets: updates the viewer could show. (Bytes: at the proxy.)
function instrument(page, proxy) {
  const stats = { bytes: 0, frames: 0, inflated: 0 };
  Object.defineProperty(stats, 'bytes', { get: () => proxy.bytes, enumerable: true });
  let lastTick = -1;
  page.on('websocket', (ws) => ws.on('framereceived', (frame) => {
    stats.inflated += typeof frame.payload === 'string' ? Buffer.byteLength(frame.payload) : frame.payload.length;
    const tick = Math.floor(Date.now() / (1000 / 60));
    if (tick !== lastTick) stats.frames++;
    lastTick = tick;
  }));
  return stats;
}

// Resolves with Date.now() when the shown pixel has the colour: the
// canvas's exactly, or the decoded video's (lossy: near it) while the
// bridge's page shows video; with null when it has not within CHANGE_MS
// (the page stops looking then too).
function seen(page, colour) {
  const rgb = [1, 3, 5].map((i) => parseInt(colour.slice(i, i + 2), 16));
  return within(page.evaluate(([x, y, want, wait]) => new Promise((resolve) => {
    const scratch = new OffscreenCanvas(1, 1).getContext('2d', { willReadFrequently: true });
    const end = performance.now() + wait;
    const poll = () => {
      const video = document.getElementById('video');
      let p, tolerance = 0;
      if (video && !video.hidden && video.videoWidth) {
        scratch.drawImage(video, x, y, 1, 1, 0, 0, 1, 1);
        p = scratch.getImageData(0, 0, 1, 1).data;
        tolerance = 40;
      } else {
        p = document.querySelector('canvas')?.getContext('2d').getImageData(x, y, 1, 1).data;
      }
      if (p && [0, 1, 2].every((i) => Math.abs(p[i] - want[i]) <= tolerance)) resolve(Date.now());
      else if (performance.now() > end) resolve(null);
      else requestAnimationFrame(poll);
    };
    poll();
  }), [PROBE.x, PROBE.y, rgb, CHANGE_MS]), CHANGE_MS + EVALUATE_MS, 'the page looking for a change');
}

// A WebRTC page's received RTP bytes (payload and headers) and frames
// decoded so far.
function rtpCounters(page) {
  return within(page.evaluate(async () => {
    const counters = { bytes: 0, frames: 0, transportIn: 0, transportOut: 0, stun: 0, keyframes: 0, retransmitted: 0, nacks: 0, plis: 0 };
    if (typeof pc === 'undefined' || !pc) return counters;
    for (const r of (await pc.getStats()).values()) {
      if (r.type === 'inbound-rtp' && r.kind === 'video') {
        counters.bytes += (r.bytesReceived || 0) + (r.headerBytesReceived || 0);
        counters.frames += r.framesDecoded || 0;
        counters.keyframes += r.keyFramesDecoded || 0;
        counters.retransmitted += r.retransmittedBytesReceived || 0;
        counters.nacks += r.nackCount || 0;
        counters.plis += r.pliCount || 0;
      } else if (r.type === 'transport') {
        counters.transportIn += r.bytesReceived || 0;
        counters.transportOut += r.bytesSent || 0;
      } else if (r.type === 'candidate-pair' && r.nominated) {
        counters.stun += (r.requestsReceived || 0) + (r.requestsSent || 0) + (r.responsesReceived || 0) + (r.responsesSent || 0);
      }
    }
    return counters;
  }), EVALUATE_MS, 'the page\'s video statistics');
}

// Glass-to-glass latency: the page reads the clock row (CLOCK) from what
// it shows, the decoded video at each frame it presents
// (requestVideoFrameCallback) or its canvas at each display frame, and
// takes its own clock minus the painted one, once per value it sees.
// Values whose check byte does not match (a frame caught mid-repaint, a
// block blurred past recognition) are counted apart, not guessed.
function clockLatencies(page, fromVideo) {
  return within(page.evaluate(({ x, y, block, bits, checkBits, ms, fromVideo }) => new Promise((resolve) => {
    const count = bits + checkBits, mask = (1 << bits) - 1;
    const scratch = new OffscreenCanvas(count * block, block).getContext('2d', { willReadFrequently: true });
    const samples = [], seen = new Set();
    let unreadable = 0, done = false;
    const read = (source) => {
      const now = Date.now();
      scratch.drawImage(source, x, y, count * block, block, 0, 0, count * block, block);
      const d = scratch.getImageData(0, 0, count * block, block).data;
      let value = 0, check = 0;
      for (let i = 0; i < count; i++) {
        const at = ((block >> 1) * count * block + i * block + (block >> 1)) * 4;
        const bit = 0.299 * d[at] + 0.587 * d[at + 1] + 0.114 * d[at + 2] > 128 ? 1 : 0;
        if (i < bits) value |= bit << i;
        else check |= bit << (i - bits);
      }
      if (check !== (~(value ^ (value >> 8) ^ (value >> 16)) & 0xff)) {
        unreadable++;
      } else if (!seen.has(value)) {
        seen.add(value);
        samples.push(((now & mask) - value + mask + 1) & mask);
      }
    };
    const finish = () => {
      if (!done) resolve({ samples, unreadable });
      done = true;
    };
    setTimeout(finish, ms);
    const video = document.getElementById('video');
    if (fromVideo) {
      video.requestVideoFrameCallback(function frame() {
        if (done) return;
        read(video);
        video.requestVideoFrameCallback(frame);
      });
    } else {
      const canvas = document.querySelector('canvas#screen') || document.querySelector('canvas');
      requestAnimationFrame(function poll() {
        if (done) return;
        read(canvas);
        requestAnimationFrame(poll);
      });
    }
  }), { ...CLOCK, ms: CLOCK_MS, fromVideo }), CLOCK_MS + EVALUATE_MS, 'the page reading the clock');
}

// SSIM of what the page shows against a screenshot (PNG, base64) of the
// same moment: on luma (BT.601), in 8x8 windows every 4 pixels, with the
// usual constants (K1 0.01, K2 0.03), averaged over the screen. fromVideo
// reads the video's newest decoded frame (hidden or not), else the canvas.
function ssimOf(page, png, fromVideo) {
  return within(page.evaluate(async ({ png, fromVideo }) => {
    const bytes = Uint8Array.from(atob(png), (c) => c.charCodeAt(0));
    const shot = await createImageBitmap(new Blob([bytes], { type: 'image/png' }));
    const w = shot.width, h = shot.height;
    const luma = (source) => {
      const c = new OffscreenCanvas(w, h).getContext('2d', { willReadFrequently: true });
      c.drawImage(source, 0, 0, w, h);
      const d = c.getImageData(0, 0, w, h).data, out = new Float32Array(w * h);
      for (let i = 0; i < w * h; i++) out[i] = 0.299 * d[i * 4] + 0.587 * d[i * 4 + 1] + 0.114 * d[i * 4 + 2];
      return out;
    };
    const source = fromVideo ? document.getElementById('video') : (document.querySelector('canvas#screen') || document.querySelector('canvas'));
    if (fromVideo && !source.videoWidth) return null;
    const a = luma(shot), b = luma(source);
    const C1 = (0.01 * 255) ** 2, C2 = (0.03 * 255) ** 2;
    let total = 0, n = 0;
    for (let y = 0; y + 8 <= h; y += 4) {
      for (let x = 0; x + 8 <= w; x += 4) {
        let sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
        for (let j = 0; j < 8; j++) {
          for (let i = (y + j) * w + x, end = i + 8; i < end; i++) {
            const p = a[i], q = b[i];
            sa += p; sb += q; saa += p * p; sbb += q * q; sab += p * q;
          }
        }
        const ma = sa / 64, mb = sb / 64;
        const va = saa / 64 - ma * ma, vb = sbb / 64 - mb * mb, cov = sab / 64 - ma * mb;
        total += ((2 * ma * mb + C1) * (2 * cov + C2)) / ((ma * ma + mb * mb + C1) * (va + vb + C2));
        n++;
      }
    }
    return total / n;
  }, { png, fromVideo }), EVALUATE_MS * 3, 'the page computing SSIM');
}

// The page's picture against the framebuffer with the motion stopped:
// every moving program frozen (SIGSTOP), the screen settled, a
// screenshot, and SSIM (ssimOf) of the picture the page has of it, then
// the motion goes on. For WebRTC that is the video's last frame, decoded
// from the motion's stream (the page itself shows the exact canvas once
// the screen is still); for the others, their canvas.
async function frozenQuality(page, fromVideo) {
  for (const m of motion) signalTree(m.pid, 'SIGSTOP');
  try {
    await client.call('wait', { session, quiet_ms: 500, timeout_ms: SETTLE_MS });
    const png = imageOf(await client.call('screenshot', { session })).data;
    // The page's last picture of it: nothing new decoded or painted for 500 ms.
    const progress = () => ask(page, () => (window.lizardViewer ? window.lizardViewer.videoFrames + window.lizardViewer.frames : 0), 'the page\'s frames');
    let last = -1;
    await waitFor(async () => {
      const now = await progress();
      const still = now === last;
      last = now;
      return still;
    }, { timeout: SETTLE_MS, interval: 500 });
    return await ssimOf(page, png, fromVideo);
  } finally {
    for (const m of motion) signalTree(m.pid, 'SIGCONT');
  }
}

// Sends signal to a process and all its descendants (a moving program's
// children may sit in process groups of their own, as a terminal's do).
function signalTree(pid, signal) {
  const children = new Map();
  for (const entry of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const parent = Number(fs.readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {}
  }
  const all = [pid];
  for (let i = 0; i < all.length; i++) all.push(...(children.get(all[i]) ?? []));
  for (const p of all) {
    try {
      process.kill(p, signal);
    } catch {}
  }
}

let colourIndex = 0;
async function changeColour(env, before = () => {}) {
  const colour = COLOURS[colourIndex++ % 2];
  before();
  const start = Date.now();
  await run('xsetroot', ['-solid', colour], { env });
  return { colour, start };
}

// The page's time from each of count changes until the pixel shows.
async function pageLatencies(page, env, count) {
  const samples = [];
  for (let i = 0; i < count; i++) {
    const colour = COLOURS[colourIndex % 2];
    const watching = seen(page, colour);
    watching.catch(() => {}); // awaited below, after the change
    const { start } = await changeColour(env);
    const at = await watching;
    samples.push(at ? Math.max(0, at - start) : CHANGE_MS);
    await sleep(200);
  }
  return samples;
}

// A viewer of the bridge that decodes nothing: joins, acknowledges each
// update at once (the page would after painting), counts bytes.
function lizardSocket(daemon, session, token) {
  const ws = new WebSocket(`${daemon.url.replace('http', 'ws')}/viewer`, 'lizard-viewer');
  const stats = { bytes: 0, since: 0, changed: 0, ws };
  ws.on('error', () => {}); // closing at the end; a dropped one shows as no bytes
  ws.on('open', () => ws.send(JSON.stringify({ session, token })));
  ws.on('message', (data, binary) => {
    stats.bytes = ws._socket?.bytesRead ?? stats.bytes; // on the wire, compressed or not
    if (!binary) return;
    if (updateCovers(data)) probePainted(stats);
    ws.send('{"type":"ack"}');
  });
  return stats;
}

// Whether an update of the bridge's viewer protocol paints PROBE: by its
// operations' rectangles (the page's own reader, bridge/viewer/wire.js),
// a copy's where it goes; the pointer's never.
function updateCovers(b) {
  const { ops, error } = decodeUpdate(b);
  if (error) throw new Error(`unexpected update: ${error}`);
  return ops.some((op) => op.kind !== 'pointer' && op.kind !== 'pointer-moved' && covers(op.x, op.y, op.width, op.height));
}

// An RFB client of websockify that decodes nothing: the handshake, then
// incremental update requests, parsing only lengths (ZRLE, CopyRect, raw).
function rfbSocket(port) {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/websockify`, ['binary']);
  const stats = { bytes: 0, since: 0, changed: 0, ws };
  ws.on('error', () => {});
  let buffer = Buffer.alloc(0), state = 'version', width = 0, height = 0;
  const request = (incremental) => ws.send(Buffer.from([3, incremental, 0, 0, 0, 0, width >> 8, width & 255, height >> 8, height & 255]));
  ws.on('message', (data) => {
    stats.bytes = ws._socket?.bytesRead ?? stats.bytes; // on the wire
    buffer = Buffer.concat([buffer, data]);
    for (;;) {
      if (state === 'version' && buffer.length >= 12) {
        ws.send(Buffer.from('RFB 003.008\n'));
        buffer = buffer.subarray(12);
        state = 'types';
      } else if (state === 'types' && buffer.length >= 1 && buffer.length >= 1 + buffer[0]) {
        ws.send(Buffer.from([1]));
        buffer = buffer.subarray(1 + buffer[0]);
        state = 'result';
      } else if (state === 'result' && buffer.length >= 4) {
        ws.send(Buffer.from([1]));
        buffer = buffer.subarray(4);
        state = 'init';
      } else if (state === 'init' && buffer.length >= 24 && buffer.length >= 24 + buffer.readUInt32BE(20)) {
        width = buffer.readUInt16BE(0);
        height = buffer.readUInt16BE(2);
        buffer = buffer.subarray(24 + buffer.readUInt32BE(20));
        // 32 bpp true colour as the server has it; ZRLE, CopyRect, raw.
        ws.send(Buffer.from([2, 0, 0, 3, 0, 0, 0, 16, 0, 0, 0, 1, 0, 0, 0, 0]));
        request(0);
        state = 'messages';
      } else if (state === 'messages' && buffer.length >= 1) {
        let paints = false;
        const used = serverMessageLength(buffer, (x, y, w, h) => { paints ||= covers(x, y, w, h); });
        if (used === 0) break;
        if (paints) probePainted(stats);
        const update = buffer[0] === 0;
        buffer = buffer.subarray(used);
        if (update) request(1);
      } else {
        break;
      }
    }
  });
  return stats;
}

// The length of the server message at the start of b, or 0 if incomplete;
// rect(x, y, width, height) for each rectangle of a complete update.
function serverMessageLength(b, rect) {
  if (b[0] === 2) return 1; // Bell
  if (b[0] === 3) return b.length >= 8 && b.length >= 8 + b.readUInt32BE(4) ? 8 + b.readUInt32BE(4) : 0;
  if (b[0] === 1) return b.length >= 6 && b.length >= 6 + 6 * b.readUInt16BE(4) ? 6 + 6 * b.readUInt16BE(4) : 0;
  if (b[0] !== 0) throw new Error(`unexpected RFB message ${b[0]}`);
  if (b.length < 4) return 0;
  let at = 4;
  const rects = [];
  for (let n = b.readUInt16BE(2); n > 0; n--) {
    if (b.length < at + 12) return 0;
    const w = b.readUInt16BE(at + 4), h = b.readUInt16BE(at + 6), encoding = b.readInt32BE(at + 8);
    rects.push([b.readUInt16BE(at), b.readUInt16BE(at + 2), w, h]);
    at += 12;
    if (encoding === 0) at += w * h * 4;
    else if (encoding === 1) at += 4;
    else if (encoding === 16) {
      if (b.length < at + 4) return 0;
      at += 4 + b.readUInt32BE(at);
    } else throw new Error(`unexpected encoding ${encoding}`);
  }
  if (b.length < at) return 0;
  for (const r of rects) rect(...r);
  return at;
}

// Each socket's time from a change (the root's colour, at PROBE) until it
// has the whole update that paints PROBE: the change itself, not merely the
// next update of the moving window.
async function socketLatencies(sockets, env, count) {
  const samples = [];
  for (let i = 0; i < count; i++) {
    await sleep(300);
    for (const s of sockets) s.changed = s.since = 0;
    const { start } = await changeColour(env, () => { for (const s of sockets) s.since = Date.now(); });
    await waitFor(() => sockets.every((s) => s.changed), { timeout: CHANGE_MS, interval: 5 });
    for (const s of sockets) samples.push(s.changed ? s.changed - start : CHANGE_MS);
  }
  return samples;
}

const covers = (x, y, w, h) => PROBE.x >= x && PROBE.x < x + w && PROBE.y >= y && PROBE.y < y + h;

// Notes the time when an update painting PROBE arrives after s.since.
function probePainted(s) {
  if (s.since && !s.changed) s.changed = Date.now();
}

async function measure(read, pid) {
  const before = await read(), cpu = cpuSeconds(pid), t = Date.now();
  await sleep(seconds * 1000);
  const after = await read(), elapsed = (Date.now() - t) / 1000;
  return { after, before, elapsed, cpu: (cpuSeconds(pid) - cpu) / elapsed };
}

// A page's answer to fn, with a deadline.
const ask = (page, fn, what) => within(page.evaluate(fn), EVALUATE_MS, what);

const work = tempDir('lizard-bench-viewer-');
const motion = [];
const rows = [], fanRows = [], transportRows = [], proxies = [], notMeasured = [];
let xvnc, env, daemon, client, websockify, browser, session;
// Ends what the run started, each with a deadline, at the end, on a
// failure, or on a signal.
const cleanup = endOnSignals(async () => {
  const steps = [
    ...motion.splice(0).map((m) => ['a moving program', () => m.stop()]),
    ['the browser', () => browser?.close()],
    ...proxies.splice(0).map((p) => ['a counting relay', () => p.close()]),
    ['the session', () => session && client.call('kill_session', { session })],
    ['the MCP client', () => client?.close()],
    ['the daemon', () => daemon?.stop()],
    ['websockify', () => websockify?.stop()],
    ['Xvnc', () => xvnc?.stop()],
  ];
  for (const [what, step] of steps) {
    await within(Promise.resolve().then(step), 15000, `ending ${what}`).catch((e) => console.error(`bench: ${e.message}`));
  }
  fs.rmSync(work, { recursive: true, force: true });
}, 120000);

// Something that could not be measured: said at once, and under the tables.
function skipped(scenario, name, e) {
  const why = e.message.split('\n')[0];
  console.error(`bench: ${scenario}, ${name}: not measured: ${why}`);
  notMeasured.push(`${scenario}, ${name}: ${why}`);
}

try {
  xvnc = await startXvnc({ width: 1280, height: 800 });
  env = xvnc.env;
  daemon = await startDaemon();
  client = await httpClient(daemon);
  const port = await freePort();
  websockify = startProcess('websockify', ['--web', '/usr/share/novnc', `127.0.0.1:${port}`, `--unix-target=${xvnc.socket}`]);
  // The run ends the browser itself, on a signal too.
  browser = await launchChromium({ handleSIGINT: false, handleSIGTERM: false, handleSIGHUP: false });
  await run('xsetroot', ['-solid', '#303030'], { env });
  // The session outlives the run (the default 5 minutes ended it in the
  // third scenario, and with it every link: the WebRTC rows then waited
  // for video that could not come); the daemon goes with the run anyway.
  session = JSON.parse(textOf(await client.call('create_session', { vnc: `unix://${xvnc.socket}`, timeout_ms: SESSION_MS }))).session;
  const links = JSON.parse(textOf(await client.call('start_stream', { session })));
  const token = /token=([0-9a-f]{32})/.exec(links.view_only_url)[1];
  const listening = await waitFor(() => new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => { s.end(); resolve(true); });
    s.on('error', () => resolve(false));
  }), { timeout: OPEN_MS });
  if (!listening) throw new Error(`websockify did not listen on ${port} within ${OPEN_MS / 1000} s`);
  const bridgeProxy = await countingProxy(Number(new URL(daemon.url).port));
  const novncProxy = await countingProxy(port);
  proxies.push(bridgeProxy, novncProxy);
  const viewURL = new URL(links.view_only_url);
  viewURL.port = bridgeProxy.port;
  const viewers = {
    'lizard-bridge': { url: `${viewURL.href}&video=off`, pid: daemon.child.pid, proxy: bridgeProxy },
    'lizard-bridge WebRTC': { url: CODEC ? `${viewURL.href}&codec=${CODEC}` : viewURL.href, pid: daemon.child.pid, proxy: bridgeProxy, webrtc: true },
    'noVNC + websockify': { url: `http://127.0.0.1:${novncProxy.port}/vnc_lite.html?port=${novncProxy.port}&path=websockify&view_only=true`, pid: websockify.pid, proxy: novncProxy },
  };
  // The page that scrolls itself, for the last scenario.
  const long = path.join(work, 'long.html');
  fs.writeFileSync(long, `<body style="font:16px serif">${Array.from({ length: 3000 }, (_, i) => `<p>Line ${i}: the quick brown fox jumps over the lazy dog ${'#'.repeat(i % 40)}</p>`).join('')}
<script>setInterval(() => scrollBy(0, 40), 50)</script></body>`);
  // The animation: shapes moving over a gradient, on the whole window.
  const animation = path.join(work, 'animation.html');
  fs.writeFileSync(animation, `<body style="margin:0;overflow:hidden"><canvas id="c"></canvas><script>
const c = document.getElementById('c'), g = c.getContext('2d');
c.width = innerWidth; c.height = innerHeight;
function frame(t) {
  const sky = g.createLinearGradient(0, 0, c.width, c.height);
  sky.addColorStop(0, 'hsl(' + (t / 20 % 360) + ',60%,40%)');
  sky.addColorStop(1, 'hsl(' + ((t / 20 + 180) % 360) + ',60%,30%)');
  g.fillStyle = sky;
  g.fillRect(0, 0, c.width, c.height);
  for (let i = 0; i < 40; i++) {
    g.fillStyle = 'hsl(' + (i * 9) + ',80%,60%)';
    g.beginPath();
    g.arc((Math.sin(t / 900 + i) + 1) / 2 * c.width, (Math.cos(t / 700 + i * 1.3) + 1) / 2 * c.height, 20 + i, 0, 7);
    g.fill();
  }
  requestAnimationFrame(frame);
}
requestAnimationFrame(frame);
</script></body>`);
  const scenarios = {
    'screen still': async () => {},
    'window moving': async () => {
      motion.push(startProcess('xterm', ['-geometry', '80x24+0+100', '-title', 'mover', '-e', 'top'], { env }));
      await sleep(1000);
      motion.push(startProcess('sh', ['-c', 'while :; do for x in $(seq 0 16 640) $(seq 640 -16 0); do xdotool search --name mover windowmove %@ $x 120; sleep 0.02; done; done'], { env }));
    },
    'Chromium scrolling': async () => {
      motion.push(startProcess('chromium', ['--no-sandbox', '--no-first-run', '--disable-gpu', `--user-data-dir=${path.join(work, 'chromium')}`,
        '--window-position=0,60', '--window-size=1100,700', `file://${long}`], { env }));
      await sleep(3000);
    },
    'animation': async () => {
      motion.push(startProcess('chromium', ['--no-sandbox', '--no-first-run', '--disable-gpu', `--user-data-dir=${path.join(work, 'chromium-animation')}`,
        '--window-position=0,40', '--window-size=1280,760', `--app=file://${animation}`], { env })); // PROBE stays uncovered
      await sleep(3000);
    },
  };
  // One page open (and its first picture, or for WebRTC its video), fn
  // given it, and the page closed again, each step with a deadline.
  const withPage = async (name, viewer, fn) => {
    const context = await within(browser.newContext({ viewport: { width: 1300, height: 850 } }), OPEN_MS, 'a browser context');
    try {
      const page = await within(context.newPage(), OPEN_MS, 'a new page');
      const stats = instrument(page, viewer.proxy);
      await page.goto(viewer.url, { timeout: OPEN_MS });
      if (!await waitFor(async () => stats.bytes > 0 && (await within(page.$('canvas'), EVALUATE_MS, 'the page\'s canvas')), { timeout: OPEN_MS })) {
        throw new Error(`the page showed nothing within ${OPEN_MS / 1000} s`);
      }
      // A refused link (revoked, or its session ended) shows nothing to measure.
      const refused = viewer.proxy === bridgeProxy && await ask(page, () => window.lizardViewer.error, 'the page\'s error');
      if (refused) throw new Error(`the page says: ${refused}`);
      if (viewer.webrtc && !await waitFor(() => ask(page, () => window.lizardViewer.transport === 'webrtc', 'the page\'s transport'), { timeout: OPEN_MS })) {
        const said = await ask(page, () => { const { transport, videoError, videoFrames, state, error } = window.lizardViewer; return { transport, videoError, videoFrames, state, error }; }, 'the page\'s state');
        const daemonSaid = daemon.log.match(/[^\n]*video[^\n]*/g)?.slice(-2).join('; ');
        throw new Error(`no video within ${OPEN_MS / 1000} s (the page says ${JSON.stringify(said)}; the daemon last said: ${daemonSaid ?? 'nothing of video'})`);
      }
      await sleep(1500);
      // WebRTC: RTP from getStats plus the socket's bytes; frames decoded.
      const read = viewer.webrtc
        ? async () => {
          const rtp = await rtpCounters(page);
          return { bytes: stats.bytes + rtp.bytes, frames: rtp.frames, inflated: stats.inflated + rtp.bytes, rtp };
        }
        : async () => ({ ...stats });
      return await fn({ page, read });
    } finally {
      await within(context.close(), CLOSE_MS, 'closing the page').catch((e) => console.error(`bench: ${name}: ${e.message}`));
    }
  };
  for (const [scenario, start] of Object.entries(scenarios)) {
    const fanOutOnly = scenario === 'window moving' && only.includes('fan-out') && !only.includes(scenario);
    if (only.length && !only.includes(scenario) && !fanOutOnly) continue;
    console.error(`bench: ${scenario}`);
    for (const stop of motion.splice(0)) await stop.stop();
    await run('sh', ['-c', 'xdotool search --name mover windowkill 2>/dev/null; true'], { env });
    await start();
    if (!fanOutOnly) {
      // Bytes, frames and CPU with one page open at a time (two pages
      // decoding at once would slow each other).
      const measured = {}, failed = new Set();
      for (const [name, viewer] of Object.entries(viewers)) {
        try {
          measured[name] = await withPage(name, viewer, (o) => measure(o.read, viewer.pid));
        } catch (e) {
          failed.add(name);
          skipped(scenario, name, e);
        }
      }
      // Latency with one page open at a time, as for the fan-out below
      // (an RFB server serves its newest client first), in alternating
      // rounds so a busy moment of the machine falls on both alike.
      const latency = {};
      for (let round = 0; round < LATENCY_ROUNDS; round++) {
        for (const [name, viewer] of Object.entries(viewers)) {
          if (failed.has(name)) continue;
          try {
            const samples = await withPage(name, viewer, (o) => pageLatencies(o.page, env, LATENCY_SAMPLES / LATENCY_ROUNDS));
            (latency[name] ??= []).push(...samples);
          } catch (e) {
            failed.add(name);
            skipped(scenario, `${name} (latency)`, e);
          }
        }
      }
      const quality = {}, clock = {};
      for (const [name, viewer] of Object.entries(viewers)) {
        if (failed.has(name)) continue;
        try {
          quality[name] = await withPage(name, viewer, async (o) => {
            const moments = [];
            for (let i = 0; i < QUALITY_MOMENTS; i++) {
              if (i) await sleep(MOTION_BETWEEN_MS);
              moments.push(await frozenQuality(o.page, viewer.webrtc));
            }
            return moments.some((m) => m === null) ? null : median(moments);
          });
        } catch (e) {
          skipped(scenario, `${name} (SSIM)`, e);
        }
      }
      const painter = startProcess('python3', [path.join(here, 'viewer-clock.py'), CLOCK.x, CLOCK.y, CLOCK.block].map(String), { env });
      motion.push(painter);
      for (const [name, viewer] of Object.entries(viewers)) {
        if (failed.has(name)) continue;
        try {
          clock[name] = await withPage(name, viewer, (o) => clockLatencies(o.page, viewer.webrtc));
          if (!clock[name].samples.length) throw new Error(`the clock was never read (${clock[name].unreadable} unreadable frames)`);
        } catch (e) {
          delete clock[name];
          skipped(scenario, `${name} (glass-to-glass)`, e);
        }
      }
      motion.splice(motion.indexOf(painter), 1);
      await painter.stop();
      for (const name of Object.keys(viewers)) {
        const m = measured[name];
        if (!m) {
          rows.push(`| ${scenario} | ${name} | not measured | | | | | | |`);
          continue;
        }
        const changeLatency = latency[name] ? `${median(latency[name])} ms` : 'not measured';
        const ssim = quality[name] ?? null;
        const g2g = clock[name] ? `${percentile(clock[name].samples, 50)} / ${percentile(clock[name].samples, 95)} ms (${clock[name].samples.length})` : 'not measured';
        rows.push(`| ${scenario} | ${name} | ${Math.round((m.after.bytes - m.before.bytes) / m.elapsed).toLocaleString('en')} | ${ssim === null ? 'not measured' : ssim.toFixed(4)} | ${g2g} | ${((m.after.frames - m.before.frames) / m.elapsed).toFixed(1)} | ${changeLatency} | ${(m.cpu * 100).toFixed(1)}% | ${Math.round((m.after.inflated - m.before.inflated) / m.elapsed).toLocaleString('en')} |`);
        if (m.after.rtp) {
          const rate = (field) => (m.after.rtp[field] - m.before.rtp[field]) / m.elapsed;
          const count = (field) => m.after.rtp[field] - m.before.rtp[field];
          transportRows.push(`| ${scenario} | ${Math.round(rate('bytes')).toLocaleString('en')} | ${Math.round(rate('transportIn') - rate('bytes')).toLocaleString('en')} | ${Math.round(rate('transportOut')).toLocaleString('en')} | ${rate('stun').toFixed(2)} | ${count('keyframes')} | ${Math.round(rate('retransmitted')).toLocaleString('en')} | ${count('nacks')} / ${count('plis')} |`);
        }
      }
    }
    if (scenario !== 'window moving') continue;
    // One server's viewers open at a time: RFB servers serve their newest
    // client first, so noVNC's connections open beside the bridge's would
    // delay the bridge's update by their encoding. Latency in alternating
    // rounds, so a busy moment of the machine falls on both alike.
    const connect = (name, count) => Array.from({ length: count }, () => (name === 'lizard-bridge' ? lizardSocket(daemon, session, token) : rfbSocket(port)));
    const cpu = {};
    for (const count of [1, 10]) {
      const measured = {}, latency = {}, failed = new Set();
      for (let round = 0; round < FAN_OUT_ROUNDS; round++) {
        for (const [name, viewer] of Object.entries(viewers)) {
          if (viewer.webrtc || failed.has(name)) continue; // the fan-out is of sockets that decode nothing
          const sockets = connect(name, count);
          try {
            if (!await waitFor(() => sockets.every((s) => s.bytes > 0), { timeout: OPEN_MS })) {
              throw new Error(`${sockets.filter((s) => !s.bytes).length} of ${count} sockets got nothing within ${OPEN_MS / 1000} s`);
            }
            await sleep(1500);
            if (round === 0) {
              measured[name] = await measure(async () => sockets.map((s) => s.bytes), viewer.pid);
              (cpu[name] ??= {})[count] = measured[name].cpu;
            }
            (latency[name] ??= []).push(...await socketLatencies(sockets, env, FAN_OUT_SAMPLES / FAN_OUT_ROUNDS));
          } catch (e) {
            failed.add(name);
            delete measured[name];
            skipped('fan-out', `${name}, ${count} viewers`, e);
          } finally {
            for (const s of sockets) s.ws.close();
          }
          await sleep(500);
        }
      }
      for (const name of Object.keys(viewers).filter((n) => measured[n])) {
        const m = measured[name], perViewer = median(m.after.map((b, i) => (b - m.before[i]) / m.elapsed));
        const added = count === 10 && cpu[name][1] !== undefined ? `${(((cpu[name][10] - cpu[name][1]) / 9) * 100).toFixed(2)}%` : '';
        fanRows.push(`| ${name} | ${count} | ${Math.round(perViewer).toLocaleString('en')} | ${median(latency[name])} ms / ${Math.max(...latency[name])} ms | ${(m.cpu * 100).toFixed(1)}% | ${added} |`);
      }
    }
  }
} finally {
  // The codecs the WebRTC pages got, as the daemon logged them.
  videoCodecs = [...new Set([...(daemon?.log ?? '').matchAll(/a viewer's video started \((\w+)/g)].map((m) => m[1]))];
  await cleanup();
}

console.log(`\nRemote viewing, one browser viewer each (headless Chromium), 1280x800 Xvnc, ${seconds} s per run; WebRTC in ${videoCodecs.join(', ') || 'no codec'}\n`);
console.log('| scenario | viewer | bytes/s | SSIM | glass-to-glass p50 / p95 (samples) | frames with new data/s | change latency (median) | server CPU (of a core) | payload bytes/s (inflated) |');
console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|');
for (const row of rows) console.log(row);
console.log('\nWebRTC on the wire, from the page\'s getStats: RTP (payload and headers), what else the transport received (RTCP, STUN, DTLS; SRTP\'s tags on RTP too), what it sent (RTCP, STUN), the STUN messages of the connection, and in the same seconds the keyframes decoded, the bytes that came again after a NACK, and the NACKs and PLIs the page sent\n');
console.log('| scenario | RTP bytes/s | other bytes/s received | bytes/s sent | STUN messages/s | keyframes | retransmitted bytes/s | NACKs / PLIs sent |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
for (const row of transportRows) console.log(row);
console.log(`\nFan-out while a window moves: WebSocket viewers that decode nothing, ${seconds} s per run\n`);
console.log('| server | viewers | bytes/s per viewer (median) | a change received whole (median / max) | server CPU | CPU per added viewer |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const row of fanRows) console.log(row);
if (notMeasured.length) {
  console.log('\nNot measured:\n');
  for (const line of notMeasured) console.log(`- ${line}`);
}
