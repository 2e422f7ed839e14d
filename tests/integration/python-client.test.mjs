// SPDX-License-Identifier: MIT
// The Python client (clients/python) and the seed's examples, run by their
// own harness (tests/python/run.py: a real daemon, a real Bridge.local(),
// mypy --strict, an offline pip install), reported here one node test per
// Python test so that scripts/test.sh counts them and SKIPs keep their
// reasons. The harness runs once, before the tests are declared; it has a
// deadline of its own and is killed past it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const python = process.env.PYTHON || 'python3';
const HARNESS_SECONDS = 900;

function runHarness() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lizard-py-node-'));
  const report = path.join(dir, 'report.jsonl');
  return new Promise((resolve) => {
    const child = spawn(python, [path.join(root, 'tests/python/run.py'), '--report', report], {
      cwd: root,
      env: { ...process.env, LIZARD_BRIDGE_BIN: process.env.LIZARD_BRIDGE_BIN || path.join(root, 'build/lizard-bridge') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const keep = (d) => {
      output += d;
      if (process.env.LIZARD_TEST_VERBOSE) process.stderr.write(d);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => child.kill('SIGKILL'), HARNESS_SECONDS * 1000);
    child.on('error', (e) => (output += `\ncannot run ${python}: ${e.message}`));
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      let records = [];
      try {
        records = fs.readFileSync(report, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
      } catch {}
      fs.rmSync(dir, { recursive: true, force: true });
      resolve({ code, signal, output, records });
    });
  });
}

const run = await runHarness();

for (const record of run.records) {
  test(`python: ${record.name}`, (t) => {
    if (record.status === 'skip') return t.skip(record.details);
    assert.equal(record.status, 'pass', record.details);
  });
}

test('python: the harness finished and reported', () => {
  assert.ok(run.records.length > 0, `no results from tests/python/run.py (exit ${run.code}, ${run.signal}):\n${run.output}`);
  const failed = run.records.filter((r) => r.status === 'fail').length;
  assert.equal(run.code === 0, failed === 0, `exit ${run.code} with ${failed} failures:\n${run.output.slice(-4000)}`);
  assert.match(run.output, /python client: \d+ passed, \d+ failed, \d+ skipped in/);
});
