// SPDX-License-Identifier: MIT
// Exposed ports against what people use today to reach a service in a
// rootless network namespace: slirp4netns's own port forwarding
// (add_hostfwd on its API socket). The same echo server (tests/integration/
// ports/echo_server.py) in the same session answers both: a 100 MB
// download (MB/s) and 1000 GETs on one kept-alive connection (p50/p95).
// Rounds alternate, so both see the same machine load.
//
// Usage: node bench/ports.mjs [rounds]   (scripts/bench.sh runs it)
// LIZARD_BENCH_SLIRP_API_DIR is an internal switch for this comparison
// only: the daemon's slirp4netns opens its API socket there.
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startDaemon } from '../tests/lib/bridge.mjs';
import { httpClient, textOf } from '../tests/lib/mcp.mjs';
import { waitFor } from '../tests/lib/process.mjs';
import { expose, installSite, serveInside, waitForService } from '../tests/lib/ports.mjs';
import { median, percentile } from './lib.mjs';

const rounds = Number(process.argv[2] || 3);
const ECHO = 8001;
const SIZE = 100 * 1024 * 1024;
const GETS = 1000;

const apiDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lizard-ports-bench-'));
// slirp4netns runs as the sandbox's user, which a root daemon's is not.
fs.chmodSync(apiDir, 0o777);
const daemon = await startDaemon({ env: { LIZARD_BENCH_SLIRP_API_DIR: apiDir } });
const client = await httpClient(daemon);

// One request to slirp4netns's API socket.
function slirpApi(socketPath, request) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath, () => socket.end(JSON.stringify(request)));
    let text = '';
    socket.on('data', (d) => (text += d));
    socket.on('end', () => resolve(JSON.parse(text)));
    socket.on('error', reject);
  });
}

async function freePort() {
  const probe = net.createServer();
  await new Promise((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

// Where a request goes and what it carries, for each way in.
function target(way, agent) {
  return { host: '127.0.0.1', port: way.port, agent, headers: way.headers };
}

function download(way) {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    http.get({ ...target(way, false), path: `/download?n=${SIZE}` }, (res) => {
      let n = 0;
      res.on('data', (d) => (n += d.length));
      res.on('end', () => {
        if (n !== SIZE) return reject(new Error(`${way.name}: ${n} of ${SIZE} bytes`));
        resolve(SIZE / 1e6 / (Number(process.hrtime.bigint() - start) / 1e9));
      });
    }).on('error', reject);
  });
}

async function keptAliveGets(way) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const times = [];
  try {
    for (let i = 0; i < GETS; i++) {
      const start = process.hrtime.bigint();
      await new Promise((resolve, reject) => {
        http.get({ ...target(way, agent), path: '/headers' }, (res) => {
          res.resume();
          res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`${way.name}: ${res.statusCode}`))));
        }).on('error', reject);
      });
      times.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
  } finally {
    agent.destroy();
  }
  return times;
}

try {
  const session = JSON.parse(textOf(await client.call('create_session', { template: 'base', timeout_ms: 600000 }))).session;
  await installSite(client, session);
  // On every address: the proxy dials 127.0.0.1, slirp4netns forwards to
  // the sandbox's 10.0.2.100.
  serveInside(client, session, `exec python3 /tmp/site/echo_server.py ${ECHO} 0.0.0.0`);
  const exposed = await expose(client, session, ECHO);
  await waitForService(daemon, exposed.host, exposed.token, '/headers');
  const socketPath = await waitFor(() => fs.readdirSync(apiDir).map((f) => path.join(apiDir, f))[0], { timeout: 10000 });
  const hostPort = await freePort();
  const forwarded = await slirpApi(socketPath, { execute: 'add_hostfwd', arguments: { proto: 'tcp', host_addr: '127.0.0.1', host_port: hostPort, guest_port: ECHO } });
  if (forwarded.error) throw new Error(`add_hostfwd: ${JSON.stringify(forwarded.error)}`);

  const ways = [
    { name: 'lizard-bridge expose_port', port: Number(daemon.listen.split(':')[1]), headers: { Host: exposed.host, 'X-Lizard-Access-Token': exposed.token } },
    { name: 'slirp4netns add_hostfwd', port: hostPort, headers: {} },
  ];
  const speed = new Map(ways.map((w) => [w.name, []]));
  const latency = new Map(ways.map((w) => [w.name, []]));
  for (const way of ways) await keptAliveGets(way); // warm up both
  for (let r = 0; r < rounds; r++) {
    for (const way of ways) {
      speed.get(way.name).push(await download(way));
      latency.get(way.name).push(...(await keptAliveGets(way)));
    }
  }
  const [ours, theirs] = ways.map((w) => w.name);
  console.log(`\nA service in a sandbox, reached from the host (${rounds} rounds; medians)\n`);
  console.log('| way in | 100 MB download | 1000 kept-alive GETs p50 | p95 |');
  console.log('|---|---:|---:|---:|');
  for (const way of ways) {
    console.log(`| ${way.name} | ${median(speed.get(way.name)).toFixed(0)} MB/s | ${median(latency.get(way.name)).toFixed(3)} ms | ${percentile(latency.get(way.name), 95).toFixed(3)} ms |`);
  }
  console.log(`| ratio (expose_port / add_hostfwd) | ${(median(speed.get(ours)) / median(speed.get(theirs))).toFixed(2)}x | ${(median(latency.get(ours)) / median(latency.get(theirs))).toFixed(2)}x | ${(percentile(latency.get(ours), 95) / percentile(latency.get(theirs), 95)).toFixed(2)}x |`);
  await client.call('kill_session', { session });
} finally {
  await client.close();
  await daemon.stop();
  fs.rmSync(apiDir, { recursive: true, force: true });
}
