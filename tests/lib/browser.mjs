// SPDX-License-Identifier: MIT
// Debian's Chromium, headless under playwright-core, and what the browser
// viewer tests start from: a daemon with one local desktop, its viewer
// links and a browser.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { startDaemon } from './bridge.mjs';
import { httpClient, textOf } from './mcp.mjs';
import { sandboxOf } from './sandbox.mjs';

// Headless Debian Chromium under playwright-core, as the probe set it up.
// options go to chromium.launch (a script that ends its own children on a
// signal turns playwright's signal handlers off with handleSIGINT: false).
export async function launchChromium(options = {}) {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
    ...options,
  });
}

// A daemon with one local desktop, its viewer links, a headless Chromium
// and a scratch directory: what the browser viewer tests start from.
// work is a scratch directory inside the sandbox (in its HOME); host(p)
// is where a path under it is on the host, for the test to read.
// daemonOptions go to startDaemon (video is offered unless args has
// '--no-webrtc', which the WebSocket viewer's own tests give).
export async function viewerFixture(prefix, size = '800x600', daemonOptions = {}) {
  const f = { work: `/home/user/${prefix}${randomBytes(4).toString('hex')}` };
  f.daemon = await startDaemon(daemonOptions);
  f.client = await httpClient(f.daemon);
  f.session = JSON.parse(textOf(await f.client.call('create_session', { template: 'desktop', size }))).session;
  await f.client.call('exec', { session: f.session, command: `mkdir -p ${f.work}` });
  const box = await sandboxOf(f.client, f.session);
  f.host = (p) => path.join(box.dir, 'home', path.relative('/home/user', p));
  f.links = JSON.parse(textOf(await f.client.call('start_stream', { session: f.session })));
  f.browser = await launchChromium();
  f.stop = async () => {
    await f.browser?.close();
    await f.client?.call('kill_session', { session: f.session }).catch(() => {});
    await f.client?.close();
    await f.daemon?.stop();
  };
  return f;
}

// Differing pixels between the page's canvas and a PNG (base64), counted
// in the page so that a whole screen need not cross the wire.
export function canvasDiff(page, png) {
  return page.evaluate(async (b64) => {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const image = await createImageBitmap(new Blob([bytes], { type: 'image/png' }));
    const canvas = document.getElementById('screen');
    if (canvas.width !== image.width || canvas.height !== image.height) return -1;
    const scratch = new OffscreenCanvas(image.width, image.height).getContext('2d');
    scratch.drawImage(image, 0, 0);
    const want = scratch.getImageData(0, 0, image.width, image.height).data;
    const have = canvas.getContext('2d').getImageData(0, 0, image.width, image.height).data;
    let differing = 0;
    for (let i = 0; i < want.length; i += 4) {
      if (want[i] !== have[i] || want[i + 1] !== have[i + 1] || want[i + 2] !== have[i + 2]) differing++;
    }
    return differing;
  }, png);
}
