// However the bridge ends, its desktop's processes end with it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { connectBridge, desktopFromLog, waitFor, sleep } from './lib.mjs';

// Processes whose environment places them in this desktop (HOME inside it).
function processesOf(dir) {
  const home = `HOME=${dir}/home`;
  const found = [];
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const env = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      if (env.includes(home)) found.push(Number(pid));
    } catch {}
  }
  return found;
}

async function startedDesktop() {
  const bridge = await connectBridge([]);
  const desktop = desktopFromLog(bridge.log);
  assert.ok(desktop, bridge.log);
  // Xvnc and openbox both run before the first call returns.
  assert.ok(await waitFor(() => processesOf(desktop.dir).length >= 2), 'Xvnc and openbox run');
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
    const left = await waitFor(() => processesOf(desktop.dir).length === 0, { timeout: 10000 });
    assert.ok(left, `still running: ${processesOf(desktop.dir)}`);
    if (how !== 'SIGKILL') {
      // A clean exit also removes the private files (socket, cookie, HOME).
      assert.ok(await waitFor(() => !fs.existsSync(desktop.dir)), 'private directory removed');
    } else {
      fs.rmSync(desktop.dir, { recursive: true, force: true });
    }
    await bridge.close().catch(() => {});
    await sleep(10);
  });
}
