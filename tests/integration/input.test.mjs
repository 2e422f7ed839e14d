// SPDX-License-Identifier: MIT
// Input reaches real X applications exactly as asked.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { waitFor } from '../lib/process.mjs';
import { connectBridge, textOf } from '../lib/mcp.mjs';
import { startXvnc } from '../lib/x11.mjs';
import { windowReady, pointerLocation, startTypingTarget, startXev, typedText } from '../lib/x11-apps.mjs';

let x, bridge;
const apps = [];

before(async () => {
  x = await startXvnc({ width: 1024, height: 768 });
  bridge = await connectBridge(['--vnc', x.url]);
});

after(async () => {
  await bridge?.close();
  for (const app of apps) await app.stop();
  await x?.stop();
});

// xev's output as a list of { type, ...fields } events.
function xevEvents(output) {
  return output.split(/\n\s*\n/).map((block) => {
    const type = /^(\w+) event/m.exec(block)?.[1];
    const root = /root:\((-?\d+),(-?\d+)\)/.exec(block);
    const button = /button (\d+)/.exec(block);
    const keysym = /keysym 0x[0-9a-f]+, ([^)]+)\)/.exec(block);
    const state = /state 0x([0-9a-f]+)/.exec(block);
    const time = /time (\d+)/.exec(block);
    return {
      type,
      state: state ? Number.parseInt(state[1], 16) : undefined,
      time: time ? Number(time[1]) : undefined,
      x: root ? Number(root[1]) : undefined,
      y: root ? Number(root[2]) : undefined,
      button: button ? Number(button[1]) : undefined,
      keysym: keysym ? keysym[1] : undefined,
    };
  }).filter((e) => e.type);
}

async function withXev(fn) {
  const xev = startXev(x.env, '400x300+100+100');
  apps.push(xev);
  assert.ok(await waitFor(() => windowReady(x.env, 'Event Tester')), 'xev window mapped');
  // The pointer decides keyboard focus here (no window manager).
  const moved = await bridge.call('move_mouse', { x: 300, y: 250 });
  assert.equal(moved.isError, false, textOf(moved));
  try {
    await fn(xev);
  } finally {
    await xev.stop();
  }
}

const presses = (events, type) => events.filter((e) => e.type === type);

test('move_mouse puts the X pointer where asked, and cursor_position reports it', async () => {
  for (const [px, py] of [[10, 20], [1023, 767], [512, 384]]) {
    const result = await bridge.call('move_mouse', { x: px, y: py });
    assert.equal(result.isError, false, textOf(result));
    const where = await waitFor(() => {
      const p = pointerLocation(x.env);
      return p.x === px && p.y === py ? p : null;
    }, { timeout: 5000 });
    assert.deepEqual(where, { x: px, y: py });
    assert.deepEqual(JSON.parse(textOf(await bridge.call('cursor_position'))), { x: px, y: py });
  }
});

test('click reaches the window under it with the right button, position and count', async () => {
  await withXev(async (xev) => {
    await bridge.call('click', { x: 200, y: 150 });
    await bridge.call('click', { x: 250, y: 180, button: 'right' });
    await bridge.call('click', { x: 300, y: 200, button: 'middle', count: 2 });
    await bridge.call('click', { x: 320, y: 210, count: 3 });
    // Complete once every press has its release (a press block may still
    // be arriving when the next event's header is already there).
    const events = await waitFor(() => {
      const all = xevEvents(xev.output);
      return presses(all, 'ButtonRelease').length >= 7 ? presses(all, 'ButtonPress') : null;
    });
    assert.ok(events, `xev saw: ${xev.output.slice(-2000)}`);
    assert.deepEqual(
      events.map((e) => [e.button, e.x, e.y]),
      [[1, 200, 150], [3, 250, 180], [2, 300, 200], [2, 300, 200], [1, 320, 210], [1, 320, 210], [1, 320, 210]],
    );
    assert.equal(presses(xevEvents(xev.output), 'ButtonRelease').length, 7);
  });
});

test('scroll sends wheel buttons 4-7 at the position, amount times', async () => {
  await withXev(async (xev) => {
    await bridge.call('scroll', { x: 200, y: 200, direction: 'down', amount: 2 });
    await bridge.call('scroll', { x: 210, y: 200, direction: 'up', amount: 1 });
    await bridge.call('scroll', { x: 220, y: 200, direction: 'left', amount: 1 });
    await bridge.call('scroll', { x: 230, y: 200, direction: 'right', amount: 1 });
    const events = await waitFor(() => {
      const all = xevEvents(xev.output);
      return presses(all, 'ButtonRelease').length >= 5 ? presses(all, 'ButtonPress') : null;
    });
    assert.deepEqual(events.map((e) => [e.button, e.x]), [[5, 200], [5, 200], [4, 210], [6, 220], [7, 230]]);
  });
});

test('press sends combos in order and releases them in reverse', async () => {
  await withXev(async (xev) => {
    const result = await bridge.call('press', { keys: 'ctrl+shift+t Return esc pgup alt+F4 a shift+Tab ctrl+shift+1' });
    assert.equal(result.isError, false, textOf(result));
    const want = ['Control_L', 'Shift_L', 'T', 'Return', 'Escape', 'Prior', 'Alt_L', 'F4', 'a',
      'Shift_L', 'ISO_Left_Tab', 'Control_L', 'Shift_L', 'exclam'];
    const events = await waitFor(() => {
      const keys = xevEvents(xev.output).filter((e) => e.type === 'KeyPress' || e.type === 'KeyRelease');
      return keys.length >= want.length * 2 ? keys : null;
    });
    assert.ok(events, `xev saw: ${xev.output.slice(-3000)}`);
    assert.deepEqual(presses(events, 'KeyPress').map((e) => e.keysym), want);
    // The first combo: pressed ctrl, shift, t; released t, shift, ctrl.
    assert.deepEqual(events.slice(0, 6).map((e) => `${e.type}:${e.keysym}`), [
      'KeyPress:Control_L', 'KeyPress:Shift_L', 'KeyPress:T',
      'KeyRelease:T', 'KeyRelease:Shift_L', 'KeyRelease:Control_L',
    ]);
  });
});

test('type delivers ASCII, Latin-1 and other Unicode text exactly into an application', async () => {
  const file = path.join(x.dir, 'typed.txt');
  const term = startTypingTarget(x.env, file, '80x10+500+400');
  apps.push(term);
  assert.ok(await waitFor(() => fs.existsSync(file)), 'xterm started cat');
  await bridge.call('move_mouse', { x: 700, y: 450 });
  const text = 'Hello, wörld — ñ € 漢字 ÅÆØ ß ✓ 🙂\nTab:\there ~!@#$%^&*()_+{}|:"<>? `-=[]\\;\',./\n';
  const result = await bridge.call('type', { text });
  assert.equal(result.isError, false, textOf(result));
  const typed = await typedText(file, text.length, { timeout: 15000 });
  assert.equal(typed ?? fs.readFileSync(file, 'utf8'), text);
  await term.stop();
});

const CONTROL = 0x4, SHIFT = 0x1, BUTTON1 = 0x100;

test('click holds modifiers around the click, and multi-clicks arrive as separate presses', async () => {
  await withXev(async (xev) => {
    await bridge.call('click', { x: 200, y: 150, modifiers: 'ctrl' });
    await bridge.call('click', { x: 210, y: 160, modifiers: 'ctrl+shift', count: 2 });
    const events = await waitFor(() => {
      const all = xevEvents(xev.output).filter((e) => e.type === 'ButtonRelease');
      return all.length >= 3 ? xevEvents(xev.output) : null;
    });
    assert.ok(events, xev.output.slice(-2000));
    const buttonPresses = presses(events, 'ButtonPress');
    assert.deepEqual(buttonPresses.map((e) => e.state & (CONTROL | SHIFT)), [CONTROL, CONTROL | SHIFT, CONTROL | SHIFT]);
    // The modifier goes down before the button and up after it.
    const order = events.filter((e) => /^(Key|Button)(Press|Release)$/.test(e.type)).map((e) => `${e.type}:${e.keysym ?? e.button}`);
    assert.deepEqual(order.slice(0, 4), ['KeyPress:Control_L', 'ButtonPress:1', 'ButtonRelease:1', 'KeyRelease:Control_L']);
  });
});

test('mouse_down, move_mouse and mouse_up make a drag the application sees', async () => {
  await withXev(async (xev) => {
    assert.equal((await bridge.call('mouse_down', { x: 150, y: 150 })).isError, false);
    await bridge.call('move_mouse', { x: 250, y: 200 });
    await bridge.call('move_mouse', { x: 350, y: 250 });
    assert.equal((await bridge.call('mouse_up', { x: 350, y: 250 })).isError, false);
    const events = await waitFor(() => {
      const all = xevEvents(xev.output);
      return all.some((e) => e.type === 'ButtonRelease') ? all : null;
    });
    const press = events.find((e) => e.type === 'ButtonPress');
    const release = events.find((e) => e.type === 'ButtonRelease');
    assert.deepEqual([press.x, press.y, release.x, release.y], [150, 150, 350, 250]);
    const dragging = events.filter((e) => e.type === 'MotionNotify' && e.state & BUTTON1);
    assert.ok(dragging.some((e) => e.x === 250 && e.y === 200), 'motion with the button held');
    // Afterwards the button is up again: a plain move carries no button.
    xev.output = '';
    await bridge.call('move_mouse', { x: 300, y: 300 });
    const motion = await waitFor(() => xevEvents(xev.output).find((e) => e.type === 'MotionNotify'));
    assert.equal(motion.state & BUTTON1, 0);
  });
});

test('drag moves through intermediate points with the button held', async () => {
  await withXev(async (xev) => {
    await bridge.call('drag', { path: [[120, 120], [300, 120], [300, 300]] });
    const events = await waitFor(() => {
      const all = xevEvents(xev.output);
      return all.some((e) => e.type === 'ButtonRelease') ? all : null;
    });
    const held = events.filter((e) => e.type === 'MotionNotify' && e.state & BUTTON1);
    assert.ok(held.length >= 10, `${held.length} motion events while dragging`);
    assert.ok(held.some((e) => e.x === 300 && e.y === 120), 'passed the corner');
    const release = events.find((e) => e.type === 'ButtonRelease');
    assert.deepEqual([release.x, release.y], [300, 300]);
  });
});

test('hold_key keeps the key down for the duration, then releases it', async () => {
  await withXev(async (xev) => {
    assert.equal((await bridge.call('hold_key', { keys: 'shift', duration_ms: 500 })).isError, false);
    const events = await waitFor(() => {
      const all = xevEvents(xev.output);
      return all.some((e) => e.type === 'KeyRelease') ? all : null;
    });
    const down = events.find((e) => e.type === 'KeyPress' && e.keysym === 'Shift_L');
    const up = events.find((e) => e.type === 'KeyRelease' && e.keysym === 'Shift_L');
    // X server timestamps (ms) of the two events.
    assert.ok(up.time - down.time >= 450, `held for ${up.time - down.time} ms`);
  });
});

test('the computer tool clicks, scrolls and presses like the named tools', async () => {
  await withXev(async (xev) => {
    const no = { screenshot: false };
    await bridge.call('computer', { action: 'double_click', coordinate: [200, 200], text: 'shift', ...no });
    await bridge.call('computer', { action: 'right_click', coordinate: [210, 200], ...no });
    await bridge.call('computer', { action: 'scroll', coordinate: [220, 200], scroll_direction: 'up', scroll_amount: 2, ...no });
    await bridge.call('computer', { action: 'key', text: 'ctrl+a', ...no });
    const events = await waitFor(() => {
      const all = xevEvents(xev.output);
      return all.filter((e) => e.type === 'KeyRelease').length >= 3 ? all : null;
    });
    assert.ok(events, xev.output.slice(-2000));
    const buttons = presses(events, 'ButtonPress');
    assert.deepEqual(buttons.map((e) => [e.button, e.x, e.state & SHIFT]),
      [[1, 200, SHIFT], [1, 200, SHIFT], [3, 210, 0], [4, 220, 0], [4, 220, 0]]);
    assert.deepEqual(presses(events, 'KeyPress').map((e) => e.keysym), ['Shift_L', 'Control_L', 'a']);
  });
});

test('computer left_mouse_down presses the button and left_mouse_up releases it', async () => {
  await withXev(async (xev) => {
    const no = { screenshot: false };
    const down = await bridge.call('computer', { action: 'left_mouse_down', coordinate: [150, 150], ...no });
    assert.equal(down.isError, false, textOf(down));
    await bridge.call('computer', { action: 'mouse_move', coordinate: [250, 200], ...no });
    const pressed = await waitFor(() => {
      const all = xevEvents(xev.output);
      // The event's state line may still be on its way: wait for it.
      return all.some((e) => e.type === 'MotionNotify' && e.x === 250 && e.state !== undefined) ? all : null;
    });
    assert.ok(pressed, xev.output.slice(-2000));
    assert.deepEqual(pressed.filter((e) => e.type.startsWith('Button')).map((e) => [e.type, e.button, e.x, e.y]),
      [['ButtonPress', 1, 150, 150]]);
    assert.ok(pressed.some((e) => e.type === 'MotionNotify' && e.x === 250 && e.state & BUTTON1), 'moved with the button held');
    const up = await bridge.call('computer', { action: 'left_mouse_up', coordinate: [250, 200], ...no });
    assert.equal(up.isError, false, textOf(up));
    const release = await waitFor(() => xevEvents(xev.output).find((e) => e.type === 'ButtonRelease'));
    assert.deepEqual([release.button, release.x, release.y], [1, 250, 200]);
  });
});

test('a cancelled hold_key stops at once and releases the key', async () => {
  await withXev(async (xev) => {
    const controller = new AbortController();
    const started = Date.now();
    const holding = bridge.client.callTool({ name: 'hold_key', arguments: { keys: 'shift', duration_ms: 20000 } },
      undefined, { signal: controller.signal });
    assert.ok(await waitFor(() => xevEvents(xev.output).some((e) => e.type === 'KeyPress')), 'the key went down');
    controller.abort();
    await assert.rejects(holding);
    const release = await waitFor(() => xevEvents(xev.output).find((e) => e.type === 'KeyRelease'), { timeout: 5000 });
    assert.ok(release, 'the key was released');
    assert.equal(release.keysym, 'Shift_L');
    assert.ok(Date.now() - started < 10000, 'released long before the 20 s hold would have ended');
    // The lane is free: the next action does not wait behind the hold.
    const next = await bridge.call('move_mouse', { x: 310, y: 260 });
    assert.equal(next.isError, false, textOf(next));
    assert.ok(Date.now() - started < 10000);
  });
});

test('long input calls report progress when asked', async () => {
  const seen = [];
  const result = await bridge.client.callTool({ name: 'hold_key', arguments: { keys: 'shift', duration_ms: 1600 } },
    undefined, { onprogress: (p) => seen.push(p) });
  assert.equal(result.isError, false, textOf(result));
  assert.ok(seen.length >= 2, `progress notifications: ${JSON.stringify(seen)}`);
  assert.match(seen[0].message, /sent \d+ of \d+ input events/);
  assert.ok(seen.every((p, i) => i === 0 || p.progress > seen[i - 1].progress), 'progress grows');
  const waits = [];
  await bridge.client.callTool({ name: 'wait', arguments: { ms: 1200 } }, undefined, { onprogress: (p) => waits.push(p) });
  assert.ok(waits.length >= 1 && /waited \d+ of 1200 ms/.test(waits[0].message), JSON.stringify(waits));
});

test('a cancelled wait frees the desktop for the next action', async () => {
  const controller = new AbortController();
  const started = Date.now();
  const waiting = bridge.client.callTool({ name: 'wait', arguments: { ms: 20000 } }, undefined, { signal: controller.signal });
  setTimeout(() => controller.abort(), 300);
  await assert.rejects(waiting);
  const next = await bridge.call('move_mouse', { x: 320, y: 270 });
  assert.equal(next.isError, false, textOf(next));
  assert.ok(Date.now() - started < 5000, `the next action waited ${Date.now() - started} ms`);
});

test('on an attached desktop, open_url and launch say they need a local one', async () => {
  for (const [tool, args] of [['open_url', { url: 'http://example.com' }], ['launch', { command: 'xterm' }]]) {
    const r = await bridge.call(tool, args);
    assert.equal(r.isError, true);
    assert.match(textOf(r), /needs a local desktop/);
  }
});

test('the clipboard of an attached desktop travels as RFB cut text (Latin-1)', async () => {
  assert.equal((await bridge.call('clipboard_set', { text: 'café crème' })).isError, false);
  const inX = await waitFor(() => {
    try {
      return execFileSync('xclip', ['-o', '-selection', 'clipboard'], { env: x.env, timeout: 2000 }).toString() === 'café crème';
    } catch {
      return false;
    }
  });
  assert.ok(inX, 'Xvnc put the text on its X clipboard');
  const refused = await bridge.call('clipboard_set', { text: '漢字' });
  assert.equal(refused.isError, true);
  assert.match(textOf(refused), /Latin-1/);
});
