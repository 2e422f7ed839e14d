// SPDX-License-Identifier: MIT
// However the bridge ends, its desktop's processes end with it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { waitFor, sleep, tempDir } from '../lib/process.mjs';
import { connectBridge } from '../lib/mcp.mjs';
import { bridgeBin } from '../lib/bridge.mjs';
import { desktopFromLog } from '../lib/x11.mjs';
import { janitorOf, sandboxPidNamespace, processesInPidNamespace } from '../lib/sandbox.mjs';

async function startedDesktop() {
  const bridge = await connectBridge([]);
  const desktop = desktopFromLog(bridge.log);
  assert.ok(desktop, bridge.log);
  const namespace = await waitFor(() => sandboxPidNamespace(desktop.dir));
  assert.ok(namespace, 'the desktop runs in a PID namespace of its own');
  // Xvnc and openbox both run before the first call returns.
  assert.ok(processesInPidNamespace(namespace).length >= 2, 'Xvnc and openbox run');
  desktop.processes = () => processesInPidNamespace(namespace);
  return { bridge, desktop };
}

for (const how of ['stdin closed', 'SIGTERM', 'SIGINT', 'SIGKILL', 'SIGKILL of it and its janitor']) {
  test(`no desktop process is left after the bridge ends by ${how}`, async () => {
    const { bridge, desktop } = await startedDesktop();
    const janitor = janitorOf(bridge.pid);
    assert.ok(janitor, 'the bridge has a janitor');
    // Whoever cleans up after a kill (the janitor, or the next bridge)
    // meets what the sandbox left: links to host files and a locked
    // directory. It removes them, never their targets.
    const host = tempDir('lizard-test-lifecycle-');
    fs.chmodSync(host, 0o700);
    const keep = path.join(host, 'keep.txt');
    fs.writeFileSync(keep, 'host file', { mode: 0o600 });
    const planted = await bridge.call('exec', {
      command: [`ln -s ${keep} ~/link-file`, `ln -s ${host} /run/lizard/link-dir`, 'mkdir -p ~/locked/inner',
        `ln -s ${host} ~/locked/inner/link`, 'chmod 000 ~/locked'].join(' && '),
    });
    assert.equal(planted.structuredContent?.exit_code, 0, JSON.stringify(planted));
    if (how === 'stdin closed') {
      await bridge.close();
    } else if (how === 'SIGKILL of it and its janitor') {
      process.kill(janitor, 'SIGKILL');
      process.kill(bridge.pid, 'SIGKILL');
    } else {
      process.kill(bridge.pid, how);
    }
    const left = await waitFor(() => desktop.processes().length === 0, { timeout: 10000 });
    assert.ok(left, `still running: ${desktop.processes()}`);
    if (how !== 'SIGKILL of it and its janitor') {
      // The private files go too (socket, cookie, HOME, its disk): a clean
      // exit removes them, and after a kill the janitor does.
      assert.ok(await waitFor(() => !fs.existsSync(desktop.dir)), 'private directory removed');
    } else {
      // With no janitor left, they go when the next bridge starts.
      assert.ok(fs.existsSync(desktop.dir), 'nothing was left to clean up');
      const next = await connectBridge(['--size', '320x240']);
      assert.ok(await waitFor(() => !fs.existsSync(desktop.dir)), 'the next bridge removed it');
      await next.close();
    }
    assert.equal(fs.readFileSync(keep, 'utf8'), 'host file');
    assert.deepEqual([fs.statSync(keep).uid, fs.statSync(keep).mode & 0o777], [0, 0o600]);
    assert.deepEqual([fs.statSync(host).uid, fs.statSync(host).mode & 0o777], [0, 0o700]);
    fs.rmSync(host, { recursive: true, force: true });
    await bridge.close().catch(() => {});
    await sleep(10);
  });
}

// A daemon tells a dead daemon's files from a live one's by a lock the
// live one holds, not by its process's name: a bridge run under another
// name (a renamed binary, a link) keeps its files and its sessions when
// another bridge starts and clears what dead ones left.
test('a bridge run under another name keeps its files when the next bridge starts', async () => {
  const dir = tempDir('lizard-test-renamed-');
  const renamed = path.join(dir, 'renamed-bridge');
  fs.symlinkSync(bridgeBin, renamed);
  const first = await connectBridge([], { bin: renamed });
  let next;
  try {
    assert.equal(fs.readFileSync(`/proc/${first.pid}/comm`, 'utf8').trim(), 'renamed-bridge');
    const desktop = desktopFromLog(first.log);
    assert.ok(desktop, first.log);
    next = await connectBridge(['--size', '320x240']);
    // The next bridge has looked for dead daemons' files before it
    // answers its first call.
    const listed = await next.call('list_sessions', {});
    assert.ok(!listed.isError, JSON.stringify(listed));
    assert.ok(fs.existsSync(desktop.dir), `the first bridge's files were removed: ${next.log}`);
    const ran = await first.call('exec', { command: 'echo still here' });
    assert.equal(ran.structuredContent?.stdout, 'still here\n', JSON.stringify(ran));
  } finally {
    await next?.close();
    await first.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
