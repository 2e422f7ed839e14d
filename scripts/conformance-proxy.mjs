// SPDX-License-Identifier: MIT
// A pass-through proxy for the MCP conformance suite, which speaks to servers
// without credentials: it adds the daemon's API key and forwards everything
// else as sent (Host and Origin included), so the checks the suite probes are
// the daemon's own. Usage: node conformance-proxy.mjs LISTEN_PORT TARGET_URL
// (LIZARD_API_KEY in the environment); prints "listening" when ready.
import http from 'node:http';

const [listenPort, target] = process.argv.slice(2);
const key = process.env.LIZARD_API_KEY;
if (!listenPort || !target || !key) {
  console.error('usage: LIZARD_API_KEY=... node conformance-proxy.mjs PORT http://HOST:PORT');
  process.exit(2);
}
const upstream = new URL(target);

http.createServer((req, res) => {
  const headers = { ...req.headers, authorization: `Bearer ${key}` };
  const forward = http.request({
    host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers,
  }, (reply) => {
    res.writeHead(reply.statusCode, reply.headers);
    reply.pipe(res);
  });
  forward.on('error', (e) => {
    res.writeHead(502, { 'content-type': 'text/plain' });
    res.end(`proxy: ${e.message}\n`);
  });
  req.pipe(forward);
}).listen(Number(listenPort), '127.0.0.1', () => console.log('listening'));
