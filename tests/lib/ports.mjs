// SPDX-License-Identifier: MIT
// Exposed ports as the tests and the bench use them: a session with the
// test servers of tests/integration/ports/ running inside it on its own
// 127.0.0.1, and HTTP requests to <port>-<session>.localhost sent to the
// daemon on loopback with that Host (Node does not resolve *.localhost;
// browsers do).
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { textOf } from './mcp.mjs';
import { sleep } from './process.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const serverDir = path.resolve(here, '../integration/ports');

// Copies the test servers and the page into the session at /tmp/site.
export async function installSite(client, session) {
  for (const name of fs.readdirSync(serverDir)) {
    const text = fs.readFileSync(path.join(serverDir, name), 'utf8');
    const r = await client.call('write_file', { session, path: `/tmp/site/${name}`, text });
    if (r.isError) throw new Error(`write_file ${name}: ${textOf(r)}`);
  }
}

// Starts a program that serves inside the session until the session ends
// (an exec that is not awaited: at most 10 minutes).
export function serveInside(client, session, command) {
  return client.client
    .callTool({ name: 'exec', arguments: { session, command, timeout_ms: 600000 } }, undefined, { timeout: 700000 })
    .catch(() => {});
}

// A base session with the test site installed and each command of
// services ({ port: command }) serving inside it, each port exposed;
// resolves { session, exposed: { port: expose_port's answer } }.
export async function sessionServing(client, services, { network = true, timeoutMs = 600000 } = {}) {
  const made = await client.call('create_session', { template: 'base', network, timeout_ms: timeoutMs });
  if (made.isError) throw new Error(`create_session: ${textOf(made)}`);
  const session = made.structuredContent.session;
  await installSite(client, session);
  const exposed = {};
  for (const [port, command] of Object.entries(services)) {
    serveInside(client, session, command);
    exposed[port] = await expose(client, session, Number(port));
  }
  return { session, exposed };
}

export async function expose(client, session, port) {
  const r = await client.call('expose_port', { session, port });
  if (r.isError) throw new Error(`expose_port: ${textOf(r)}`);
  return r.structuredContent;
}

// One request through the proxy; resolves { status, headers, body (Buffer) }.
// A connection of its own unless agent is given: Node pools connections by
// address, and the proxy holds each connection to one host.
export function portRequest(daemon, { method = 'GET', host, path: target = '/', headers = {}, body, agent = false, timeout = 30000 }) {
  const [address, port] = daemon.listen.split(':');
  return new Promise((resolve, reject) => {
    const req = http.request({ host: address, port: Number(port), method, path: target, agent, headers: { Host: host, ...headers } }, (res) => {
      const parts = [];
      res.on('data', (d) => parts.push(d));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(parts) }));
      res.on('error', reject);
    });
    req.setTimeout(timeout, () => req.destroy(new Error(`no answer within ${timeout} ms`)));
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

// Waits until the service behind host answers (not 502), up to timeout.
export async function waitForService(daemon, host, token, target = '/', timeout = 20000) {
  const deadline = Date.now() + timeout;
  let last;
  while (Date.now() < deadline) {
    last = await portRequest(daemon, { host, path: target, headers: { 'X-Lizard-Access-Token': token } }).catch((e) => ({ status: 0, body: Buffer.from(String(e)) }));
    if (last.status !== 502 && last.status !== 0) return last;
    await sleep(200);
  }
  throw new Error(`the service at ${host} did not answer within ${timeout} ms: ${last?.status} ${last?.body}`);
}
