/* SPDX-License-Identifier: MIT */
/* The local sandbox: a private set of Linux namespaces (user, PID, mount,
 * IPC, UTS and network) made with bubblewrap, in which every program of a
 * session runs; with a network, slirp4netns connects it to the outside
 * without the host's loopback (network.h). Inside it the host's system directories are
 * read-only; HOME, /tmp and /workspace are its own; nothing else of the
 * host is there. Its programs run as an unprivileged user, mapped to a
 * host uid of the sandbox's own when the daemon is root. They all start
 * through the sandbox's init (init.c), so they all end with it: when the
 * sandbox is destroyed, when the daemon exits, or when the daemon is
 * killed, including programs that called setsid or forked twice.
 *
 * This is isolation on a shared kernel, not a virtual machine: a kernel
 * bug reachable from inside is a way out.
 *
 * Threads: any thread may start, wait for and kill programs concurrently;
 * the first sandbox_create must come from a thread that lives as long as
 * the sandbox (the kernel ties the death signal to the creating thread). */
#ifndef LIZARD_SANDBOX_H
#define LIZARD_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sandbox/inside.h"
#include "util/error.h"

struct sandbox;
struct sandbox_cgroup;
struct sandbox_uid_range;


struct sandbox_options {
	bool network;            /* true: out through slirp4netns; false: loopback only */
	const char *const *envs; /* NAME=value for every program; NULL-terminated or NULL */
	/* Every process of the sandbox runs in this cgroup (bwrap joins it
	 * between fork and exec, so nothing escapes it); NULL: none. */
	struct sandbox_cgroup *cgroup;
	/* A host directory (a volume) bound read-write at /workspace instead
	 * of a fresh one; its files are given to the sandbox's host uid. */
	const char *workspace_dir;
	/* A volume's disk image (disk.h), mounted at /workspace instead; its
	 * files are given to the sandbox's host uid. At most one of the two. */
	const char *workspace_image;
	/* HOME, /tmp, /workspace and the run directory on a disk of this size
	 * (disk.h; the daemon must be able to make disks); 0: on the host's
	 * filesystem, unbounded. */
	uint64_t disk_bytes;
	/* Where a root daemon takes the sandbox's host uid from (uid.h);
	 * NULL: SANDBOX_UID_RANGE_DEFAULT. */
	const struct sandbox_uid_range *uid_range;
	/* A snapshot's directory (snapshot.h) whose files the sandbox starts
	 * with; NULL: none. Needs a writable root. */
	const char *restore_dir;
	/* A whole root filesystem (a Debian release's, made by mmdebstrap,
	 * owned by the host's root) to start from instead of the host's
	 * system directories; NULL: the host's. A restore_dir that rests on
	 * one names it itself (snapshot.h). Needs a writable root. */
	const char *image_dir;
};

/* Moves an idle sandbox, made without a cgroup (its processes: bwrap,
 * the init, slirp4netns; none of its programs runs yet), into cg, whose
 * limits apply from then on: for a sandbox started ahead (pool.h). */
bool sandbox_adopt_cgroup(struct sandbox *sandbox, struct sandbox_cgroup *cg, struct error *err);

/* Failures fill err (error.h) with a sentence that says what failed and,
 * where it helps, what would work.
 *
 * Says what is missing when the sandbox cannot be made (no bwrap, user
 * namespaces refused); it never falls back to running unsandboxed. */
struct sandbox *sandbox_create(const struct sandbox_options *options, struct error *err);
/* Kills every process in the sandbox and removes its private directory,
 * doing all of it whatever fails; false with the first failure in err
 * (may be NULL). NULL is fine. */
bool sandbox_destroy(struct sandbox *sandbox, struct error *err);
/* Kills every process in the sandbox now, from any thread, while others
 * may still use it: what they wait on ends, and what they start fails.
 * The rest goes with sandbox_destroy. NULL is fine. */
void sandbox_kill(struct sandbox *sandbox);
/* sandbox_kill, then waits for the sandbox's processes and its network
 * helper to be gone (2 s at most, then they are killed harder): for a
 * sandbox that failed and stays known a while. Not with sandbox_destroy
 * at the same time. NULL is fine. */
void sandbox_end(struct sandbox *sandbox);
/* A descriptor that polls POLLHUP once the sandbox's init is gone. */
int sandbox_watch_fd(const struct sandbox *sandbox);

/* Where HOME, the run directory and /workspace are in the programs' view
 * (the fixed paths above when isolated). */
const char *sandbox_inside_home(const struct sandbox *sandbox);
const char *sandbox_inside_run_dir(const struct sandbox *sandbox);
/* Adds or replaces NAME=value for programs started from now on. */
bool sandbox_set_env(struct sandbox *sandbox, const char *name, const char *value);

/* The host directory that appears inside as SANDBOX_RUN_DIR (sockets, the
 * X cookie), for messages and for people looking from the host. The
 * sandbox's user owns it and may put links, FIFOs or other sockets there
 * at any time, so the daemon never opens a path in it: the calls below
 * work on the descriptor taken when it was made and follow no link. */
const char *sandbox_run_dir(const struct sandbox *sandbox);
/* Creates name there (0600, given to the sandbox's user) for the daemon to
 * write; an existing name is an error. The descriptor, or -1 with err. */
int sandbox_run_create_file(struct sandbox *sandbox, const char *name, struct error *err);
/* Removes the entry name there (a link itself, never what it names);
 * false with err when it could not. */
bool sandbox_run_remove(struct sandbox *sandbox, const char *name, struct error *err);
/* Whether name is there and of type (S_IFSOCK, S_IFREG, ...), itself and
 * not through a link. */
bool sandbox_run_has(struct sandbox *sandbox, const char *name, mode_t type);
/* An O_PATH descriptor of the socket name, checked to be a socket owned by
 * the sandbox's user (what a program of the sandbox made); -1 with err
 * otherwise. Connect through "/proc/self/fd/N": it names this inode, so
 * whatever is renamed or linked there later changes nothing. */
int sandbox_run_open_socket(struct sandbox *sandbox, const char *name, struct error *err);
/* Whether programs are isolated (false only in the benchmark's
 * comparison mode, LIZARD_BENCH_UNSANDBOXED=1). */
bool sandbox_isolated(const struct sandbox *sandbox);
bool sandbox_has_network(const struct sandbox *sandbox);
/* The last line programs wrote to the sandbox's log (their default
 * stdout and stderr), for error messages. */
void sandbox_last_log_line(const struct sandbox *sandbox, char *out, size_t size);
/* Bytes in use and in all on the sandbox's disk; false without one. */
bool sandbox_disk_use(const struct sandbox *sandbox, uint64_t *used, uint64_t *total);
/* A sentence on what is isolated and what is not. */
const char *sandbox_describe_isolation(const struct sandbox *sandbox);

/* Whether a daemon that is not root gives its sessions writable roots of
 * fuse-overlayfs inside each sandbox (the default) or read-only ones
 * (--no-fuse-root); before the first session. */
void sandbox_allow_fuse_root(bool allow);

/* Removes a directory of the daemon's that holds a sandbox's files (a
 * snapshot, a template's build) and all below it, never through a link:
 * as the daemon, and when files there are its subordinate ids' (subid.h),
 * which the daemon's uid may not remove, as root of a namespace that maps
 * them. */
bool sandbox_remove_files(const char *path, struct error *err);

#endif
