// SPDX-License-Identifier: MIT
// The viewer's WebRTC video (bridge/viewer/video.c over webrtc/stream.c):
// a daemon as it starts by default (video on), a real Xvnc with real X clients, and
// headless Debian Chromium, which decodes the video. What is checked is
// what a person would see: frames decoding, a colour painted on the
// desktop showing at its place, a late viewer getting a picture of a still
// screen, the picture coming back after frames are lost, the page's peer
// connection using the ICE servers start_stream gave (and bad ones
// refused), the page falling back to its WebSocket updates when WebRTC
// fails, and the peer connection closing when the session ends.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startProcess, waitFor } from '../lib/process.mjs';
import { startDaemon } from '../lib/bridge.mjs';
import { httpClient, textOf, imageOf } from '../lib/mcp.mjs';
import { startXvnc } from '../lib/x11.mjs';
import { pointerLocation } from '../lib/x11-apps.mjs';
import { launchChromium, canvasDiff } from '../lib/browser.mjs';

const WIDTH = 640, HEIGHT = 480;
const BACKGROUND = [0x20, 0x40, 0x80];
let xvnc, daemon, client, session, links, browser, skip = null;
const apps = [];

before(async () => {
  xvnc = await startXvnc({ width: WIDTH, height: HEIGHT });
  execFileSync('xsetroot', ['-solid', '#204080'], { env: xvnc.env });
  daemon = await startDaemon({ env: sanitizerEnv() });
  const novideo = /viewers get no video[^:]*: (.*)/.exec(daemon.log);
  if (novideo) {
    skip = `the daemon offers no video here: ${novideo[1]}`;
    return;
  }
  client = await httpClient(daemon);
  session = JSON.parse(textOf(await client.call('create_session', { vnc: xvnc.url }))).session;
  links = JSON.parse(textOf(await client.call('start_stream', { session })));
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  for (const app of apps) await app.stop();
  await client?.call('kill_session', { session }).catch(() => {});
  await client?.close();
  await daemon?.stop();
  await xvnc?.stop();
});

// Under the sanitizers: GLib's quark table, kept on purpose, is not a
// leak of ours (tests/lib/glib-lsan.supp says why).
function sanitizerEnv() {
  if (!process.env.ASAN_OPTIONS) return {};
  const supp = path.join(path.dirname(fileURLToPath(import.meta.url)), '../lib/glib-lsan.supp');
  return {
    ASAN_OPTIONS: `${process.env.ASAN_OPTIONS}:fast_unwind_on_malloc=0`,
    LSAN_OPTIONS: [process.env.LSAN_OPTIONS, `suppressions=${supp}`, 'print_suppressions=0'].filter(Boolean).join(':'),
  };
}

async function openPage(url, setup) {
  const page = await browser.newPage({ viewport: { width: 900, height: 700 } });
  if (setup) await page.addInitScript(setup);
  await page.goto(url);
  return page;
}

// A page showing video: its first frame decoded.
async function openVideo(url = links.url) {
  const page = await openPage(url);
  const shown = await waitFor(() => page.evaluate(() => window.lizardViewer.transport === 'webrtc' &&
    window.lizardViewer.videoFrames > 0), { timeout: 20000 });
  assert.ok(shown, `the page shows video (it says ${JSON.stringify(await page.evaluate(() => window.lizardViewer))})`);
  return page;
}

// The inbound video's counters from the page's own peer connection.
function inbound(page) {
  return page.evaluate(async () => {
    if (!pc) return null;
    for (const r of (await pc.getStats()).values()) {
      if (r.type === 'inbound-rtp' && r.kind === 'video') {
        return { framesDecoded: r.framesDecoded || 0, bytesReceived: r.bytesReceived || 0, codec: window.lizardViewer.codec };
      }
    }
    return { framesDecoded: 0, bytesReceived: 0 };
  });
}

// The decoded video's pixel at (x, y) in desktop pixels, read from a canvas.
function videoPixel(page, x, y) {
  return page.evaluate(([x, y]) => {
    const v = document.getElementById('video');
    const c = new OffscreenCanvas(v.videoWidth, v.videoHeight).getContext('2d');
    c.drawImage(v, 0, 0);
    return [...c.getImageData(x, y, 1, 1).data.slice(0, 3)];
  }, [x, y]);
}

// How long a still screen is watched for bytes it should not cost: longer
// than Chromium's 3 s without a frame before it sends a PLI.
const STILL_WATCH_MS = 4500;

const near = (a, b, tolerance = 24) => a.every((v, i) => Math.abs(v - b[i]) <= tolerance);

async function showsColour(page, x, y, colour) {
  return waitFor(async () => near(await videoPixel(page, x, y), colour), { timeout: 15000 });
}

test('video frames decode and a colour painted on the desktop shows at its place', async (t) => {
  if (skip) return t.skip(skip);
  const page = await openVideo();
  assert.ok(await showsColour(page, 20, 20, BACKGROUND), `the background shows: ${await videoPixel(page, 20, 20)}`);
  const before = await inbound(page);
  // A red xterm at (300, 200); without a window manager it lands exactly there.
  apps.push(startProcess('xterm', ['-bg', '#e01010', '-fg', '#e01010', '-geometry', '20x8+300+200'], { env: xvnc.env }));
  assert.ok(await showsColour(page, 340, 240, [0xe0, 0x10, 0x10]),
    `the marker shows at its place: ${await videoPixel(page, 340, 240)}`);
  assert.ok(near(await videoPixel(page, 200, 100), BACKGROUND), 'and the background around it stays');
  const after = await inbound(page);
  assert.ok(after.framesDecoded > before.framesDecoded, `framesDecoded rose: ${before.framesDecoded} -> ${after.framesDecoded}`);
  // The browser agreed to show each frame at once (no jitter buffer delay).
  assert.match(await page.evaluate(() => pc.localDescription.sdp),
    /a=extmap:\d+ http:\/\/www\.webrtc\.org\/experiments\/rtp-hdrext\/playout-delay/, 'the answer takes the playout-delay extension');
  await page.close();
});

test('H.264 (constrained baseline) is negotiated when the page asks for it first, and VP8 when it asks for that', async (t) => {
  if (skip) return t.skip(skip);
  const page = await openPage('about:blank');
  const decodes = await page.evaluate(() => RTCRtpReceiver.getCapabilities('video').codecs.some((c) => /h264/i.test(c.mimeType)));
  await page.close();
  if (!decodes) return t.skip('this Chromium does not decode H.264 over WebRTC');
  const video = await openVideo(`${links.url}&codec=H264`);
  assert.equal(await video.evaluate(() => window.lizardViewer.codec), 'H264');
  assert.match(await video.evaluate(() => pc.remoteDescription.sdp), /packetization-mode=1/);
  assert.ok(await showsColour(video, 340, 240, [0xe0, 0x10, 0x10]), `the marker shows: ${await videoPixel(video, 340, 240)}`);
  assert.equal(await video.textContent('#transport'), 'WebRTC H264', 'the page says which mode it is in');
  // One change, then nothing: the video shows it, though no frame follows.
  // Chromium showed each frame of x264's stream only once the next came,
  // so this single change stayed unseen; OpenH264's it shows at once.
  execFileSync('xsetroot', ['-solid', '#10e010'], { env: xvnc.env });
  try {
    assert.ok(await showsColour(video, 20, 20, [0x10, 0xe0, 0x10]), `a single change shows: ${await videoPixel(video, 20, 20)}`);
  } finally {
    execFileSync('xsetroot', ['-solid', '#204080'], { env: xvnc.env });
  }
  await video.close();
  // And VP8 when the page asks for it first.
  const vp8 = await openVideo(`${links.url}&codec=VP8`);
  assert.equal(await vp8.evaluate(() => window.lizardViewer.codec), 'VP8');
  assert.ok(await showsColour(vp8, 340, 240, [0xe0, 0x10, 0x10]), `the marker shows in VP8: ${await videoPixel(vp8, 340, 240)}`);
  assert.equal(await vp8.textContent('#transport'), 'WebRTC VP8');
  await vp8.close();
});

test('a viewer that joins a still screen gets a picture, and a still screen sends no video', async (t) => {
  if (skip) return t.skip(skip);
  await client.call('wait', { session, quiet_ms: 500 });
  const page = await openVideo(links.view_only_url);
  assert.ok(await showsColour(page, 340, 240, [0xe0, 0x10, 0x10]), 'the late viewer sees the marker');
  assert.ok(await showsColour(page, 20, 20, BACKGROUND), 'and the background');
  // Nothing changes on the desktop: after what the join sent, no bytes.
  const settled = await waitFor(async () => {
    const a = await inbound(page);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const b = await inbound(page);
    return a.bytesReceived === b.bytesReceived ? b : null;
  }, { timeout: 15000, interval: 0 });
  assert.ok(settled, 'the video stops costing bytes while the screen is still');
  await page.close();
});

test('after motion stops the page shows the screen exactly, and then sends nothing', async (t) => {
  if (skip) return t.skip(skip);
  const page = await openVideo();
  const framesBefore = (await inbound(page)).framesDecoded;
  // Motion: a terminal of text appears and scrolls.
  apps.push(startProcess('xterm', ['-geometry', '40x10+30+260', '-e', 'sh', '-c', 'seq 1 60; sleep 600'], { env: xvnc.env }));
  assert.ok(await waitFor(async () => (await inbound(page)).framesDecoded > framesBefore), 'the motion came as video');
  await client.call('wait', { session, quiet_ms: 300, timeout_ms: 10000 });
  const shot = imageOf(await client.call('screenshot', { session })).data;
  const exact = await waitFor(async () => await page.evaluate(() => window.lizardViewer.showing) === 'canvas' &&
    await canvasDiff(page, shot) === 0, { timeout: 10000 });
  assert.ok(exact, `the page shows the screen exactly (showing ${await page.evaluate(() => window.lizardViewer.showing)}, ${await canvasDiff(page, shot)} pixels differ)`);
  // From the exact picture on, nothing: no media and no updates, watched
  // for longer than Chromium waits before it asks for a keyframe when no
  // frame comes (3 s), which a stream that answers every PLI with the
  // picture again would answer with one.
  const watch = async () => ({ ...(await inbound(page)), updates: await page.evaluate(() => window.lizardViewer.bytes) });
  const first = await watch();
  await new Promise((resolve) => setTimeout(resolve, STILL_WATCH_MS));
  const last = await watch();
  assert.equal(last.bytesReceived, first.bytesReceived, `no video bytes on the still screen over ${STILL_WATCH_MS} ms`);
  assert.equal(last.updates, first.updates, 'and no update bytes');
  await page.close();
});

// Where the page shows desktop pixel (x, y), for the mouse: on the video,
// or on the canvas when the still screen is shown exactly.
async function onVideo(page, x, y) {
  const shown = await page.evaluate(() => window.lizardViewer.showing);
  const box = await page.locator(shown === 'canvas' ? '#screen' : '#video').boundingBox();
  const size = await page.evaluate(() => [canvas.width, canvas.height]);
  return [box.x + (x + 0.5) * box.width / size[0], box.y + (y + 0.5) * box.height / size[1]];
}

test('a control link clicks through the data channel and moves the desktop pointer; a view-only link cannot', async (t) => {
  if (skip) return t.skip(skip);
  const page = await openVideo();
  assert.ok(await waitFor(() => page.evaluate(() => window.lizardViewer.inputChannel === 'open')), 'the input channel opens');
  const sent = await page.evaluate(() => window.lizardViewer.channelSent);
  await page.mouse.click(...await onVideo(page, 123, 321));
  assert.ok(await waitFor(() => { const p = pointerLocation(xvnc.env); return p.x === 123 && p.y === 321; }),
    `the desktop pointer moved to (123, 321): ${JSON.stringify(pointerLocation(xvnc.env))}`);
  assert.ok(await page.evaluate((n) => window.lizardViewer.channelSent >= n + 2, sent), 'the click went over the data channel');

  const watcher = await openVideo(links.view_only_url);
  assert.equal(await watcher.evaluate(() => window.lizardViewer.inputChannel), null, 'a view-only link gets no input channel');
  await watcher.mouse.click(...await onVideo(watcher, 40, 50));
  await watcher.evaluate(() => socket.send(JSON.stringify({ type: 'pointer', x: 40, y: 50, buttons: 1 })));
  // The control page's own move, after the watcher's: once it is there, the
  // watcher's (sent before) would have been too.
  await page.mouse.move(...await onVideo(page, 200, 210));
  assert.ok(await waitFor(() => { const p = pointerLocation(xvnc.env); return p.x === 200 && p.y === 210; }));
  await watcher.close();
  await page.close();
});

test('with WebRTC failing in the page, it falls back to the WebSocket viewer', async (t) => {
  if (skip) return t.skip(skip);
  const page = await openPage(links.url, () => {
    window.RTCPeerConnection = function broken() { throw new Error('WebRTC disabled by the test'); };
  });
  assert.ok(await waitFor(() => page.evaluate(() => window.lizardViewer.frames > 0)), 'WebSocket updates are painted');
  const state = await page.evaluate(() => window.lizardViewer);
  assert.equal(state.transport, 'websocket');
  assert.match(state.videoError, /WebRTC disabled by the test/);
  assert.equal(await page.textContent('#transport'), 'WebSocket', 'the page says which mode it is in');
  const pixel = await page.evaluate(() => [...document.getElementById('screen').getContext('2d').getImageData(340, 240, 1, 1).data.slice(0, 3)]);
  assert.ok(near(pixel, [0xe0, 0x10, 0x10], 0), `the canvas shows the marker exactly: ${pixel}`);
  await page.close();
});

test('a connection that never comes up falls back to updates', async (t) => {
  if (skip) return t.skip(skip);
  // The page's answer is kept back: no connection can be made.
  const page = await openPage(links.url, () => {
    const real = WebSocket.prototype.send;
    WebSocket.prototype.send = function (data) {
      if (typeof data === 'string' && data.includes('"webrtc-answer"')) return;
      return real.call(this, data);
    };
  });
  assert.ok(await waitFor(() => page.evaluate(() => window.lizardViewer.videoError !== null), { timeout: 20000 }));
  assert.ok(await waitFor(() => page.evaluate(() => window.lizardViewer.frames > 0)), 'then WebSocket updates are painted');
  assert.equal(await page.evaluate(() => window.lizardViewer.transport), 'websocket');
  await page.close();
});

test('bad video messages get an error and the viewer goes on', async (t) => {
  if (skip) return t.skip(skip);
  const page = await openPage(links.url + '&video=off');
  assert.ok(await waitFor(() => page.evaluate(() => window.lizardViewer.frames > 0)));
  const replies = await page.evaluate(async () => {
    const got = [];
    const listen = (e) => typeof e.data === 'string' && e.data.includes('webrtc-failed') && got.push(JSON.parse(e.data).message);
    socket.addEventListener('message', listen);
    send({ type: 'webrtc-answer', sdp: 'v=0' });
    send({ type: 'webrtc-start', codecs: ['THEORA'] });
    send({ type: 'webrtc-start', codecs: 'VP8' });
    send({ type: 'webrtc-nonsense' });
    for (let i = 0; i < 100 && got.length < 4; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    return got;
  });
  assert.equal(replies.length, 4, JSON.stringify(replies));
  assert.match(replies[0], /before webrtc-start/);
  assert.match(replies[1], /none of the page's codecs/);
  const frames = await page.evaluate(() => window.lizardViewer.frames);
  apps.push(startProcess('xterm', ['-bg', '#10e010', '-geometry', '10x4+20+300'], { env: xvnc.env }));
  assert.ok(await waitFor(() => page.evaluate((n) => window.lizardViewer.frames > n, frames)), 'updates still come');
  await page.close();
});

// Frames lost on the way: the page drops some of the video's encoded
// frames before its decoder sees them (an encoded transform, the one place
// a page can lose them), so what follows cannot be decoded. The browser
// then asks for a keyframe (a PLI) and the picture must come back: a
// keyframe arrives and frames decode again, while the screen keeps moving.
test('after frames are lost the page asks for a keyframe and the video recovers', async (t) => {
  if (skip) return t.skip(skip);
  const page = await openPage(links.view_only_url, () => {
    const Real = window.RTCPeerConnection;
    if (typeof Real?.prototype?.getReceivers !== 'function' || typeof RTCRtpReceiver.prototype.createEncodedStreams !== 'function') {
      window.lossTest = 'this Chromium has no encoded streams (createEncodedStreams)';
      return;
    }
    window.lossTest = { drop: 0, dropped: 0 };
    window.RTCPeerConnection = function lossy(config) {
      const pc = new Real({ ...config, encodedInsertableStreams: true });
      pc.addEventListener('track', (e) => {
        const { readable, writable } = e.receiver.createEncodedStreams();
        readable.pipeThrough(new TransformStream({
          transform(frame, out) {
            if (window.lossTest.drop > 0 && frame.type === 'delta') {
              window.lossTest.drop--;
              window.lossTest.dropped++;
              return;
            }
            out.enqueue(frame);
          },
        })).pipeTo(writable);
      });
      return pc;
    };
  });
  const lossTest = await page.evaluate(() => window.lossTest);
  if (typeof lossTest === 'string') {
    await page.close();
    return t.skip(lossTest);
  }
  const shown = await waitFor(() => page.evaluate(() => window.lizardViewer.transport === 'webrtc'), { timeout: 20000 });
  assert.ok(shown, `the page shows video (it says ${JSON.stringify(await page.evaluate(() => window.lizardViewer))})`);
  // A screen that keeps changing: the root window's colour, back and forth.
  const mover = startProcess('sh', ['-c', 'while :; do xsetroot -solid "#204080"; sleep 0.1; xsetroot -solid "#284880"; sleep 0.1; done'], { env: xvnc.env });
  try {
    const counters = () => page.evaluate(async () => {
      for (const r of (await pc.getStats()).values()) {
        if (r.type === 'inbound-rtp' && r.kind === 'video') {
          return { framesDecoded: r.framesDecoded || 0, keyFramesDecoded: r.keyFramesDecoded || 0, pliCount: r.pliCount || 0, firCount: r.firCount || 0 };
        }
      }
      return null;
    });
    assert.ok(await waitFor(async () => (await counters())?.framesDecoded > 0), 'frames decode before the loss');
    const before = await counters();
    await page.evaluate(() => { window.lossTest.drop = 3; });
    assert.ok(await waitFor(() => page.evaluate(() => window.lossTest.dropped === 3), { timeout: 10000 }), 'three frames were lost');
    const lost = await counters();
    const recovered = await waitFor(async () => {
      const now = await counters();
      return now.pliCount + now.firCount > before.pliCount + before.firCount && now.keyFramesDecoded > before.keyFramesDecoded &&
        now.framesDecoded > lost.framesDecoded + 10 ? now : null;
    }, { timeout: 20000, interval: 250 });
    assert.ok(recovered, `the page asked for a keyframe, got one and decodes again: before ${JSON.stringify(before)}, after the loss ${JSON.stringify(lost)}, now ${JSON.stringify(await counters())}`);
  } finally {
    await mover.stop();
    execFileSync('xsetroot', ['-solid', '#204080'], { env: xvnc.env });
    await page.close();
  }
});

test('the page\'s peer connection uses the ICE servers start_stream gave, and the links and log never show them', async (t) => {
  if (skip) return t.skip(skip);
  const iceServers = [
    { urls: 'stun:stun.example.org:3478' },
    { urls: ['turn:turn.example.org:3478?transport=udp', 'turns:turn.example.org:5349'], username: 'viewer', credential: 'turn-secret-5c1e' },
  ];
  const withIce = JSON.parse(textOf(await client.call('start_stream', { session, ice_servers: iceServers })));
  links = withIce; // the old ones are revoked
  const page = await openPage(withIce.view_only_url);
  const used = await waitFor(() => page.evaluate(() => pc && pc.getConfiguration().iceServers), { timeout: 20000 });
  // (The browser gives a server without them an empty username and credential.)
  assert.deepEqual(used?.map(({ urls, username, credential }) => ({ urls, username, credential })), [
    { urls: ['stun:stun.example.org:3478'], username: '', credential: '' },
    { urls: iceServers[1].urls, username: 'viewer', credential: 'turn-secret-5c1e' },
  ], `the page's RTCPeerConnection has them: ${JSON.stringify(used)}`);
  assert.ok(!JSON.stringify(withIce).includes('turn-secret'), 'no link carries the credential');
  assert.ok(await waitFor(() => /video started \((H264|VP8), with 3 STUN and TURN URLs\)/.test(daemon.log)),
    'the daemon\'s own peer has them too (webrtcbin\'s STUN server and TURN servers)');
  assert.ok(!daemon.log.includes('turn-secret'), 'the daemon\'s log does not show the credential');
  await page.close();
  // Links without them again for the tests after this one.
  links = JSON.parse(textOf(await client.call('start_stream', { session })));
  const plain = await openPage(links.view_only_url);
  assert.deepEqual(await waitFor(() => plain.evaluate(() => pc && pc.getConfiguration().iceServers), { timeout: 20000 }), [],
    'a new start_stream without them replaces them');
  await plain.close();
});

test('bad ice_servers are refused with a message that names the field', async (t) => {
  if (skip) return t.skip(skip);
  const refused = async (iceServers, pattern) => {
    const result = await client.call('start_stream', { session, ice_servers: iceServers });
    assert.equal(result.isError, true, `refused: ${JSON.stringify(iceServers)}`);
    assert.match(textOf(result), pattern);
    assert.ok(!textOf(result).includes('hunter2'), 'the message does not quote a credential');
  };
  await refused([{ urls: 'http://stun.example.org' }], /ice_servers\[0\]\.urls must start with stun:, turn: or turns:/);
  await refused([{ urls: 'stun:a.example.org' }, { urls: ['stun:b.example.org', 'ftp://c'] }], /ice_servers\[1\]\.urls\[1\] must start with/);
  await refused([{ urls: 'turn:turn.example.org', username: 'u' }], /ice_servers\[0\] has a turn: or turns: URL, which needs both username and credential/);
  await refused([{ urls: 'stun:x.example.org', credential: 'hunter2', password: 'hunter2' }], /ice_servers\[0\] has a field 'password' it does not take/);
  await refused([{ urls: `stun:${'x'.repeat(300)}` }], /ice_servers\[0\]\.urls is 305 bytes; at most 256/);
  await refused([{ urls: [] }], /ice_servers\[0\]\.urls has 0 URLs; it takes 1 to 4/);
  await refused([{ username: 'u' }], /ice_servers\[0\]\.urls is missing/);
  await refused(Array.from({ length: 9 }, () => ({ urls: 'stun:x.example.org' })), /ice_servers.*at most 8/);
  await refused('stun:x.example.org', /ice_servers.*must be an array/);
  // The links from before still work: a refused call changes nothing.
  const page = await openPage(links.view_only_url + '&video=off');
  assert.ok(await waitFor(() => page.evaluate(() => window.lizardViewer.frames > 0)), 'the old links still show the desktop');
  await page.close();
});

test('revoking the links closes the peer connection', async (t) => {
  if (skip) return t.skip(skip);
  const page = await openVideo();
  links = JSON.parse(textOf(await client.call('start_stream', { session }))); // new links; the old are revoked
  assert.ok(await waitFor(() => page.evaluate(() => /revoked/.test(window.lizardViewer.error ?? '') &&
    window.lizardViewer.closedPeer?.connectionState === 'closed' && pc === null)), 'the page closed its peer connection');
  await page.close();
});

// Last: it ends the session the others use.
test('ending the session closes the peer connection', async (t) => {
  if (skip) return t.skip(skip);
  const page = await openVideo();
  await client.call('kill_session', { session });
  assert.ok(await waitFor(() => page.evaluate(() => window.lizardViewer.state === 'ended' &&
    window.lizardViewer.closedPeer?.connectionState === 'closed' && pc === null)), 'the page closed its peer connection');
  await page.close();
});
