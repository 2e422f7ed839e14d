// However the bridge ends, its desktop's processes end with it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import {
  connectBridge, desktopFromLog, waitFor, sleep, sandboxPidNamespace, processesInPidNamespace,
} from './lib.mjs';

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

for (const how of ['stdin closed', 'SIGTERM', 'SIGINT', 'SIGKILL']) {
  test(`no desktop process is left after the bridge ends by ${how}`, async () => {
    const { bridge, desktop } = await startedDesktop();
    if (how === 'stdin closed') {
      await bridge.close();
    } else {
      process.kill(bridge.pid, how);
    }
    const left = await waitFor(() => desktop.processes().length === 0, { timeout: 10000 });
    assert.ok(left, `still running: ${desktop.processes()}`);
    if (how !== 'SIGKILL') {
      // A clean exit also removes the private files (socket, cookie, HOME).
      assert.ok(await waitFor(() => !fs.existsSync(desktop.dir)), 'private directory removed');
    } else {
      // What a killed bridge left behind goes when the next one starts.
      assert.ok(fs.existsSync(desktop.dir), 'a killed bridge cannot clean up');
      const next = await connectBridge(['--size', '320x240']);
      assert.ok(await waitFor(() => !fs.existsSync(desktop.dir)), 'the next bridge removed it');
      await next.close();
    }
    await bridge.close().catch(() => {});
    await sleep(10);
  });
}
