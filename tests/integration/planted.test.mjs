// SPDX-License-Identifier: MIT
// A program in the sandbox owns its run directory, HOME and /workspace and
// may plant links, FIFOs and sockets there at any time. The daemon, root on
// the host, must never follow them: what it reaches there is what it made
// or what the sandbox's own programs made before anything else ran.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import WebSocket from 'ws';
import { tempDir, startProcess, waitFor } from '../lib/process.mjs';
import { startDaemon } from '../lib/bridge.mjs';
import { httpClient, textOf } from '../lib/mcp.mjs';
import { sandboxOf } from '../lib/sandbox.mjs';

let daemon, client, secretDir, hostServer;
const hostSocket = () => path.join(secretDir, 'host-vnc.sock');

before(async () => {
  assert.equal(process.getuid(), 0, 'this test runs as root, like the suite: the daemon is root');
  // A root-only VNC server on the host: a 0600 socket in a 0700 directory
  // of root's, named so that its ServerInit gives it away.
  secretDir = tempDir('lizard-planted-');
  fs.chmodSync(secretDir, 0o700);
  hostServer = startProcess('Xvnc', [':97', '-rfbport', '-1', '-rfbunixpath', hostSocket(),
    '-rfbunixmode', '0600', '-SecurityTypes', 'None', '-desktop', 'host-secret', '-geometry', '320x200',
    '-nolisten', 'tcp']);
  assert.ok(await waitFor(() => fs.existsSync(hostSocket())), 'the host VNC server is up');
  daemon = await startDaemon();
  client = await httpClient(daemon);
});

after(async () => {
  await client?.close();
  await daemon?.stop();
  hostServer?.kill('SIGKILL');
  fs.rmSync(secretDir, { recursive: true, force: true });
});

async function createSession(screen) {
  const created = await client.call('create_session', { template: 'bare', screen });
  assert.equal(created.isError, false, textOf(created));
  return JSON.parse(textOf(created)).session;
}

async function run(session, command) {
  const r = await client.call('exec', { session, command });
  assert.equal(r.isError, false, textOf(r));
  assert.equal(r.structuredContent.exit_code, 0, JSON.stringify(r.structuredContent));
  return r.structuredContent.stdout;
}

const tokenOf = (url) => /#token=([0-9a-f]{32})/.exec(url)[1];

// Connects to the bridge's noVNC relay with a link's token and reads the
// ServerInit the relay passes on: the size and name of the desktop behind.
function serverInit(session, token) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${daemon.url.replace('http://', 'ws://')}/rfb/${session}`, ['lizard-rfb', token]);
    ws.binaryType = 'nodebuffer';
    let got = Buffer.alloc(0);
    let stage = 'version';
    const timer = setTimeout(() => { ws.terminate(); reject(new Error(`no ServerInit (at ${stage})`)); }, 10000);
    const done = (value) => { clearTimeout(timer); ws.close(); resolve(value); };
    ws.on('error', (e) => { clearTimeout(timer); reject(e); });
    ws.on('close', () => { clearTimeout(timer); resolve({ closed: true, stage }); });
    ws.on('message', (data) => {
      got = Buffer.concat([got, data]);
      for (;;) {
        if (stage === 'version' && got.length >= 12) {
          got = got.subarray(12);
          ws.send(Buffer.from('RFB 003.008\n'));
          stage = 'security';
        } else if (stage === 'security' && got.length >= 1 && got.length >= 1 + got[0]) {
          assert.ok([...got.subarray(1, 1 + got[0])].includes(1), 'the relay offers None');
          got = got.subarray(1 + got[0]);
          ws.send(Buffer.from([1]));
          stage = 'result';
        } else if (stage === 'result' && got.length >= 4) {
          assert.equal(got.readUInt32BE(0), 0);
          got = got.subarray(4);
          ws.send(Buffer.from([1])); // shared
          stage = 'init';
        } else if (stage === 'init' && got.length >= 24 && got.length >= 24 + got.readUInt32BE(20)) {
          return done({ width: got.readUInt16BE(0), height: got.readUInt16BE(2),
            name: got.subarray(24, 24 + got.readUInt32BE(20)).toString('latin1') });
        } else {
          return;
        }
      }
    });
  });
}

// Both links of a session, after the sandbox did `plant` in its run
// directory, reach that session's own Xvnc and nothing else.
async function assertOwnDesktop(session, screen) {
  const links = JSON.parse(textOf(await client.call('start_stream', { session })));
  const [width, height] = screen.split('x').map(Number);
  for (const url of [links.novnc_url, links.novnc_view_only_url]) {
    assert.deepEqual(await serverInit(session, tokenOf(url)), { width, height, name: 'lizard' });
  }
}

test('a link from vnc.sock to a root-only host socket does not reach the host server', async () => {
  const session = await createSession('640x480');
  try {
    // The host path is the sandbox's business only through the test: the
    // sandbox cannot see it, but a link needs no access to be planted.
    await run(session, `cd /run/lizard && mv vnc.sock vnc.real && ln -s ${hostSocket()} vnc.sock && ls -l vnc.sock`);
    await assertOwnDesktop(session, '640x480');
  } finally {
    await client.call('kill_session', { session });
  }
});

test('a link from vnc.sock to another session\'s socket does not show that session', async () => {
  const victim = await createSession('800x600');
  const attacker = await createSession('640x480');
  try {
    const victimRun = path.join((await sandboxOf(client, victim)).dir, 'run');
    assert.ok(fs.statSync(path.join(victimRun, 'vnc.sock')).isSocket(), victimRun);
    await run(attacker, `cd /run/lizard && mv vnc.sock vnc.real && ln -s ${victimRun}/vnc.sock vnc.sock`);
    await assertOwnDesktop(attacker, '640x480');
  } finally {
    await client.call('kill_session', { session: victim });
    await client.call('kill_session', { session: attacker });
  }
});

test('a server the sandbox puts in place of vnc.sock is not what the links reach', async () => {
  const session = await createSession('640x480');
  try {
    // A fake RFB server of the sandbox's own at vnc.sock, with its own
    // name and size: were the relay to dial the path, it would show.
    const fake = `import os, socket, struct
os.rename('/run/lizard/vnc.sock', '/run/lizard/vnc.real')
s = socket.socket(socket.AF_UNIX); s.bind('/run/lizard/vnc.sock'); s.listen(8)
print('listening', flush=True)
while True:
    c, _ = s.accept()
    c.sendall(b'RFB 003.008\\n'); c.recv(12); c.sendall(b'\\x01\\x01'); c.recv(1)
    c.sendall(struct.pack('>I', 0)); c.recv(1)
    c.sendall(struct.pack('>HH', 64, 64) + bytes(16) + struct.pack('>I', 7) + b'planted')
`;
    await client.call('write_file', { session, path: '/tmp/fake-rfb.py', text: fake });
    const launched = await client.call('launch', { session, command: 'python3 /tmp/fake-rfb.py > /tmp/fake.log 2>&1' });
    assert.equal(launched.isError, false, textOf(launched));
    assert.ok(await waitFor(async () => {
      const r = await client.call('read_file', { session, path: '/tmp/fake.log' });
      return !r.isError && r.structuredContent.text.includes('listening');
    }), 'the planted server listens');
    await assertOwnDesktop(session, '640x480');
  } finally {
    await client.call('kill_session', { session });
  }
});

test('links, locked directories and FIFOs the sandbox leaves are removed without touching their targets', async () => {
  const keep = path.join(secretDir, 'keep.txt');
  fs.writeFileSync(keep, 'host file');
  fs.chmodSync(keep, 0o600);
  const session = await createSession('640x480');
  const { dir } = await sandboxOf(client, session);
  await run(session, [
    `ln -s ${secretDir} ~/link-dir`, `ln -s ${keep} /workspace/link-file`, `ln -s ${keep} /run/lizard/link-file`,
    'mkdir -p ~/locked/inner', `ln -s ${secretDir} ~/locked/inner/link`, 'mkfifo ~/locked/fifo', 'chmod 000 ~/locked',
  ].join(' && '));
  await client.call('kill_session', { session });
  assert.ok(await waitFor(() => !fs.existsSync(dir)), `the private directory ${dir} is removed`);
  const st = fs.statSync(keep);
  assert.equal(fs.readFileSync(keep, 'utf8'), 'host file');
  assert.deepEqual([st.uid, st.mode & 0o777], [0, 0o600]);
  assert.equal(fs.statSync(secretDir).mode & 0o777, 0o700);
  assert.ok(fs.existsSync(hostSocket()));
});

for (const size of ['unlimited', '64M']) {
  test(`a link planted in a volume (size ${size}) does not hand its target to the next session`, async () => {
    const keep = path.join(secretDir, 'volume-target.txt');
    fs.writeFileSync(keep, 'host file');
    const name = `planted-${process.pid}-${size}`;
    assert.equal((await client.call('create_volume', { name, size })).isError, false);
    try {
      const first = JSON.parse(textOf(await client.call('create_session', { template: 'bare', volume: name }))).session;
      await run(first, `ln -s ${keep} /workspace/link && ln -s ${secretDir} /workspace/link-dir`);
      await client.call('kill_session', { session: first });
      // The next session gets a uid of its own, and the volume's files with it.
      const second = await client.call('create_session', { template: 'bare', volume: name });
      assert.equal(second.isError, false, textOf(second));
      const session = JSON.parse(textOf(second)).session;
      assert.equal(await run(session, 'readlink /workspace/link'), `${keep}\n`);
      await client.call('kill_session', { session });
      assert.equal(fs.statSync(keep).uid, 0);
      assert.equal(fs.statSync(secretDir).uid, 0);
      // A directory volume is sized by walking it on the host: the links,
      // not their targets (an image is sized by what it holds on the host).
      const listed = JSON.parse(textOf(await client.call('list_volumes', {}))).volumes.find((v) => v.name === name);
      if (size === 'unlimited') assert.ok(listed.bytes < 1 << 20, `the volume's size counts the links, not their targets: ${listed.bytes}`);
    } finally {
      assert.equal((await client.call('delete_volume', { name })).isError, false);
    }
    assert.equal(fs.readFileSync(keep, 'utf8'), 'host file');
  });
}

test('write_file refuses a planted FIFO, device or directory at once, and writes regular files', async (t) => {
  const session = await createSession('640x480');
  try {
    // One FIFO nobody reads, one a program keeps open for reading.
    await run(session, 'mkfifo /tmp/lonely /tmp/read && mkdir /tmp/dir && (sleep 60 < /tmp/read &) ; ln -s /tmp/lonely /tmp/link-to-fifo; echo old > /tmp/regular');
    for (const [file, kind] of [['/tmp/lonely', 'a FIFO'], ['/tmp/read', 'a FIFO'], ['/tmp/link-to-fifo', 'a FIFO'],
      ['/dev/null', 'a character device'], ['/tmp/dir', 'a directory']]) {
      const started = performance.now();
      const r = await client.call('write_file', { session, path: file, text: 'x' });
      const took = performance.now() - started;
      assert.equal(r.isError, true, `${file}: ${textOf(r)}`);
      assert.match(textOf(r), new RegExp(`${file} is ${kind}`));
      assert.ok(took < 1000, `${file} was refused after ${took} ms, not at once`);
      t.diagnostic(`${file}: refused in ${took.toFixed(1)} ms`);
    }
    const written = await client.call('write_file', { session, path: '/tmp/regular', text: 'new' });
    assert.equal(written.isError, false, textOf(written));
    assert.equal(await run(session, 'cat /tmp/regular; ls -l /tmp/regular | cut -c1'), 'new-\n');
    const fresh = await client.call('write_file', { session, path: '/tmp/fresh/file.txt', text: 'made' });
    assert.equal(fresh.isError, false, textOf(fresh));
    assert.equal(await run(session, 'cat /tmp/fresh/file.txt'), 'made');
  } finally {
    await client.call('kill_session', { session });
  }
});
