// SPDX-License-Identifier: MIT
// Tools that return data declare an outputSchema and answer with
// structuredContent, which the official SDK client checks against it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDaemon } from '../lib/bridge.mjs';
import { httpClient, textOf } from '../lib/mcp.mjs';

// Tools whose results are actions done, images or messages, not data.
const noData = new Set([
  'click', 'move_mouse', 'mouse_down', 'mouse_up', 'drag', 'scroll', 'type', 'press', 'hold_key',
  'open_url', 'launch', 'clipboard_set', 'kill_session', 'stop_stream', 'screenshot', 'computer',
  'remove_code_context',
]);
const dataTools = ['create_session', 'list_sessions', 'session_info', 'set_timeout', 'start_stream',
  'cursor_position', 'screen_size', 'clipboard_get', 'wait', 'run_code', 'create_code_context',
  'list_code_contexts', 'restart_code_context', 'expose_port', 'get_host', 'unexpose_port'];

let daemon, mcp, session;

before(async () => {
  daemon = await startDaemon();
  mcp = await httpClient(daemon, 'structured-test');
  // The SDK checks structuredContent only for tools it has listed.
  await mcp.client.listTools();
});

after(async () => {
  await mcp?.close();
  await daemon?.stop();
});

// A successful call whose structuredContent the SDK validated; the text
// block carries the same JSON for clients that show text.
async function data(name, args) {
  assert.equal(typeof mcp.client.getToolOutputValidator(name), 'function', `the SDK checks ${name}`);
  const result = await mcp.call(name, args);
  assert.equal(result.isError, false, textOf(result));
  assert.equal(typeof result.structuredContent, 'object');
  const texts = result.content.filter((c) => c.type === 'text').map((c) => c.text);
  assert.ok(texts.includes(JSON.stringify(result.structuredContent)), `the JSON is in the text: ${texts}`);
  return result.structuredContent;
}

test('every tool that returns data declares an object outputSchema', async () => {
  const { tools } = await mcp.client.listTools();
  const names = tools.map((t) => t.name);
  for (const name of dataTools) assert.ok(names.includes(name), `${name} is listed`);
  for (const tool of tools) {
    if (noData.has(tool.name)) continue;
    assert.equal(tool.outputSchema?.type, 'object', `${tool.name} returns data, so it declares an outputSchema`);
  }
});

test('session tools answer with structured session info', async () => {
  const made = await data('create_session', { template: 'bare', size: '320x240', metadata: { job: 'schema' } });
  session = made.session;
  assert.match(session, /^\S+$/);
  assert.equal(made.template, 'bare');
  assert.equal(made.size, '320x240');
  assert.equal(made.state, 'ready');
  assert.deepEqual(made.metadata, { job: 'schema' });
  assert.equal(made.timeout_ms, 300000);

  const info = await data('session_info', { session });
  assert.equal(info.session, session);
  assert.match(info.created, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

  const longer = await data('set_timeout', { session, timeout_ms: 600000 });
  assert.equal(longer.timeout_ms, 600000);
  assert.ok(longer.remaining_ms > 300000 && longer.remaining_ms <= 600000, `remaining ${longer.remaining_ms}`);

  const listed = await data('list_sessions', {});
  assert.deepEqual(listed.sessions.map((s) => s.session), [session]);

  const links = await data('start_stream', { session });
  assert.match(links.url, new RegExp(`/view/${session}#token=[0-9a-f]{32}$`));
  assert.match(links.view_only_url, new RegExp(`/view/${session}#token=[0-9a-f]{32}$`));
  assert.notEqual(links.url, links.view_only_url);
});

test('screen, pointer, clipboard and wait answer with structured data', async () => {
  assert.deepEqual(await data('screen_size', { session }), { width: 320, height: 240 });
  await mcp.call('move_mouse', { session, x: 17, y: 29 });
  assert.deepEqual(await data('cursor_position', { session }), { x: 17, y: 29 });

  const text = 'structured ✓ "quoted"\nline two';
  const set = await mcp.call('clipboard_set', { session, text });
  assert.equal(set.isError, false, textOf(set));
  assert.deepEqual(await data('clipboard_get', { session }), { text });

  const fixed = await data('wait', { session, ms: 120 });
  assert.equal(fixed.mode, 'fixed');
  assert.equal(fixed.waited_ms, 120);
  assert.ok(Number.isInteger(fixed.updates));
  const settled = await data('wait', { session, quiet_ms: 100, timeout_ms: 3000 });
  assert.equal(settled.mode, 'settle');
  assert.equal(settled.settled, true, 'a bare desktop nobody touches is still');
  assert.ok(settled.waited_ms >= 100, `waited ${settled.waited_ms} ms`);
});

test('an error result carries no structuredContent, and the SDK accepts it', async () => {
  const failed = await mcp.call('session_info', { session: 'no-such-session' });
  assert.equal(failed.isError, true);
  assert.equal(failed.structuredContent, undefined);
  assert.match(textOf(failed), /no session 'no-such-session'/);
  await mcp.call('kill_session', { session });
});
