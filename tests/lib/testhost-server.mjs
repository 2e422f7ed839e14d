// SPDX-License-Identifier: MIT
// The servers a test host runs (testhost.mjs starts this file inside its
// network namespace): `node testhost-server.mjs KIND ADDRESS`, with KIND's
// settings as JSON on stdin. It listens on ADDRESS, then prints one JSON
// line {"listening": PORT} and afterwards one line per event the test may
// want to see ({"report": ...}, {"asked": ...}). It ends on SIGTERM or
// when its parent goes (testhost.mjs starts it with a parent-death signal).
//
//   page    {pages: {"/path": "<html>"}}: GET serves a page, POST /report
//           takes a JSON report and prints it
//   hello   {}: every TCP connection gets "hello\n", then the end
//   bulk    {bytes}: every TCP connection gets that many bytes, then the end
//   dns     {answers: {name: "a.b.c.d"}}: UDP port 53, A records for those
//           names, NXDOMAIN for the rest; prints each name asked
import dgram from 'node:dgram';
import http from 'node:http';
import net from 'node:net';

const [kind, address] = process.argv.slice(2);
const say = (event) => process.stdout.write(`${JSON.stringify(event)}\n`);

async function readSettings() {
  let text = '';
  for await (const chunk of process.stdin) text += chunk;
  return text ? JSON.parse(text) : {};
}

function pageServer({ pages = {} }) {
  return http.createServer((req, res) => {
    if (req.method === 'POST' && req.url === '/report') {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        try {
          say({ report: JSON.parse(body) });
        } catch {
          say({ report: null, unparsable: body.slice(0, 200) });
        }
        res.end('ok');
      });
      return;
    }
    const page = pages[req.url.split('?')[0]];
    if (page === undefined) {
      res.statusCode = 404;
      res.end('not found');
      return;
    }
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end(page);
  });
}

function helloServer() {
  return net.createServer((c) => {
    c.on('error', () => {});
    c.end('hello\n');
  });
}

function bulkServer({ bytes }) {
  const chunk = Buffer.alloc(1 << 20, 120);
  return net.createServer((c) => {
    c.on('error', () => {});
    let sent = 0;
    const more = () => {
      while (sent < bytes) {
        const piece = chunk.subarray(0, Math.min(chunk.length, bytes - sent));
        sent += piece.length;
        if (!c.write(piece)) return c.once('drain', more);
      }
      c.end();
    };
    more();
  });
}

// One A record or NXDOMAIN per query, for the one question it carries.
function dnsServer({ answers = {} }) {
  const socket = dgram.createSocket('udp4');
  socket.on('message', (query, peer) => {
    let i = 12;
    const labels = [];
    while (i < query.length && query[i] !== 0) {
      labels.push(query.subarray(i + 1, i + 1 + query[i]).toString());
      i += query[i] + 1;
    }
    if (i + 5 > query.length) return;
    const name = labels.join('.').toLowerCase();
    const type = query.readUInt16BE(i + 1);
    say({ asked: name });
    const found = answers[name];
    const answer = found && type === 1
      ? Buffer.from([0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, ...found.split('.').map(Number)])
      : Buffer.alloc(0);
    const header = Buffer.from(query.subarray(0, 12));
    header.writeUInt16BE(0x8180 | (found ? 0 : 3), 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answer.length ? 1 : 0, 6);
    header.writeUInt32BE(0, 8);
    socket.send(Buffer.concat([header, query.subarray(12, i + 5), answer]), peer.port, peer.address);
  });
  return socket;
}

const settings = await readSettings();
process.on('SIGTERM', () => process.exit(0));
if (kind === 'dns') {
  const socket = dnsServer(settings);
  socket.once('error', (e) => {
    process.stderr.write(`dns server on ${address}:53: ${e.message}\n`);
    process.exit(1);
  });
  socket.bind(53, address, () => say({ listening: 53 }));
} else {
  const make = { page: pageServer, hello: helloServer, bulk: bulkServer }[kind];
  if (!make) {
    process.stderr.write(`unknown server kind '${kind}': page, hello, bulk or dns\n`);
    process.exit(2);
  }
  const server = make(settings);
  server.once('error', (e) => {
    process.stderr.write(`${kind} server on ${address}: ${e.message}\n`);
    process.exit(1);
  });
  server.listen(0, address, () => say({ listening: server.address().port }));
}
