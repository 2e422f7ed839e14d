/* SPDX-License-Identifier: MIT */
/* Per-session cgroups: the limits of a sandbox size, pause and resume, usage,
 * and ending every process of a session even when some of them setsid().
 *
 * A daemon opens a sandbox_cgroup_root once. It finds the cgroups the daemon
 * itself is in (/proc/self/cgroup; on a shared host that is already nested,
 * e.g. memory:/process_api/<id>) and creates its own directory below each,
 * <own>/lizard-bridge/<pid>-<start time>/, so several daemons never meet and
 * one that died can be told apart from one that runs (its pid and start time
 * no longer match a live process). Session cgroups go one level below.
 *
 * Both kernel interfaces are supported. cgroup v2 (one unified hierarchy; the
 * daemon needs a delegated subtree, and when its own cgroup also holds the
 * daemon process it moves itself into a leaf, .daemon, because v2 allows
 * controllers only above cgroups without processes) and cgroup v1 (one
 * hierarchy per controller: cpu, cpuacct, memory, pids, freezer, mounted
 * separately or together). Under v1 a session has one directory per
 * hierarchy and every operation visits them all.
 *
 * Memory: going over the limit makes the kernel kill one process of the
 * group (the biggest), not the group (v2 memory.oom.group stays 0; v1's OOM
 * killer works per process). The count of those kills is in the usage.
 *
 * Threads: open one root per process (its directory is named after the
 * process). After open the root is only read, so threads may create and
 * destroy groups at once; remove_stale belongs at start, before sessions.
 * A sandbox_cgroup is used by one thread at a time (its session's). */
#ifndef LIZARD_SANDBOX_CGROUP_H
#define LIZARD_SANDBOX_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sandbox/name.h"
#include "util/error.h"
#include "sandbox/size.h"
#include "sandbox/cgroup_types.h"


struct sandbox_cgroup_root;
struct sandbox_cgroup;

/* Finds the hierarchies, creates the daemon's directory in each and checks
 * that it can write there. NULL with err saying why not (no cgroup mounted,
 * not root and no delegation, read-only mount...). */
struct sandbox_cgroup_root *sandbox_cgroup_root_open(enum sandbox_cgroup_version version,
						     struct error *err);

/* Removes the daemon's directories (sessions must be destroyed first; a
 * leftover is logged by the caller through err and removed at the next
 * start by sandbox_cgroup_root_remove_stale). Accepts NULL. */
void sandbox_cgroup_root_close(struct sandbox_cgroup_root *root, struct error *err);

enum sandbox_cgroup_version sandbox_cgroup_root_version(const struct sandbox_cgroup_root *root);

/* Which limits this root can enforce ("cpu memory pids freeze"), for logs. */
void sandbox_cgroup_root_describe(const struct sandbox_cgroup_root *root, char *out, size_t size);

/* Ends the processes of and removes the cgroups left by daemons that are no
 * longer running (same parent cgroup). *removed counts the sessions' cgroups
 * removed. Call once at start. */
bool sandbox_cgroup_root_remove_stale(struct sandbox_cgroup_root *root, unsigned *removed,
				      struct error *err);

/* Whether this process can create limited cgroups; why not in err. It
 * opens and closes a root, so it also creates and removes its directory. */
bool sandbox_cgroup_available(struct error *err);

/* A new cgroup named name (sandbox_name_check rules) with limits applied
 * (0 fields: no limit). A limit whose controller is missing is an error that
 * says which controller. The root must outlive the cgroup. */
struct sandbox_cgroup *sandbox_cgroup_create(struct sandbox_cgroup_root *root, const char *name,
					     const struct sandbox_limits *limits,
					     struct error *err);

/* Moves a running process (all its threads) into the cgroup. */
bool sandbox_cgroup_attach_pid(struct sandbox_cgroup *cg, pid_t pid, struct error *err);

/* For a child between fork and exec, which may only make async-signal-safe
 * calls: the parent opens the cgroup.procs files before fork, the child calls
 * sandbox_cgroup_join_self, and the parent closes its copies. The fds are
 * O_CLOEXEC, so exec drops them. Its descendants inherit the cgroup. */
struct sandbox_cgroup_join {
	int fds[SANDBOX_CGROUP_MAX_HIERARCHIES];
	size_t count;
};
bool sandbox_cgroup_join_open(struct sandbox_cgroup *cg, struct sandbox_cgroup_join *join,
			      struct error *err);
/* Async-signal-safe. 0, or the errno of the first write that failed. */
int sandbox_cgroup_join_self(const struct sandbox_cgroup_join *join);
void sandbox_cgroup_join_close(struct sandbox_cgroup_join *join);

/* Stops every process of the group and returns once the kernel says all are
 * frozen, or fails (and thaws again) after timeout_ms. Freezing a frozen
 * group, thawing a thawed one, succeed. */
bool sandbox_cgroup_freeze(struct sandbox_cgroup *cg, int timeout_ms, struct error *err);
bool sandbox_cgroup_thaw(struct sandbox_cgroup *cg, int timeout_ms, struct error *err);
bool sandbox_cgroup_is_frozen(const struct sandbox_cgroup *cg);

#define SANDBOX_USAGE_UNKNOWN UINT64_MAX

/* What the group uses; a field the kernel does not offer here is
 * SANDBOX_USAGE_UNKNOWN. */
struct sandbox_usage {
	uint64_t cpu_usec;           /* CPU time of all processes, ever */
	uint64_t cpu_throttled_usec; /* time the CPU quota held them back */
	uint64_t memory_bytes;       /* now (v1: includes page cache, as v2 does) */
	uint64_t memory_peak_bytes;
	uint64_t processes; /* processes now (not threads) */
	uint64_t tasks;     /* threads now, as the pids limit counts them */
	uint64_t oom_kills; /* processes the kernel killed for memory */
};
bool sandbox_cgroup_usage(struct sandbox_cgroup *cg, struct sandbox_usage *usage,
			  struct error *err);

const struct sandbox_limits *sandbox_cgroup_limits(const struct sandbox_cgroup *cg);
const char *sandbox_cgroup_name(const struct sandbox_cgroup *cg);
/* The group's directory in hierarchy index (0...), NULL past the last; for
 * logs, and for tests that check what is left on disk. */
const char *sandbox_cgroup_dir(const struct sandbox_cgroup *cg, size_t index);
/* The daemon's directory in hierarchy index, likewise. */
const char *sandbox_cgroup_root_dir(const struct sandbox_cgroup_root *root, size_t index);

/* SIGKILLs every process in the group, including ones that setsid() or
 * forked meanwhile, and waits until the group is empty (zombies do not count:
 * their parents reap them) or timeout_ms passed. */
bool sandbox_cgroup_kill_all(struct sandbox_cgroup *cg, int timeout_ms, struct error *err);

/* kill_all, then removes the directories and frees cg, which is gone even
 * when this fails (what was left is named in err; the next daemon start
 * removes it). Accepts NULL. */
bool sandbox_cgroup_destroy(struct sandbox_cgroup *cg, int timeout_ms, struct error *err);

/* Inside sandbox/ (cgroup_root.c's removal of dead daemons' groups): ends
 * everything in the group's directories and removes them. The group is not
 * freed. */
bool cgroup_kill_and_remove(struct sandbox_cgroup *cg, int timeout_ms, struct error *err);

#endif
