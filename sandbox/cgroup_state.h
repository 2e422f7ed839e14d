/* SPDX-License-Identifier: MIT */
/* The structs shared by cgroup.c (one session's group) and cgroup_root.c
 * (finding the hierarchies, the daemon's directory, stale groups); types
 * only, not part of the sandbox/ public surface. */
#ifndef LIZARD_SANDBOX_CGROUP_STATE_H
#define LIZARD_SANDBOX_CGROUP_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "sandbox/name.h"
#include "sandbox/cgroup_types.h"
#include "sandbox/size.h"

/* Controller bits: what a hierarchy (v1) or the unified tree (v2) offers. */
enum {
	CGROUP_CPU = 1 << 0,     /* v1 cpu.cfs_*, v2 cpu.max */
	CGROUP_CPUACCT = 1 << 1, /* v1 cpuacct.usage; v2 has cpu.stat always */
	CGROUP_MEMORY = 1 << 2,
	CGROUP_PIDS = 1 << 3,
	CGROUP_FREEZER = 1 << 4, /* v1 freezer.state; v2 cgroup.freeze is core */
};

struct cgroup_hierarchy {
	char *dir;            /* the daemon's directory in this hierarchy */
	char *parent;         /* <own>/lizard-bridge, holding every daemon's directory */
	unsigned controllers; /* CGROUP_* bits */
};

struct sandbox_cgroup_root {
	enum sandbox_cgroup_version version;
	struct cgroup_hierarchy hierarchy[SANDBOX_CGROUP_MAX_HIERARCHIES];
	size_t count;
	unsigned controllers; /* union of the hierarchies' bits */
	char id[48];          /* "<pid>-<start time>" of this daemon */
	bool moved_into_leaf; /* v2: the daemon process lives in <dir>/.daemon */
};

struct sandbox_cgroup {
	enum sandbox_cgroup_version version;
	char name[SANDBOX_NAME_MAX + 1];
	char *dir[SANDBOX_CGROUP_MAX_HIERARCHIES];
	unsigned controllers[SANDBOX_CGROUP_MAX_HIERARCHIES];
	size_t count;
	struct sandbox_limits limits;
	bool frozen;
};

/* The leaf a v2 daemon moves itself into; not a valid session name. */
#define CGROUP_DAEMON_LEAF ".daemon"
#define CGROUP_PARENT_NAME "lizard-bridge"

#endif
