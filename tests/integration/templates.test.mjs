// SPDX-License-Identifier: MIT
// Templates an operator builds from the host's system, with files and
// commands run as root, start sessions that have them; one in use cannot
// be deleted, and a build that fails leaves nothing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { tempDir } from '../lib/process.mjs';
import { bridgeBin, daemonWithData } from '../lib/bridge.mjs';
import { textOf } from '../lib/mcp.mjs';

let bridge, client, dataDir, call;

before(async () => {
  assert.equal(process.getuid(), 0, 'templates need a writable root, which needs a root daemon, as the suite runs');
  bridge = await daemonWithData('lizard-template-data-', ['--sizes', 'small=1:1G:512:256M']);
  ({ client, dataDir, call } = bridge);
});

after(async () => {
  await bridge?.close();
});

const exec = async (session, command) => (await call('exec', { session, command, timeout_ms: 60000 })).stdout;
const templateDirs = () => fs.existsSync(path.join(dataDir, 'templates')) ? fs.readdirSync(path.join(dataDir, 'templates')) : [];

test('a template built from the host with a file and a command starts sessions that have them; in use it cannot be deleted', async () => {
  const name = `tpl-${process.pid}`;
  const built = await call('build_template', {
    name,
    files: [{ path: '/etc/lizard-template.conf', text: 'from the file\n' }, { path: '/usr/local/bin/hello-tpl', text: '#!/bin/sh\necho hello from the template\n', mode: 0o755 }],
    commands: ['mkdir -p /opt && echo "from the command: $TPL_VAR" > /opt/made-by-command', 'test "$(id -u)" = 0'],
    envs: { TPL_VAR: 'kept' },
  });
  assert.equal(built.name, name);
  assert.equal(built.base, 'host');
  assert.equal(built.start, 'base');
  assert.ok(built.bytes > 0, JSON.stringify(built));
  const listed = await call('list_templates', {});
  assert.deepEqual(listed.templates.filter((t) => t.built_in).map((t) => t.name), ['desktop', 'bare', 'base', 'interpreter']);
  assert.ok(listed.templates.some((t) => t.name === name && !t.built_in));

  const { session, image } = await call('create_session', { template: name, size: 'small' });
  assert.equal(image, name);
  let snapshot;
  try {
    assert.equal(await exec(session, 'cat /etc/lizard-template.conf /opt/made-by-command; hello-tpl; echo $TPL_VAR'),
      'from the file\nfrom the command: kept\nhello from the template\nkept\n');
    const refused = await client.call('delete_template', { name });
    assert.equal(refused.isError, true);
    assert.match(textOf(refused), new RegExp(`in use by session ${session}`));
    snapshot = (await call('snapshot_session', { session })).snapshot;
  } finally {
    await client.call('kill_session', { session });
  }
  // A snapshot of one of its sessions holds it too.
  const held = await client.call('delete_template', { name });
  assert.equal(held.isError, true);
  assert.match(textOf(held), new RegExp(`in use by snapshot ${snapshot}`));
  await call('delete_snapshot', { snapshot });
  // The host never saw any of it.
  assert.equal(fs.existsSync('/etc/lizard-template.conf'), false);
  assert.equal(fs.existsSync('/opt/made-by-command'), false);
  assert.equal((await call('delete_template', { name })).deleted, true);
  assert.deepEqual(templateDirs(), []);
  const gone = await client.call('create_session', { template: name });
  assert.equal(gone.isError, true);
});

test('a build whose command fails leaves no template', async () => {
  const name = `broken-${process.pid}`;
  const r = await client.call('build_template', { name, files: [{ path: '/etc/half-made', text: 'x' }], commands: ['true', 'echo about to fail >&2; exit 3', 'touch /never'] });
  assert.equal(r.isError, true);
  assert.match(textOf(r), /command 2 \(echo about to fail >&2; exit 3\) exited with status 3: about to fail/);
  assert.equal((await call('list_templates', {})).templates.some((t) => t.name === name), false);
  assert.deepEqual(templateDirs(), []);
  const refused = await client.call('build_template', { name: 'desktop' });
  assert.equal(refused.isError, true);
});

test('lizard-bridge template build makes a template from host files that the daemon starts', async () => {
  const name = `cli-${process.pid}`;
  const sourceDir = tempDir('lizard-template-src-');
  const source = path.join(sourceDir, 'note.txt');
  fs.writeFileSync(source, 'copied from the host\n');
  const out = execFileSync(bridgeBin, ['template', 'build', name, '--file', `${source}:/srv/note.txt`, '--run', 'chmod 600 /srv/note.txt', '--data-dir', dataDir],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120000 });
  assert.match(out, new RegExp(`built template ${name} in [0-9.]+ s, [0-9.]+ MiB on disk`));
  const { session } = await call('create_session', { template: name });
  try {
    assert.equal((await call('exec', { session, command: 'cat /srv/note.txt; stat -c %a:%U /srv/note.txt', user: 'root' })).stdout,
      'copied from the host\n600:root\n');
  } finally {
    await client.call('kill_session', { session });
  }
  const listed = execFileSync(bridgeBin, ['template', 'list', '--data-dir', dataDir], { encoding: 'utf8' });
  assert.match(listed, new RegExp(`"name":"${name}"`));
  execFileSync(bridgeBin, ['template', 'delete', name, '--data-dir', dataDir]);
  assert.deepEqual(templateDirs(), []);
  fs.rmSync(sourceDir, { recursive: true, force: true });
});

// It downloads the release from deb.debian.org, and tests talk only to
// this machine: it runs when LIZARD_TEST_DEBIAN_MIRROR=1 says that is fine.
const debianSkip = process.env.LIZARD_TEST_DEBIAN_MIRROR !== '1'
  ? 'downloads from deb.debian.org; set LIZARD_TEST_DEBIAN_MIRROR=1 to run it'
  : !fs.existsSync('/usr/bin/mmdebstrap') && 'mmdebstrap is not installed (apt-get install mmdebstrap)';

test('a template from a Debian release (mmdebstrap) with a package starts sessions of that release; its snapshots rest on it', { skip: debianSkip }, async () => {
  const name = `bookworm-${process.pid}`;
  const log = [];
  const r = await client.client.callTool({ name: 'build_template', arguments: { name, base: 'bookworm', packages: ['hello'], commands: ['hello > /srv/greeting'] } },
    undefined, { timeout: 900000, onprogress: (p) => log.push(p.message ?? '') });
  assert.equal(r.isError, false, textOf(r));
  const built = r.structuredContent;
  assert.equal(built.base, 'bookworm');
  // The release's whole root: tens of MB, not the host's.
  assert.ok(built.bytes > 50 * (1 << 20), JSON.stringify(built));
  assert.match(log.join(''), /mmdebstrap bookworm/);
  const { session } = await call('create_session', { template: name });
  let snapshot;
  try {
    assert.equal(await exec(session, 'cut -d. -f1 /etc/debian_version; cat /srv/greeting; hello; id -un'), '12\nHello, world!\nHello, world!\nuser\n');
    // The host's release came from the host's own apt sources, and the
    // packages taken from its cache are not kept in the image.
    const hostCodename = /^VERSION_CODENAME=(.*)$/m.exec(fs.readFileSync('/etc/os-release', 'utf8'))?.[1];
    if (hostCodename === 'bookworm') {
      const inside = await exec(session, 'cat /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null');
      const hostFiles = ['/etc/apt/sources.list', ...fs.readdirSync('/etc/apt/sources.list.d').filter((n) => /\.(list|sources)$/.test(n)).map((n) => `/etc/apt/sources.list.d/${n}`)];
      for (const file of hostFiles.filter((f) => fs.existsSync(f))) {
        for (const line of fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.trim() && !l.startsWith('#'))) {
          assert.ok(inside.includes(line), `${file}: "${line}" is not in the image's sources:\n${inside}`);
        }
      }
    }
    assert.equal(await exec(session, 'ls /var/cache/apt/archives | grep -c "\\.deb$"; true'), '0\n');
    const installed = await call('exec', { session, user: 'root', command: `dpkg-query -W -f '\${Status}' hello && echo && echo changed > /etc/motd && cat /etc/motd` });
    assert.equal(installed.stdout, 'install ok installed\nchanged\n');
    snapshot = (await call('snapshot_session', { session })).snapshot;
    // The snapshot holds the session's changes, not the release again.
    const listed = (await call('list_snapshots', {})).snapshots.find((s) => s.snapshot === snapshot);
    assert.ok(listed.bytes < built.bytes / 4, JSON.stringify(listed));
  } finally {
    await client.call('kill_session', { session });
  }
  const restored = (await call('create_session', { template: snapshot })).session;
  try {
    assert.equal(await exec(restored, 'cat /etc/motd; hello'), 'changed\nHello, world!\n');
  } finally {
    await client.call('kill_session', { session: restored });
  }
  const refused = await client.call('delete_template', { name });
  assert.equal(refused.isError, true);
  assert.match(textOf(refused), new RegExp(`in use by snapshot ${snapshot}`));
  await call('delete_snapshot', { snapshot });
  assert.equal((await call('delete_template', { name })).deleted, true);
  assert.deepEqual(templateDirs(), []);
});
