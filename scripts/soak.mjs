// SPDX-License-Identifier: MIT
// Soak: create/kill cycles of local sessions on `lizard-bridge serve`, each
// with a viewer connected and calls in flight when the session is killed;
// then the daemon's descriptors, threads and child processes must be back
// where they started and its RSS must have grown by less than 5 MB.
// Only MCP tools and the viewer protocol are used, so it keeps working
// whatever the sessions run in.
//
//   node scripts/soak.mjs [cycles=200] [desktop-every=10]
import fs from 'node:fs';
import { waitFor } from '../tests/lib/process.mjs';
import { startDaemon } from '../tests/lib/bridge.mjs';
import { httpClient } from '../tests/lib/mcp.mjs';
import { WebSocket } from '../tests/lib/websocket.mjs';

const cycles = Number(process.argv[2] || 200);
const desktopEvery = Number(process.argv[3] || 10);
const RSS_LIMIT_KIB = 5 * 1024;
const WARMUP_CYCLES = 20;

function descendants(root) {
  const parents = new Map();
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      parents.set(Number(pid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {}
  }
  const found = [];
  const walk = (pid) => {
    for (const [child, parent] of parents) {
      if (parent === pid) {
        found.push(child);
        walk(child);
      }
    }
  };
  walk(root);
  return found;
}

function measure(daemon) {
  const pid = daemon.child.pid;
  return {
    fds: daemon.fdCount(),
    threads: fs.readdirSync(`/proc/${pid}/task`).length,
    processes: descendants(pid).length,
    rssKiB: daemon.rssKiB(),
  };
}

const json = (result) => JSON.parse(result.content.find((c) => c.type === 'text').text);

// A viewer as the page is one: /viewer, subprotocol lizard-viewer, then
// {session, token}; resolves once the hub said hello.
function openViewer(daemon, link) {
  const { pathname, hash } = new URL(link);
  const session = pathname.split('/').pop();
  const token = new URLSearchParams(hash.slice(1)).get('token');
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${daemon.url.replace('http://', 'ws://')}/viewer`, 'lizard-viewer');
    const timer = setTimeout(() => reject(new Error('viewer got no hello in 10 s')), 10000);
    ws.closed = new Promise((done) => ws.on('close', done));
    ws.on('open', () => ws.send(JSON.stringify({ session, token })));
    ws.on('message', (data, binary) => {
      if (binary) return;
      const message = JSON.parse(data);
      if (message.type === 'hello') {
        clearTimeout(timer);
        resolve(ws);
      } else if (message.type === 'error') {
        clearTimeout(timer);
        reject(new Error(`viewer refused: ${message.message}`));
      }
    });
    ws.on('error', reject);
  });
}

async function cycle(daemon, client, i) {
  const template = desktopEvery > 0 && i % desktopEvery === 0 ? 'desktop' : 'bare';
  const s = json(await client.call('create_session', { template, size: '320x240' }));
  const links = json(await client.call('start_stream', { session: s.session }));
  const viewer = await openViewer(daemon, links.url);
  // In flight when the session goes: they must end, one way or the other.
  const inFlight = [
    client.call('wait', { session: s.session, ms: 3000 }),
    client.call('screenshot', { session: s.session }),
    client.call('type', { session: s.session, text: 'soak soak soak' }),
  ];
  const killed = await client.call('kill_session', { session: s.session });
  if (killed.isError) throw new Error(`kill_session: ${json(killed)}`);
  await Promise.allSettled(inFlight);
  viewer.close();
  await viewer.closed;
}

const daemon = await startDaemon();
const client = await httpClient(daemon, 'soak');
let failed = false;
try {
  // Warm-up, as many cycles as the daemon's worker threads need to have
  // each made its malloc arena (glibc): after it, RSS stays flat.
  for (let i = 0; i < WARMUP_CYCLES; i++) await cycle(daemon, client, i);
  const before = measure(daemon);
  const started = Date.now();
  for (let i = 0; i < cycles; i++) {
    await cycle(daemon, client, i);
    if ((i + 1) % 20 === 0) console.error(`soak: ${i + 1}/${cycles} cycles, ${JSON.stringify(measure(daemon))}`);
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  // Desktops are torn down on workers: give them a bounded while to go.
  await waitFor(() => {
    const now = measure(daemon);
    return now.fds <= before.fds && now.threads <= before.threads && now.processes <= before.processes;
  }, { timeout: 30000, interval: 200 });
  const after = measure(daemon);
  const growth = after.rssKiB - before.rssKiB;
  console.log(`soak: ${cycles} cycles (every ${desktopEvery}th a desktop, the rest bare) in ${seconds} s`);
  console.log(`soak: descriptors ${before.fds} -> ${after.fds}, threads ${before.threads} -> ${after.threads}, ` +
    `child processes ${before.processes} -> ${after.processes}, RSS ${before.rssKiB} -> ${after.rssKiB} KiB (${growth >= 0 ? '+' : ''}${growth} KiB)`);
  if (after.fds > before.fds || after.threads > before.threads || after.processes > before.processes) {
    console.log('soak: FAILED: descriptors, threads or processes did not come back');
    failed = true;
  }
  if (growth >= RSS_LIMIT_KIB) {
    console.log(`soak: FAILED: RSS grew by ${growth} KiB (limit ${RSS_LIMIT_KIB})`);
    failed = true;
  }
} catch (error) {
  console.log(`soak: FAILED: ${error.stack || error}`);
  console.error(daemon.log.slice(-3000));
  failed = true;
} finally {
  await client.close().catch(() => {});
  await daemon.stop();
}
if (!failed) console.log('soak: passed');
process.exit(failed ? 1 : 0);
