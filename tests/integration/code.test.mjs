// SPDX-License-Identifier: MIT
// run_code against real ipykernel processes in real sandboxes: state that
// survives, isolated contexts, charts that decode, errors, streaming, the
// bridge's own time limits, kernels that die or run out of memory, output
// floods, bash and javascript, envs, bounds, bad input, and sockets the
// sandbox swaps.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { tempDir } from '../lib/process.mjs';
import { startDaemon } from '../lib/bridge.mjs';
import { httpClient, textOf, imageOf } from '../lib/mcp.mjs';
import { startXvnc } from '../lib/x11.mjs';
import { decodePng, pixelAt } from '../lib/png.mjs';

let daemon, client, dataDir, session, cgroupsMissing;

before(async () => {
  dataDir = tempDir('lizard-test-code-');
  daemon = await startDaemon({ args: ['--sizes', 'small=1:256M', '--data-dir', dataDir] });
  client = await httpClient(daemon);
  cgroupsMissing = /sizes are unavailable[^\n]*/.exec(daemon.log)?.[0];
  session = (await ok('create_session', { template: 'interpreter' })).session;
});

after(async () => {
  await client?.close();
  await daemon?.stop();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

async function ok(name, args = {}) {
  const result = await client.call(name, args);
  assert.equal(result.isError, false, `${name}: ${textOf(result)}`);
  return result.structuredContent ?? textOf(result);
}

async function fails(name, args, pattern) {
  const result = await client.call(name, args);
  assert.equal(result.isError, true, `${name} should fail: ${JSON.stringify(result.structuredContent)}`);
  assert.match(textOf(result), pattern);
}

const run = (code, extra = {}) => ok('run_code', { session, code, ...extra });
const mainText = (r) => r.results.find((x) => x.is_main_result)?.text;

test('the seed example gives "42": state survives between calls', async () => {
  const setup = await run('x = 21');
  assert.equal(setup.error, null);
  const answer = await run('x * 2');
  assert.equal(answer.results[0].text, '42');
  assert.equal(answer.results[0].is_main_result, true);
  assert.ok(answer.execution_count > setup.execution_count);
  assert.equal(answer.language, 'python');
});

test('an interpreter session has its default context running when create_session returns', async () => {
  const fresh = (await ok('create_session', { template: 'interpreter' })).session;
  try {
    const { contexts } = await ok('list_code_contexts', { session: fresh });
    assert.equal(contexts.length, 1);
    assert.equal(contexts[0].is_default, true);
    const ps = await ok('exec', { session: fresh, command: 'ps -eo args' });
    assert.match(ps.stdout, /ipykernel_launcher/);
    const screen = await client.call('screenshot', { session: fresh });
    assert.equal(screen.isError, true);
    assert.match(textOf(screen), /no screen/);
  } finally {
    await ok('kill_session', { session: fresh });
  }
});

test('contexts are isolated from each other and keep their cwd', async () => {
  const other = await ok('create_code_context', { session, cwd: '/tmp' });
  assert.equal(other.language, 'python');
  assert.equal(other.cwd, '/tmp');
  try {
    const cwd = await run('import os\nos.getcwd()', { context: other.id });
    assert.equal(mainText(cwd), "'/tmp'");
    await run('only_here = 1', { context: other.id });
    const elsewhere = await run('only_here');
    assert.equal(elsewhere.error.name, 'NameError');
    const home = await run('import os\nos.getcwd()');
    assert.equal(mainText(home), "'/home/user'");
    const restarted = await ok('restart_code_context', { session, context: other.id });
    assert.equal(restarted.id, other.id);
    assert.equal((await run('only_here', { context: other.id })).error.name, 'NameError');
  } finally {
    await ok('remove_code_context', { session, context: other.id });
  }
  await fails('run_code', { session, code: '1', context: other.id }, /no code context/);
});

test('a matplotlib bar chart comes back as a PNG with the bar where it was drawn', async () => {
  // A 100x100 drawing: a red bar over the left half, white to the right.
  const chart = await run([
    'import matplotlib.pyplot as plt',
    'fig = plt.figure(figsize=(2, 2), dpi=50)',
    'ax = fig.add_axes([0, 0, 1, 1])',
    'ax.set_axis_off()',
    'ax.set_xlim(0, 2)',
    'ax.set_ylim(0, 1)',
    "ax.bar([0.5], [1], width=1, color='#ff0000')",
    'plt.show()',
  ].join('\n'));
  const shown = chart.results.filter((r) => r.png);
  assert.equal(shown.length, 1, JSON.stringify(chart.results.map((r) => Object.keys(r))));
  // The inline backend trims to the drawing with a small margin.
  const png = decodePng(shown[0].png);
  assert.ok(png.width >= 100 && png.width <= 130, `${png.width}x${png.height}`);
  const [w, h] = [png.width, png.height];
  assert.deepEqual(pixelAt(png, Math.round(w / 4), Math.round(h / 2)), [255, 0, 0]);
  assert.deepEqual(pixelAt(png, Math.round((3 * w) / 4), Math.round(h / 2)), [255, 255, 255]);
  // The same picture as image content, for a model to see.
  const raw = await client.call('run_code', { session, code: 'fig' });
  const image = imageOf(raw);
  assert.equal(image.mimeType, 'image/png');
  assert.deepEqual(pixelAt(decodePng(image.data), Math.round(w / 4), Math.round(h / 2)), [255, 0, 0]);
  assert.doesNotMatch(textOf(raw), /iVBORw0KGgo/); // no base64 in the text a model reads
});

test('a JPEG the code displays comes back as a jpeg result and as image content', async () => {
  const code = [
    'import io',
    'import matplotlib.pyplot as plt',
    'from IPython.display import Image, display',
    'fig = plt.figure(figsize=(1, 1), dpi=40)',
    "fig.patch.set_facecolor('#0000ff')",
    'buffer = io.BytesIO()',
    "fig.savefig(buffer, format='jpeg', facecolor=fig.get_facecolor())",
    'plt.close(fig)',
    "display(Image(data=buffer.getvalue(), format='jpeg'))",
  ].join('\n');
  const raw = await client.call('run_code', { session, code });
  assert.equal(raw.isError, false, textOf(raw));
  const shown = raw.structuredContent.results.filter((r) => r.jpeg);
  assert.equal(shown.length, 1, JSON.stringify(raw.structuredContent.results.map((r) => Object.keys(r))));
  const bytes = Buffer.from(shown[0].jpeg, 'base64');
  assert.deepEqual([...bytes.subarray(0, 3)], [0xff, 0xd8, 0xff]); // a JPEG's start of image
  const image = imageOf(raw);
  assert.equal(image.mimeType, 'image/jpeg');
  assert.equal(image.data, shown[0].jpeg.trim()); // the kernel's base64 ends in a newline
});

test('the interpreter has numpy and pandas, a DataFrame comes back as text and HTML, and the kernel runs as the sandbox user', async () => {
  const frame = await run("import numpy as np\nimport pandas as pd\npd.DataFrame({'a': np.arange(4)})");
  const main = frame.results.find((r) => r.is_main_result);
  assert.match(main.text, /a\n0\s+0\n1\s+1\n2\s+2\n3\s+3/);
  assert.match(main.html, /<table/);
  assert.equal(mainText(await run("int(pd.Series(np.arange(4)).sum())")), '6');
  const uid = mainText(await run('import os\nos.getuid()'));
  const user = await ok('exec', { session, command: 'id -u' });
  assert.equal(uid, user.stdout.trim());
  assert.notEqual(uid, '0');
});

test('an exception comes back as name, value and a traceback without colour codes', async () => {
  const r = await run('def f():\n    return {}["missing"]\nf()');
  assert.equal(r.error.name, 'KeyError');
  assert.equal(r.error.value, "'missing'");
  assert.match(r.error.traceback, /return \{\}\["missing"\]/);
  assert.doesNotMatch(r.error.traceback, /\x1b/);
  assert.equal(r.results.length, 0);
});

test('print output streams as progress before the result', async () => {
  const seen = [];
  let resultSeenProgress = -1;
  const result = await client.client.callTool(
    { name: 'run_code', arguments: { session, code: "import time\nprint('first', flush=True)\ntime.sleep(1)\nprint('second')" } },
    undefined,
    { onprogress: (p) => seen.push(p.message), timeout: 30000 },
  ).then((r) => {
    resultSeenProgress = seen.length;
    return r;
  });
  assert.equal(result.isError, false);
  assert.ok(resultSeenProgress >= 2, JSON.stringify(seen));
  assert.deepEqual(seen, ['stdout: first\n', 'stdout: second\n']);
  assert.deepEqual(result.structuredContent.logs.stdout, ['first\n', 'second\n']);
});

test('the text a model reads shows a long log\'s end; the structured result has all of it', async () => {
  const raw = await client.call('run_code', { session, code: "for i in range(20000):\n    print(f'line {i:05d}')" });
  const all = raw.structuredContent.logs.stdout.join('');
  assert.equal(all.length, 20000 * 11);
  const shown = JSON.parse(textOf(raw)).logs.stdout;
  assert.match(shown[0], /^\[\d+ bytes before this are in the structured result\]\n$/);
  const tail = shown.slice(1).join('');
  assert.ok(tail.length <= 16 * 1024 && tail.length > 15 * 1024, `${tail.length}`);
  assert.ok(all.endsWith(tail));
  assert.equal(Number(/\d+/.exec(shown[0])[0]) + tail.length, all.length);
});

test('the time limit interrupts an endless loop, and its state survives', async () => {
  await run("kept = 'still here'");
  const loop = await run('while True:\n    pass', { timeout_ms: 2000 });
  assert.equal(loop.timed_out, true);
  assert.equal(loop.restarted, false);
  assert.equal(loop.error.name, 'KeyboardInterrupt');
  assert.match(loop.note, /interrupted; the context's state is kept/);
  assert.equal(mainText(await run('kept')), "'still here'");
});

test('a loop that ignores the interrupt is restarted, and the result says its state is gone', async () => {
  await run("kept = 'still here'");
  const stuck = await run('import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass', { timeout_ms: 2000 });
  assert.equal(stuck.timed_out, true);
  assert.equal(stuck.restarted, true);
  assert.match(stuck.note, /restarted: the context's state is gone/);
  assert.equal((await run('kept')).error.name, 'NameError');
  assert.equal(mainText(await run('1 + 1')), '2');
});

test('a kernel that exits gives a clear error, then the next call works', async () => {
  await run('before = 1');
  const died = await run('import os\nos._exit(1)');
  assert.equal(died.error.name, 'KernelDied');
  assert.match(died.error.value, /exited with status 1.*state is gone/);
  assert.equal(died.restarted, true);
  assert.equal(mainText(await run('1 + 1')), '2');
  assert.equal((await run('before')).error.name, 'NameError');
});

test('an allocation past a small session\'s memory limit gives a clear error, then the next call works', async (t) => {
  if (cgroupsMissing) return t.skip(`no cgroups here: ${cgroupsMissing}`);
  const small = (await ok('create_session', { template: 'interpreter', size: 'small' })).session;
  try {
    const hog = await ok('run_code', { session: small, code: "b = b'x' * (600 << 20)\nlen(b)" });
    assert.equal(hog.error.name, 'KernelDied');
    assert.match(hog.error.value, /out-of-memory killer.*size small/);
    const next = await ok('run_code', { session: small, code: '1 + 1' });
    assert.equal(mainText(next), '2');
    assert.equal((await ok('session_info', { session: small })).state, 'ready');
  } finally {
    await ok('kill_session', { session: small });
  }
});

test('100 MB printed in one call: a bounded result, and the session and daemon carry on', async () => {
  const before = daemon.rssKiB();
  const flood = await run('import sys\nfor i in range(100):\n    print("x" * (1 << 20), flush=True)', { timeout_ms: 120000 });
  const kept = flood.logs.stdout.join('').length;
  assert.ok(kept <= 1 << 20, `kept ${kept} bytes`);
  assert.ok(kept + flood.truncated.stdout_bytes >= 100 << 20 || flood.truncated.output_lost,
    JSON.stringify(flood.truncated));
  assert.ok(flood.logs.stdout.at(-1).length > 0);
  // AddressSanitizer keeps freed memory in quarantine: the normal build
  // measures this.
  if (!process.env.ASAN_OPTIONS)
    assert.ok(daemon.rssKiB() - before < 64 * 1024, `daemon grew from ${before} to ${daemon.rssKiB()} KiB`);
  // All at once (one message over the bridge's 16 MiB): said, not hidden.
  const before_drops = (await ok('list_code_contexts', { session })).contexts.find((c) => c.is_default).dropped;
  const burst = await run("import sys\nsys.stdout.write('y' * (40 << 20))\n'after'");
  assert.equal(burst.truncated.output_lost, true);
  assert.match(burst.note, /never arrived/);
  const after_drops = (await ok('list_code_contexts', { session })).contexts.find((c) => c.is_default).dropped;
  assert.equal(after_drops.oversized, before_drops.oversized + 1);
  assert.equal(after_drops.calls_with_lost_output, before_drops.calls_with_lost_output + 1);
  assert.equal(after_drops.forged, 0);
  assert.equal(mainText(await run('1 + 1')), '2');
  const printed = await run("print('end')");
  assert.deepEqual(printed.logs.stdout, ['end\n']);
});

test('bash and javascript run each call as a fresh process, with exit status and stderr', async () => {
  const set = await run('X=1; echo "set $X"', { language: 'bash' });
  assert.deepEqual(set.logs.stdout, ['set 1\n']);
  assert.equal(set.context, null);
  assert.equal(set.exit_code, 0);
  assert.equal((await run('echo "${X:-unset}"', { language: 'bash' })).logs.stdout.join(''), 'unset\n');
  const failed = await run('echo oops >&2; exit 3', { language: 'bash' });
  assert.equal(failed.exit_code, 3);
  assert.deepEqual(failed.logs.stderr, ['oops\n']);
  assert.equal(failed.error.name, 'ExitError');
  await run('globalThis.shared = 1; console.log(shared)', { language: 'javascript' });
  assert.equal((await run('console.log(typeof shared)', { language: 'javascript' })).logs.stdout.join(''), 'undefined\n');
  const thrown = await run("throw new Error('boom')", { language: 'javascript' });
  assert.equal(thrown.exit_code, 1);
  assert.match(thrown.logs.stderr.join(''), /Error: boom/);
});

test('envs with quotes, newlines and $ reach the code exactly, for that call only', async () => {
  const value = 'q"u\'o\nte $HOME `x` \\ end';
  const py = await run('import os, json\nprint(json.dumps(os.environ["V"]))', { envs: { V: value } });
  assert.equal(JSON.parse(py.logs.stdout.join('')), value);
  assert.equal(mainText(await run('import os\nos.environ.get("V", "gone")')), "'gone'");
  const sh = await run('printf %s "$V"', { language: 'bash', envs: { V: value } });
  assert.equal(sh.logs.stdout.join(''), value);
  const js = await run('process.stdout.write(process.env.V)', { language: 'javascript', envs: { V: value } });
  assert.equal(js.logs.stdout.join(''), value);
});

test('bounds: at most 8 contexts a session, and at most two calls waiting for one', async () => {
  const made = [];
  try {
    const { contexts } = await ok('list_code_contexts', { session });
    for (let i = contexts.length; i < 8; i++)
      made.push((await ok('create_code_context', { session, language: 'bash' })).id);
    await fails('create_code_context', { session, language: 'bash' }, /8 code contexts, the most/);
  } finally {
    for (const id of made) await ok('remove_code_context', { session, context: id });
  }
  // A rich output over 3 MiB is left out and counted; the rest comes.
  const big = await run("from IPython.display import display, HTML\ndisplay(HTML('z' * (4 << 20)))\ndisplay(HTML('small'))\n'end'");
  assert.equal(big.truncated.results, 1);
  assert.ok(big.truncated.result_bytes >= 4 << 20);
  assert.deepEqual(big.results.map((r) => r.html ?? r.text), ['small', "'end'"]);
  // Two of 2.5 MiB fit; the third goes over the 6 MiB of all of them.
  const many = await run("from IPython.display import display, HTML\nfor i in range(3):\n    display(HTML(str(i) * (5 << 19)))");
  assert.equal(many.results.length, 2);
  assert.equal(many.truncated.results, 1);
  // One runs, two wait in order, a fourth is refused at once.
  const first = client.call('run_code', { session, code: 'import time\ntime.sleep(2)\n"first"' });
  await new Promise((r) => setTimeout(r, 300));
  const second = client.call('run_code', { session, code: '"second"' });
  await new Promise((r) => setTimeout(r, 150));
  const third = client.call('run_code', { session, code: '"third"' });
  await new Promise((r) => setTimeout(r, 150));
  const refused = await client.call('run_code', { session, code: '"fourth"' });
  assert.equal(refused.isError, true);
  assert.match(textOf(refused), /2 calls waiting/);
  const done = await Promise.all([first, second, third]);
  assert.deepEqual(done.map((r) => mainText(r.structuredContent)), ["'first'", "'second'", "'third'"]);
  const counts = done.map((r) => r.structuredContent.execution_count);
  assert.ok(counts[0] < counts[1] && counts[1] < counts[2], JSON.stringify(counts));
});

test('bad input gets a clear error, and the context keeps working', async () => {
  await run('alive = True');
  await fails('run_code', { session, code: '' }, /code is empty/);
  await fails('run_code', { session, code: '1', language: 'ruby' }, /language/);
  await fails('run_code', { session, code: '1', context: 'ctx-nothere' }, /no code context ctx-nothere/);
  const { contexts } = await ok('list_code_contexts', { session });
  await fails('run_code', { session, code: '1', language: 'python', context: contexts[0].id }, /not both/);
  await fails('create_code_context', { session, cwd: 'relative' }, /absolute path/);
  assert.equal(mainText(await run('alive')), 'True');
});

test('run_code works in a desktop session, and its charts come back as PNGs', async () => {
  const desktop = (await ok('create_session', { template: 'desktop' })).session;
  try {
    const chart = await ok('run_code', { session: desktop, code: 'import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()' });
    assert.equal(chart.results.filter((r) => r.png).length, 1);
    assert.equal(decodePng(chart.results.find((r) => r.png).png).width > 0, true);
  } finally {
    await ok('kill_session', { session: desktop });
  }
});

test('run_code works in a bare session (an X server, no window manager)', async () => {
  const bare = (await ok('create_session', { template: 'bare' })).session;
  try {
    await ok('run_code', { session: bare, code: 'y = 6' });
    assert.equal(mainText(await ok('run_code', { session: bare, code: 'y * 7' })), '42');
  } finally {
    await ok('kill_session', { session: bare });
  }
});

test('an attached VNC server is not a sandbox: run_code says so', async () => {
  const xvnc = await startXvnc({ width: 320, height: 240 });
  try {
    const attached = (await ok('create_session', { vnc: xvnc.url })).session;
    await fails('run_code', { session: attached, code: '1' }, /attached to a VNC server.*needs a sandbox/);
    await ok('kill_session', { session: attached });
  } finally {
    await xvnc.stop();
  }
});

test('kernel sockets the sandbox swaps for links to a host socket are never followed', async () => {
  // A host socket only the daemon could reach; counts who connects.
  const dir = tempDir('lizard-test-planted-');
  fs.chmodSync(dir, 0o755);
  const hostSocket = path.join(dir, 'host.sock');
  let connections = 0;
  const server = net.createServer((c) => {
    connections++;
    c.destroy();
  });
  await new Promise((resolve) => server.listen(hostSocket, resolve));
  // And a host file where the restart writes its connection file.
  const hostFile = path.join(dir, 'host-file');
  fs.writeFileSync(hostFile, 'the host\'s own\n', { mode: 0o600 });
  try {
    const { contexts } = await ok('list_code_contexts', { session });
    const id = contexts.find((c) => c.is_default).id;
    await run('planted = 1');
    // Swap the running kernel's sockets, and plant the names its restart
    // will use, all as links to the host socket.
    const plant = await ok('exec', {
      session,
      command: `cd /run/lizard && for f in kernel-${id}-*-[1-5]; do mv "$f" "$f.real"; ln -s ${hostSocket} "$f"; done; ` +
        `g=$(ls kernel-${id}-*.json | sed 's/.*-\\([0-9]*\\)\\.json/\\1/' | sort -n | tail -1); ` +
        `for p in 1 2 3 4 5; do ln -s ${hostSocket} kernel-${id}-$((g + 1))-$p; done; ` +
        `ln -s ${hostFile} kernel-${id}-$((g + 1)).json; ls -l`,
    });
    assert.match(plant.stdout, /host\.sock/);
    assert.equal(mainText(await run('planted')), '1');
    const restarted = await client.call('restart_code_context', { session, context: id });
    // The restart either binds over the links or fails to; it never dials them.
    if (!restarted.isError) assert.equal(mainText(await run('1 + 1')), '2');
    assert.equal(connections, 0);
    assert.equal(fs.readFileSync(hostFile, 'utf8'), 'the host\'s own\n');
    assert.equal(fs.lstatSync(hostFile).mode & 0o777, 0o600);
  } finally {
    server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
