/* Shared by cgroup.c (one session's group) and cgroup_root.c (finding the
 * hierarchies, the daemon's directory, stale groups): the structs and the
 * small file helpers every cgroup interface file goes through, each of which
 * names the file in its error. Not part of the sandbox/ public surface. */
#ifndef LIZARD_SANDBOX_CGROUP_INTERNAL_H
#define LIZARD_SANDBOX_CGROUP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "sandbox/name.h"
#include "sandbox/cgroup.h"

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

char *cgroup_path_join(const char *dir, const char *name);

bool cgroup_write(const char *dir, const char *file, const char *value, struct error *err);
/* Reads the whole small file as a string (at most size - 1 bytes). */
bool cgroup_read(const char *dir, const char *file, char *out, size_t size,
		 struct error *err);
/* A file holding one number, or "max" (read as UINT64_MAX). */
bool cgroup_read_u64(const char *dir, const char *file, uint64_t *value, struct error *err);
/* The value of "key value" line key in a flat keyed file (cpu.stat, memory.events). */
bool cgroup_read_keyed(const char *dir, const char *file, const char *key, uint64_t *value,
		       struct error *err);
/* The pids in dir/cgroup.procs into a malloc'ed array (*pids, *count). */
bool cgroup_read_pids(const char *dir, pid_t **pids, size_t *count, struct error *err);

/* Monotonic milliseconds, and a pause that backs off from 1 to 16 ms without
 * passing deadline_ms, for waiting on a state the kernel changes. */
int64_t cgroup_now_ms(void);
void cgroup_backoff(unsigned *step, int64_t deadline_ms);

/* Ends everything in the group's directories and removes them; used by
 * destroy and for the groups of dead daemons. The group is not freed. */
bool cgroup_kill_and_remove(struct sandbox_cgroup *cg, int timeout_ms, struct error *err);

#endif
