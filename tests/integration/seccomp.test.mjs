// SPDX-License-Identifier: MIT
// The system call filter every sandbox runs under (sandbox/seccomp.c), seen
// from inside a session: a probe compiled there (seccomp-probe.c) makes the
// refused calls, with arguments the kernel alone would answer otherwise, and
// calls of the same kinds that stay allowed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectBridge, textOf } from '../lib/mcp.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const probe = '/tmp/seccomp-probe';

// What the filter refuses, each with EPERM.
const refused = [
  'add_key', 'request_key', 'keyctl', 'perf_event_open', 'io_uring_setup', 'io_uring_enter',
  'io_uring_register', 'bpf', 'userfaultfd', 'kexec_load', 'kexec_file_load', 'init_module',
  'finit_module', 'delete_module', 'open_by_handle_at', 'name_to_handle_at', 'iopl', 'ioperm',
  'swapon', 'swapoff', 'reboot', 'acct', 'settimeofday', 'clock_settime', 'clock_adjtime',
  'adjtimex', 'quotactl', 'quotactl_fd', 'syslog', 'lookup_dcookie', 'nfsservctl', 'uselib',
  'personality(ADDR_NO_RANDOMIZE)', 'personality(READ_IMPLIES_EXEC)',
  'socket(AF_NETLINK,NETLINK_NETFILTER)', 'socket(AF_NETLINK,NETLINK_XFRM)',
  'socket(AF_INET,SOCK_RAW)', 'socket(AF_INET6,SOCK_RAW)', 'socket(AF_INET,SOCK_PACKET)',
  'socket(AF_PACKET)', 'socket(AF_VSOCK)', 'socket(AF_ALG)', 'socket(AF_KEY)',
  'socketpair(AF_VSOCK)', 'setsockopt(IPT_SO_SET_REPLACE)', 'setsockopt(IP6T_SO_SET_REPLACE)',
];
// The same kinds of call, allowed: without them a broken sandbox would pass.
const allowed = [
  'socket(AF_INET,SOCK_DGRAM)', 'socket(AF_INET6,SOCK_STREAM)', 'socket(AF_UNIX)',
  'socket(AF_NETLINK,NETLINK_ROUTE)', 'socketpair(AF_UNIX)', 'setsockopt(IP_TOS)',
  'personality(query)', 'personality(PER_LINUX32)', 'clock_gettime', 'unshare(CLONE_NEWUSER)',
];

let bridge;
let skipReason = null;

// Whether this kernel runs 32-bit system calls at all, tried on the host
// without any filter: a kernel built without them, or one that turns them
// off at run time (some virtual machines do), faults on int 0x80 with
// SIGSEGV before any filter could see the call.
function kernelRunsIa32(source) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lizard-seccomp-host-'));
  try {
    fs.writeFileSync(path.join(dir, 'probe.c'), source);
    const cc = spawnSync('cc', ['-O1', '-o', path.join(dir, 'probe'), path.join(dir, 'probe.c')], { timeout: 60000 });
    if (cc.status !== 0) return { runs: true, why: 'the probe does not build on the host' };
    const r = spawnSync(path.join(dir, 'probe'), ['ia32'], { timeout: 10000 });
    if (r.status === 0 && /^ia32 getpid \d+$/m.test(r.stdout.toString())) return { runs: true };
    return { runs: false, why: `int 0x80 on the host, with no filter, ended with ${r.signal ?? `status ${r.status}`}` };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

before(async () => {
  bridge = await connectBridge(['--size', '320x240']);
  // The probe's numbers and its int 0x80 are x86-64's.
  if (process.arch !== 'x64') {
    skipReason = `the probe is written for x86-64, this is ${process.arch}`;
    return;
  }
  const source = fs.readFileSync(path.join(here, 'seccomp-probe.c'), 'utf8');
  const written = await bridge.call('write_file', { path: `${probe}.c`, text: source });
  assert.equal(written.isError, false, textOf(written));
  const built = (await bridge.call('exec', { argv: ['sh', '-c', `command -v cc >/dev/null || exit 127; cc -O1 -o ${probe} ${probe}.c`] })).structuredContent;
  if (built.exit_code === 127) skipReason = 'no C compiler (cc) in the sandbox\'s /usr to build the probe';
  else assert.equal(built.exit_code, 0, built.stderr);
});

after(async () => {
  await bridge?.close();
});

const run = async (args) => {
  const result = await bridge.call('exec', args);
  assert.equal(result.isError, false, textOf(result));
  return result.structuredContent;
};

// "NAME RESULT" lines as an object.
const outcomes = (stdout) => Object.fromEntries(stdout.trim().split('\n').map((line) => {
  const space = line.lastIndexOf(' ');
  return [line.slice(0, space), line.slice(space + 1)];
}));

for (const user of ['user', 'root']) {
  test(`every call the filter refuses fails with EPERM for ${user}, and the same kinds of call still work`, async (t) => {
    if (skipReason) return t.skip(skipReason);
    const r = await run({ argv: [probe, 'calls'], user });
    assert.equal(r.exit_code, 0, r.stderr);
    const seen = outcomes(r.stdout);
    const pick = (names) => Object.fromEntries(names.map((name) => [name, seen[name]]));
    assert.deepEqual(pick(refused), Object.fromEntries(refused.map((name) => [name, 'EPERM'])));
    assert.deepEqual(pick(allowed), Object.fromEntries(allowed.map((name) => [name, 'ok'])));
    // Exactly one filter, bubblewrap's, on the program...
    assert.equal(seen['seccomp-mode'], '2');
    assert.equal(seen['seccomp-filters'], '1');
    // ...and none on the daemon itself.
    assert.match(fs.readFileSync(`/proc/${bridge.pid}/status`, 'utf8'), /^Seccomp:\s+0$/m);
  });
}

test('a 32-bit (int 0x80) or x32 system call kills its process instead of going around the filter', async (t) => {
  if (skipReason) return t.skip(skipReason);
  const ia32 = kernelRunsIa32(fs.readFileSync(path.join(here, 'seccomp-probe.c'), 'utf8'));
  const tables = ia32.runs ? ['ia32', 'x32'] : ['x32'];
  if (!ia32.runs) t.diagnostic(`this kernel runs no 32-bit system calls (${ia32.why}): int 0x80 is not tried`);
  for (const table of tables) {
    const r = await run({ argv: [probe, table] });
    assert.equal(r.signal, 'SYS', `${table}: ${JSON.stringify(r)}`);
    assert.equal(r.stdout, '', table);
  }
  // The init that started them is still there.
  assert.equal((await run({ command: 'echo alive' })).stdout, 'alive\n');
});

test('session_info says what the filter refuses', async () => {
  const info = (await bridge.call('session_info', {})).structuredContent;
  assert.match(info.sandbox.isolation, /seccomp filter refuses \(EPERM\)/);
  assert.match(info.sandbox.isolation, /io_uring/);
  assert.match(info.sandbox.isolation, /32-bit or x32 system call kills its process/);
});
