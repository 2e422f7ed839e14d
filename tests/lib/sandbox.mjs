// SPDX-License-Identifier: MIT
// A local session's sandbox as the host sees it, for tests that check
// what it holds from outside: its PID namespace and the host processes in
// it, its private directory on the host, and a file inside it read
// through the session's own read_file.
import fs from 'node:fs';
import path from 'node:path';
import { waitFor } from './process.mjs';

function readLinkOrNull(file) {
  try {
    return fs.readlinkSync(file);
  } catch {
    return null;
  }
}

// The PID namespace (as /proc/PID/ns/pid reads) of a local session's
// sandbox, found by its private directory (or its run directory): its
// processes' mount table names it as the source of /home/user.
export function sandboxPidNamespace(dir) {
  const own = readLinkOrNull('/proc/self/ns/pid');
  const privateDir = path.basename(dir) === 'run' ? path.dirname(dir) : dir;
  // A session with a disk: HOME is the root /home of the device mounted at
  // privateDir. Without: the bind's root is its path, relative to its
  // filesystem's root as the kernel shows it.
  const disk = fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n')
    .map((line) => line.split(' ')).find((f) => f[4] === privateDir && f[3] === '/');
  const matches = disk
    ? (info) => info.split('\n').some((line) => {
      const f = line.split(' ');
      return f[2] === disk[2] && f[3] === '/home' && f[4] === '/home/user';
    })
    : (info) => info.includes(`/${path.basename(path.dirname(privateDir))}/${path.basename(privateDir)}/home /home/user `);
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const namespace = readLinkOrNull(`/proc/${pid}/ns/pid`);
      if (namespace && namespace !== own && matches(fs.readFileSync(`/proc/${pid}/mountinfo`, 'utf8'))) {
        return namespace;
      }
    } catch {}
  }
  return null;
}

function field(pid, name) {
  try {
    return fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`^${name}:\\s+(.*)$`, 'm'))?.[1];
  } catch {
    return undefined;
  }
}

// Every host process in that PID namespace, and in the sandbox's PID
// namespace that holds it when the programs' is nested (a FUSE root's:
// its init and servers live one level up, sandbox/root_fuse.h).
export function processesInPidNamespace(namespace) {
  const all = fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  const inside = all.filter((p) => readLinkOrNull(`/proc/${p}/ns/pid`) === namespace);
  const init = inside.find((p) => field(p, 'NSpid')?.split(/\s+/).at(-1) === '1');
  const enclosing = init && readLinkOrNull(`/proc/${field(init, 'PPid')}/ns/pid`);
  const outer = enclosing && enclosing !== namespace && enclosing !== readLinkOrNull('/proc/self/ns/pid')
    ? all.filter((p) => readLinkOrNull(`/proc/${p}/ns/pid`) === enclosing)
    : [];
  return [...outer, ...inside].map(Number);
}

// A local session's sandbox as the host sees it: its processes (its PID
// namespace, which its root reads inside) and its private directory on the
// host (the source of its /home/user in its mount table).
export async function sandboxOf(client, session) {
  const r = await client.call('exec', { session, user: 'root', command: 'readlink /proc/self/ns/pid; grep " /home/user " /proc/self/mountinfo' });
  const [namespace, mount] = r.structuredContent.stdout.split('\n');
  const [, , device, root] = mount.split(' ');
  // A session with a disk has HOME on its own filesystem: the host mounts
  // that (same device) somewhere, and HOME is the bind's root below it.
  const host = fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n')
    .map((line) => line.split(' ')).find((f) => f[2] === device && f[3] === '/' && f.includes('ext4'));
  let home = host ? path.join(host[4], root) : root;
  // Otherwise the bind's root is its path on its filesystem: the host path
  // when the private directory is on the root filesystem, else below /tmp.
  if (!host && !fs.existsSync(home)) home = path.join('/tmp', home);
  return { namespace, dir: path.dirname(home), processes: () => processesInPidNamespace(namespace) };
}

// What a file in a session's sandbox holds once it has at least `length`
// characters (read with read_file), or null at the deadline.
export function sandboxText(client, session, file, length, options) {
  return waitFor(async () => {
    const r = await client.call('read_file', { session, path: file });
    const text = r.isError ? '' : r.structuredContent.text ?? '';
    return text.length >= length ? text : null;
  }, options);
}

// The bridge's janitor: the process it forks at start to clean up after it.
export const janitorOf = (pid) => fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p)).map(Number).find((p) => {
  try {
    const status = fs.readFileSync(`/proc/${p}/status`, 'utf8');
    return /^Name:\s+lizard-janitor$/m.test(status) && new RegExp(`^PPid:\\s+${pid}$`, 'm').test(status);
  } catch {
    return false;
  }
});

// Root inside a root daemon's sandbox stops the session's init with
// ptrace (the system call filter allows it: debuggers need it) and holds
// it stopped: run with exec as user root, not awaited; it ends with the
// session. stopInit starts it and resolves once the host sees the init
// stopped (null if it never is), with the exec's promise as `tracer`.
const STOP_INIT = `python3 -c "
import ctypes, os, time
def comm(p):
    try:
        return open('/proc/%s/comm' % p).read().strip()
    except OSError:
        return ''
init = next(int(p) for p in os.listdir('/proc') if p.isdigit() and comm(p) == 'lizard-init')
libc = ctypes.CDLL(None, use_errno=True)
assert libc.ptrace(16, init, 0, 0) == 0, os.strerror(ctypes.get_errno())
os.waitpid(init, 0x40000000)
time.sleep(600)
"`;

export async function stopInit(client, session) {
  const { processes } = await sandboxOf(client, session);
  const tracer = client.client
    .callTool({ name: 'exec', arguments: { session, user: 'root', command: STOP_INIT, timeout_ms: 600000 } }, undefined, { timeout: 700000 })
    .catch(() => null);
  const stopped = await waitFor(() => processes().some((pid) => {
    try {
      const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
      return /^Name:\s+lizard-init$/m.test(status) && /^State:\s+t /m.test(status);
    } catch {
      return false;
    }
  }), { timeout: 10000 });
  return stopped ? { tracer } : null;
}
