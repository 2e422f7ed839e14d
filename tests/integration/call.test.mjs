// SPDX-License-Identifier: MIT
// lizard-bridge call is enough to script a UI: tests/scripts/automate-terminal.sh.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir, waitFor } from '../lib/process.mjs';
import { startDaemon, bridgeBin, bridgeEnv } from '../lib/bridge.mjs';
import { decodePng } from '../lib/png.mjs';

const script = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../scripts/automate-terminal.sh');
let daemon, out;

before(async () => {
  daemon = await startDaemon();
  out = tempDir('lizard-call-');
});

after(async () => {
  await daemon?.stop();
  fs.rmSync(out, { recursive: true, force: true });
});

const env = () => bridgeEnv({ LIZARD_API_URL: daemon.url, LIZARD_API_KEY: daemon.key, LIZARD_BRIDGE_BIN: bridgeBin });

test('a shell script automates a terminal with call alone', async () => {
  const run = spawnSync('bash', [script, out], { env: env(), timeout: 120000 });
  assert.equal(run.status, 0, run.stderr.toString());
  const notes = path.join(out, 'notes.txt');
  const typed = await waitFor(() => fs.readFileSync(notes, 'utf8').includes('\n'), { timeout: 20000 });
  assert.ok(typed, `notes.txt holds ${JSON.stringify(fs.readFileSync(notes, 'utf8'))}; script said ${run.stdout}`);
  assert.equal(fs.readFileSync(path.join(out, 'notes.txt'), 'utf8'), 'written by a shell script ✓\n');
  const after = decodePng(fs.readFileSync(path.join(out, 'after.png')).toString('base64'));
  assert.deepEqual([after.width, after.height], [800, 600]);
  assert.match(run.stdout.toString(), /"state":"ready"/);
  // The script's trap ended the session.
  const list = spawnSync(bridgeBin, ['call', 'list_sessions'], { env: env() });
  assert.equal(list.stdout.toString().trim(), '{"sessions":[]}');
});

test('call --json prints the tool\'s data as one JSON line that jq reads', () => {
  const made = spawnSync(bridgeBin, ['call', '--json', 'create_session', 'template=bare', 'size=320x240',
    'metadata={"job":"json test"}'], { env: env() });
  assert.equal(made.status, 0, made.stderr.toString());
  assert.equal(made.stdout.toString().split('\n').filter(Boolean).length, 1, 'one line');
  const id = JSON.parse(made.stdout.toString()).session;
  try {
    // A shell pipeline as the README shows it: call --json ... | jq.
    const piped = spawnSync('sh', ['-c', '"$BIN" call --json session_info session="$ID" | jq -ce \'{session, size, job: .metadata.job}\''],
      { env: { ...env(), BIN: bridgeBin, ID: id } });
    assert.equal(piped.status, 0, piped.stderr.toString());
    assert.deepEqual(JSON.parse(piped.stdout.toString()), { session: id, size: '320x240', job: 'json test' });
    // Without --json the text is the same JSON; tools without data give {"text": ...}.
    const text = spawnSync(bridgeBin, ['call', 'screen_size', `session=${id}`], { env: env() });
    assert.deepEqual(JSON.parse(text.stdout.toString()), { width: 320, height: 240 });
    const moved = spawnSync(bridgeBin, ['call', '--json', 'move_mouse', `session=${id}`, 'x=5', 'y=6'], { env: env() });
    assert.equal(moved.status, 0, moved.stderr.toString());
    assert.deepEqual(JSON.parse(moved.stdout.toString()), { text: 'Moved the pointer.' });
    // -o still writes the image next to the JSON line.
    const png = path.join(out, 'json.png');
    const shot = spawnSync(bridgeBin, ['call', '--json', 'move_mouse', `session=${id}`, 'x=7', 'y=8', 'screenshot=true', '-o', png], { env: env() });
    assert.equal(shot.status, 0, shot.stderr.toString());
    assert.match(JSON.parse(shot.stdout.toString()).text, /^Moved the pointer\.\nScreenshot 320x240/);
    assert.deepEqual([decodePng(fs.readFileSync(png).toString('base64')).width], [320]);
    // A tool error: exit 1, the message on stderr, nothing on stdout.
    const failed = spawnSync(bridgeBin, ['call', '--json', 'session_info', 'session=nope'], { env: env() });
    assert.equal(failed.status, 1);
    assert.equal(failed.stdout.toString(), '');
    assert.match(failed.stderr.toString(), /no session 'nope'/);
  } finally {
    spawnSync(bridgeBin, ['call', 'kill_session', `session=${id}`], { env: env() });
  }
});

test('call exits non-zero with the message on tool errors, bad usage and no daemon', () => {
  const toolError = spawnSync(bridgeBin, ['call', 'click', 'x=1', 'y=1'], { env: env() });
  assert.equal(toolError.status, 1);
  assert.match(toolError.stderr.toString(), /there is no session/);
  const unknown = spawnSync(bridgeBin, ['call', 'teleport'], { env: env() });
  assert.equal(unknown.status, 2);
  assert.match(unknown.stderr.toString(), /Unknown tool: teleport/);
  const usage = spawnSync(bridgeBin, ['call', 'click', 'novalue'], { env: env() });
  assert.equal(usage.status, 2);
  assert.match(usage.stderr.toString(), /not KEY=VALUE/);
  const down = spawnSync(bridgeBin, ['call', '--url', 'http://127.0.0.1:9', 'list_sessions'], { env: env() });
  assert.equal(down.status, 2);
  assert.match(down.stderr.toString(), /cannot reach lizard-bridge at http:\/\/127\.0\.0\.1:9/);
  const wrongKey = spawnSync(bridgeBin, ['call', 'list_sessions'], { env: { ...env(), LIZARD_API_KEY: 'wrong-key-wrong-key' } });
  assert.equal(wrongKey.status, 2);
  assert.match(wrongKey.stderr.toString(), /answered 401/);
});

test('call exec streams the command\'s output as it comes and exits with its exit code', async () => {
  const created = spawnSync(bridgeBin, ['call', 'create_session', 'template=bare', 'size=320x240'], { env: env() });
  assert.equal(created.status, 0, created.stderr.toString());
  const session = JSON.parse(created.stdout.toString()).session;
  try {
    const run = spawnSync(bridgeBin, ['call', 'exec', `session=${session}`, "command=printf 'out ✓\\n'; printf 'err\\n' >&2; exit 7"], { env: env() });
    assert.equal(run.stdout.toString(), 'out ✓\n');
    assert.equal(run.stderr.toString(), 'err\n');
    assert.equal(run.status, 7);
    // The first line is printed while the command still runs.
    const { spawn } = await import('node:child_process');
    const child = spawn(bridgeBin, ['call', 'exec', `session=${session}`, 'command=echo first; sleep 4; echo second'], { env: env() });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
    let finished = false;
    exited.then(() => (finished = true));
    assert.ok(await waitFor(() => out === 'first\n', { timeout: 3500 }), `stdout so far: ${JSON.stringify(out)}`);
    assert.equal(finished, false, 'first arrived before the command ended');
    assert.equal(await exited, 0);
    assert.equal(out, 'first\nsecond\n');
  } finally {
    spawnSync(bridgeBin, ['call', 'kill_session', `session=${session}`], { env: env() });
  }
});
