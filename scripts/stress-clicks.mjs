// SPDX-License-Identifier: MIT
// Stress: repeated clicks and wheel steps on a window under openbox on the
// embedded desktop, with busy loops loading every core, must all arrive.
// openbox takes each press on a window with a synchronous grab and then
// replays it; back-to-back identical presses on a loaded machine lost one
// pair in about 3 of 100 rounds (bridge/tools/input.c: CLICK_GAP_MS).
//
//   node scripts/stress-clicks.mjs [rounds=100] [busy-loops=3]
// Exits 1 when any round lost an event.
import { spawn } from 'node:child_process';
import { waitFor } from '../tests/lib/process.mjs';
import { connectBridge } from '../tests/lib/mcp.mjs';
import { desktopFromLog } from '../tests/lib/x11.mjs';
import { windowReady, startXev } from '../tests/lib/x11-apps.mjs';

const rounds = Number(process.argv[2] || 100);
const busy = Number(process.argv[3] || 3);

const bridge = await connectBridge([]);
const desktop = desktopFromLog(bridge.log);
const xev = startXev(desktop.env, '500x400+300+200');
const loads = [];
let lost = 0;
try {
  if (!(await waitFor(() => windowReady(desktop.env, 'Event Tester')))) throw new Error('xev did not map');
  const landed = await waitFor(async () => {
    await bridge.call('click', { x: 550, y: 400 });
    return /ButtonPress event/.test(xev.output);
  }, { timeout: 10000, interval: 300 });
  if (!landed) throw new Error('no click reached xev');
  for (let i = 0; i < busy; i++) loads.push(spawn('sh', ['-c', 'while :; do :; done'], { stdio: 'ignore' }));
  for (let i = 0; i < rounds; i++) {
    // Wait for the previous round's output to settle before the mark.
    await waitFor(async () => {
      const length = xev.output.length;
      await new Promise((resolve) => setTimeout(resolve, 100));
      return xev.output.length === length;
    }, { interval: 0 });
    const mark = xev.output.length;
    await bridge.call('click', { x: 560, y: 410, button: 'right', count: 2 });
    await bridge.call('scroll', { x: 560, y: 410, direction: 'down', amount: 2 });
    await bridge.call('press', { keys: 'ctrl+shift+t' });
    await waitFor(() => (xev.output.slice(mark).match(/KeyRelease event/g) || []).length >= 3);
    const buttons = [...xev.output.slice(mark).matchAll(/ButtonPress event[^]*?button (\d+)/g)].map((m) => m[1]);
    if (buttons.join() !== '3,3,5,5') {
      lost++;
      console.log(`round ${i}: xev saw buttons ${buttons.join() || 'none'}, not 3,3,5,5`);
    }
  }
} finally {
  for (const load of loads) load.kill('SIGKILL');
  await xev.stop();
  await bridge.close();
}
console.log(`${lost} of ${rounds} rounds lost an event with ${busy} busy loops`);
process.exit(lost ? 1 : 0);
