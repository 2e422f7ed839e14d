/* SPDX-License-Identifier: MIT */
/* One session's cgroup: limits, joining, freezing, usage, killing, removal.
 * Under v1 the group is one directory per hierarchy and each operation goes
 * to the hierarchy holding its controller; under v2 it is one directory. */
#include "sandbox/name.h"
#include "sandbox/cgroup_state.h"
#include "sandbox/cgroup_files.h"
#include "sandbox/cgroup.h"
#include "util/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CPU_PERIOD_USEC 100000

static void free_dirs(struct sandbox_cgroup *cg)
{
	for (size_t i = 0; i < cg->count; i++) {
		free(cg->dir[i]);
		cg->dir[i] = NULL;
	}
	cg->count = 0;
}

/* The directory of the hierarchy with controller bit, or NULL. */
static const char *dir_with(const struct sandbox_cgroup *cg, unsigned bit)
{
	for (size_t i = 0; i < cg->count; i++)
		if (cg->controllers[i] & bit)
			return cg->dir[i];
	return NULL;
}

static bool missing_controller(const struct sandbox_cgroup_root *root,
			       const struct sandbox_limits *limits, struct error *err)
{
	const char *missing = NULL, *what = NULL;
	if (limits->cpu_millis && !(root->controllers & CGROUP_CPU))
		missing = "cpu", what = "a CPU";
	else if (limits->memory_bytes && !(root->controllers & CGROUP_MEMORY))
		missing = "memory", what = "a memory";
	else if (limits->pids && !(root->controllers & CGROUP_PIDS))
		missing = "pids", what = "a pids";
	if (!missing)
		return false;
	error_set(err, 0,
		  "%s limit cannot be enforced: the %s controller is not "
		  "available to %s (cgroup v%d)",
		  what, missing, root->count ? root->hierarchy[0].dir : "this daemon",
		  root->version == SANDBOX_CGROUP_V1 ? 1 : 2);
	return true;
}

/* Writes file when it exists; a kernel without it (no swap accounting) is fine. */
static bool write_if_present(const char *dir, const char *file, const char *value,
			     struct error *err)
{
	if (cgroup_write(dir, file, value, err))
		return true;
	return err->code == ENOENT;
}

static bool apply_v1(struct sandbox_cgroup *cg, const struct sandbox_limits *l, struct error *err)
{
	char value[32];
	const char *dir;
	if (l->cpu_millis && (dir = dir_with(cg, CGROUP_CPU))) {
		snprintf(value, sizeof(value), "%u", (unsigned)CPU_PERIOD_USEC);
		if (!cgroup_write(dir, "cpu.cfs_period_us", value, err))
			return false;
		snprintf(value, sizeof(value), "%" PRIu64,
			 (uint64_t)l->cpu_millis * CPU_PERIOD_USEC / 1000);
		if (!cgroup_write(dir, "cpu.cfs_quota_us", value, err))
			return false;
	}
	if (l->memory_bytes && (dir = dir_with(cg, CGROUP_MEMORY))) {
		/* memsw (memory + swap) must stay >= the memory limit, so it goes second;
		 * setting it equal keeps swap from stretching the limit. */
		snprintf(value, sizeof(value), "%" PRIu64, l->memory_bytes);
		if (!cgroup_write(dir, "memory.limit_in_bytes", value, err) ||
		    !write_if_present(dir, "memory.memsw.limit_in_bytes", value, err))
			return false;
	}
	if (l->pids && (dir = dir_with(cg, CGROUP_PIDS))) {
		snprintf(value, sizeof(value), "%" PRIu64, l->pids);
		if (!cgroup_write(dir, "pids.max", value, err))
			return false;
	}
	return true;
}

static bool apply_v2(struct sandbox_cgroup *cg, const struct sandbox_limits *l, struct error *err)
{
	char value[48];
	const char *dir = cg->dir[0];
	if (l->cpu_millis) {
		snprintf(value, sizeof(value), "%" PRIu64 " %u",
			 (uint64_t)l->cpu_millis * CPU_PERIOD_USEC / 1000,
			 (unsigned)CPU_PERIOD_USEC);
		if (!cgroup_write(dir, "cpu.max", value, err))
			return false;
	}
	if (l->memory_bytes) {
		/* oom.group 0 (the default, written to be sure): the OOM killer takes
		 * one process, not the whole session. swap.max 0: no stretching. */
		snprintf(value, sizeof(value), "%" PRIu64, l->memory_bytes);
		if (!cgroup_write(dir, "memory.max", value, err) ||
		    !write_if_present(dir, "memory.swap.max", "0", err) ||
		    !write_if_present(dir, "memory.oom.group", "0", err))
			return false;
	}
	if (l->pids) {
		snprintf(value, sizeof(value), "%" PRIu64, l->pids);
		if (!cgroup_write(dir, "pids.max", value, err))
			return false;
	}
	return true;
}

struct sandbox_cgroup *sandbox_cgroup_create(struct sandbox_cgroup_root *root, const char *name,
					     const struct sandbox_limits *limits, struct error *err)
{
	static const struct sandbox_limits none;
	if (!limits)
		limits = &none;
	if (!sandbox_name_check("cgroup", name, err) || missing_controller(root, limits, err))
		return NULL;
	struct sandbox_cgroup *cg = calloc(1, sizeof(*cg));
	if (!cg)
		return error_null(err, ENOMEM, "cgroup %s", name);
	cg->version = root->version;
	cg->limits = *limits;
	snprintf(cg->name, sizeof(cg->name), "%s", name);
	for (size_t i = 0; i < root->count; i++) {
		char *dir = cgroup_path_join(root->hierarchy[i].dir, name);
		if (!dir) {
			error_set(err, ENOMEM, "cgroup %s", name);
			goto failed;
		}
		if (mkdir(dir, 0755) != 0) {
			error_set(
				err, errno,
				errno == EEXIST
					? "cgroup %s already exists (a session of that name is running)"
					: "cannot create cgroup %s",
				dir);
			free(dir);
			goto failed;
		}
		cg->dir[cg->count] = dir;
		cg->controllers[cg->count] = root->hierarchy[i].controllers;
		cg->count++;
	}
	if (!(cg->version == SANDBOX_CGROUP_V1 ? apply_v1 : apply_v2)(cg, limits, err))
		goto failed;
	return cg;

failed:
	for (size_t i = 0; i < cg->count; i++)
		rmdir(cg->dir[i]);
	free_dirs(cg);
	free(cg);
	return NULL;
}

const struct sandbox_limits *sandbox_cgroup_limits(const struct sandbox_cgroup *cg)
{
	return &cg->limits;
}

const char *sandbox_cgroup_name(const struct sandbox_cgroup *cg)
{
	return cg->name;
}

const char *sandbox_cgroup_dir(const struct sandbox_cgroup *cg, size_t index)
{
	return index < cg->count ? cg->dir[index] : NULL;
}

bool sandbox_cgroup_attach_pid(struct sandbox_cgroup *cg, pid_t pid, struct error *err)
{
	char value[24];
	snprintf(value, sizeof(value), "%d", (int)pid);
	for (size_t i = 0; i < cg->count; i++)
		if (!cgroup_write(cg->dir[i], "cgroup.procs", value, err))
			return false;
	return true;
}

bool sandbox_cgroup_join_open(struct sandbox_cgroup *cg, struct sandbox_cgroup_join *join,
			      struct error *err)
{
	join->count = 0;
	for (size_t i = 0; i < cg->count; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/cgroup.procs", cg->dir[i]);
		int fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0) {
			error_set(err, errno, "cannot open %s", path);
			sandbox_cgroup_join_close(join);
			return false;
		}
		join->fds[join->count++] = fd;
	}
	return true;
}

int sandbox_cgroup_join_self(const struct sandbox_cgroup_join *join)
{
	/* "0" means the writing process, in both v1 and v2; no getpid() needed,
	 * and it stays right inside a new PID namespace. */
	for (size_t i = 0; i < join->count; i++) {
		ssize_t n;
		do
			n = write(join->fds[i], "0", 1);
		while (n < 0 && errno == EINTR);
		if (n != 1)
			return n < 0 ? errno : EIO;
	}
	return 0;
}

void sandbox_cgroup_join_close(struct sandbox_cgroup_join *join)
{
	for (size_t i = 0; i < join->count; i++)
		close(join->fds[i]);
	join->count = 0;
}

/* Whether the freezer says the group reached the wanted state. */
static bool freezer_reached(const struct sandbox_cgroup *cg, const char *dir, bool frozen,
			    bool *reached, struct error *err)
{
	if (cg->version == SANDBOX_CGROUP_V2) {
		uint64_t value;
		if (!cgroup_read_keyed(dir, "cgroup.events", "frozen", &value, err))
			return false;
		*reached = value == (frozen ? 1 : 0);
		return true;
	}
	char state[32];
	if (!cgroup_read(dir, "freezer.state", state, sizeof(state), err))
		return false;
	/* FREEZING while some task has not stopped yet. */
	*reached = strcmp(state, frozen ? "FROZEN\n" : "THAWED\n") == 0;
	return true;
}

static bool set_frozen(struct sandbox_cgroup *cg, bool frozen, int timeout_ms, struct error *err)
{
	const char *dir = dir_with(cg, CGROUP_FREEZER);
	if (!dir)
		return error_set(err, 0,
				 "cgroup %s cannot be %s: no freezer controller is "
				 "available",
				 cg->name, frozen ? "frozen" : "thawed");
	bool v2 = cg->version == SANDBOX_CGROUP_V2;
	const char *file = v2 ? "cgroup.freeze" : "freezer.state";
	const char *value = v2 ? (frozen ? "1" : "0") : (frozen ? "FROZEN" : "THAWED");
	if (!cgroup_write(dir, file, value, err))
		return false;
	int64_t deadline = clock_monotonic_ms() + timeout_ms;
	unsigned step = 0;
	for (;;) {
		bool reached;
		if (!freezer_reached(cg, dir, frozen, &reached, err))
			return false;
		if (reached)
			break;
		if (clock_monotonic_ms() >= deadline) {
			if (frozen) /* leave it running rather than half frozen */
				cgroup_write(dir, file, v2 ? "0" : "THAWED", NULL);
			return error_set(err, ETIMEDOUT,
					 "cgroup %s did not %s within %d ms "
					 "(a process may be stuck in the kernel)",
					 dir, frozen ? "freeze" : "thaw", timeout_ms);
		}
		cgroup_backoff(&step, deadline);
		/* v1 freezes the tasks present at the write; one forked at that
		 * moment can stay unfrozen and the group FREEZING. Writing again
		 * goes over the tasks once more. */
		if (frozen && !v2)
			cgroup_write(dir, file, value, NULL);
	}
	cg->frozen = frozen;
	return true;
}

bool sandbox_cgroup_freeze(struct sandbox_cgroup *cg, int timeout_ms, struct error *err)
{
	return set_frozen(cg, true, timeout_ms, err);
}

bool sandbox_cgroup_thaw(struct sandbox_cgroup *cg, int timeout_ms, struct error *err)
{
	return set_frozen(cg, false, timeout_ms, err);
}

bool sandbox_cgroup_is_frozen(const struct sandbox_cgroup *cg)
{
	return cg->frozen;
}

/* Reads one usage value; a file this kernel lacks leaves it unknown. */
static bool usage_value(bool ok, struct error *err, uint64_t *value)
{
	if (ok)
		return true;
	*value = SANDBOX_USAGE_UNKNOWN;
	return err->code == ENOENT;
}

bool sandbox_cgroup_usage(struct sandbox_cgroup *cg, struct sandbox_usage *u, struct error *err)
{
	u->cpu_usec = u->memory_bytes = u->memory_peak_bytes = SANDBOX_USAGE_UNKNOWN;
	u->tasks = u->oom_kills = u->cpu_throttled_usec = SANDBOX_USAGE_UNKNOWN;
	const char *dir;
	if (cg->version == SANDBOX_CGROUP_V2) {
		dir = cg->dir[0];
		if (!usage_value(
			    cgroup_read_keyed(dir, "cpu.stat", "usage_usec", &u->cpu_usec, err),
			    err, &u->cpu_usec) ||
		    !usage_value(cgroup_read_keyed(dir, "cpu.stat", "throttled_usec",
						   &u->cpu_throttled_usec, err),
				 err, &u->cpu_throttled_usec))
			return false;
		if (cg->controllers[0] & CGROUP_MEMORY) {
			/* memory.peak came in Linux 5.19. */
			if (!cgroup_read_u64(dir, "memory.current", &u->memory_bytes, err) ||
			    !usage_value(
				    cgroup_read_u64(dir, "memory.peak", &u->memory_peak_bytes, err),
				    err, &u->memory_peak_bytes) ||
			    !cgroup_read_keyed(dir, "memory.events", "oom_kill", &u->oom_kills,
					       err))
				return false;
		}
		if ((cg->controllers[0] & CGROUP_PIDS) &&
		    !cgroup_read_u64(dir, "pids.current", &u->tasks, err))
			return false;
	} else {
		if ((dir = dir_with(cg, CGROUP_CPUACCT))) {
			uint64_t ns;
			if (!cgroup_read_u64(dir, "cpuacct.usage", &ns, err))
				return false;
			u->cpu_usec = ns / 1000;
		}
		if ((dir = dir_with(cg, CGROUP_CPU))) {
			uint64_t ns;
			if (!usage_value(
				    cgroup_read_keyed(dir, "cpu.stat", "throttled_time", &ns, err),
				    err, &ns))
				return false;
			u->cpu_throttled_usec = ns == SANDBOX_USAGE_UNKNOWN ? ns : ns / 1000;
		}
		if ((dir = dir_with(cg, CGROUP_MEMORY))) {
			if (!cgroup_read_u64(dir, "memory.usage_in_bytes", &u->memory_bytes, err) ||
			    !cgroup_read_u64(dir, "memory.max_usage_in_bytes",
					     &u->memory_peak_bytes, err) ||
			    !usage_value(cgroup_read_keyed(dir, "memory.oom_control", "oom_kill",
							   &u->oom_kills, err),
					 err, &u->oom_kills))
				return false;
		}
		if ((dir = dir_with(cg, CGROUP_PIDS)) &&
		    !cgroup_read_u64(dir, "pids.current", &u->tasks, err))
			return false;
	}
	pid_t *pids;
	size_t count;
	if (!cgroup_read_pids(cg->dir[0], &pids, &count, err))
		return false;
	free(pids);
	u->processes = count;
	return true;
}

/* SIGKILLs what cgroup.procs lists in every directory; how many it found. */
static bool kill_listed(struct sandbox_cgroup *cg, size_t *found, struct error *err)
{
	*found = 0;
	for (size_t i = 0; i < cg->count; i++) {
		pid_t *pids;
		size_t count;
		if (!cgroup_read_pids(cg->dir[i], &pids, &count, err)) {
			if (err->code == ENOENT)
				continue; /* already removed */
			return false;
		}
		for (size_t j = 0; j < count; j++)
			kill(pids[j], SIGKILL);
		free(pids);
		*found += count;
	}
	return true;
}

/* Kill by listing: freeze first so nothing forks between reading the list
 * and the signals landing, signal everyone, thaw so the frozen die (a task
 * frozen by the v1 freezer only acts on SIGKILL once thawed), and repeat
 * until a pass finds nobody. */
static bool kill_by_listing(struct sandbox_cgroup *cg, int64_t deadline, struct error *err)
{
	bool freezer = dir_with(cg, CGROUP_FREEZER) != NULL;
	unsigned step = 0;
	for (;;) {
		int64_t left = deadline - clock_monotonic_ms();
		bool frozen = freezer && left > 0 &&
			      set_frozen(cg, true, (int)(left < 500 ? left : 500), NULL);
		size_t found;
		bool listed = kill_listed(cg, &found, err);
		if (frozen || freezer)
			set_frozen(cg, false, 1000, NULL);
		if (!listed)
			return false;
		if (found == 0)
			return true;
		if (clock_monotonic_ms() >= deadline)
			return error_set(err, ETIMEDOUT,
					 "%zu processes were still in cgroup "
					 "%s at the deadline",
					 found, cg->dir[0]);
		cgroup_backoff(&step, deadline);
	}
}

static bool kill_v2(struct sandbox_cgroup *cg, int64_t deadline, struct error *err)
{
	const char *dir = cg->dir[0];
	/* cgroup.kill (Linux 5.14) kills the whole subtree atomically: no
	 * process can fork away between listing and signalling. */
	if (!cgroup_write(dir, "cgroup.kill", "1", err)) {
		if (err->code != ENOENT)
			return false;
		return kill_by_listing(cg, deadline, err);
	}
	unsigned step = 0;
	for (;;) {
		uint64_t populated;
		if (!cgroup_read_keyed(dir, "cgroup.events", "populated", &populated, err))
			return false;
		if (!populated)
			return true;
		if (clock_monotonic_ms() >= deadline)
			return error_set(err, ETIMEDOUT,
					 "cgroup %s still had processes at the "
					 "deadline after cgroup.kill",
					 dir);
		cgroup_backoff(&step, deadline);
	}
}

bool sandbox_cgroup_kill_all(struct sandbox_cgroup *cg, int timeout_ms, struct error *err)
{
	int64_t deadline = clock_monotonic_ms() + timeout_ms;
	bool ok = cg->version == SANDBOX_CGROUP_V2 ? kill_v2(cg, deadline, err)
						   : kill_by_listing(cg, deadline, err);
	if (ok && cg->frozen)
		set_frozen(cg, false, 1000, NULL); /* an empty group need not stay frozen */
	return ok;
}

bool cgroup_kill_and_remove(struct sandbox_cgroup *cg, int timeout_ms, struct error *err)
{
	int64_t deadline = clock_monotonic_ms() + timeout_ms;
	if (cg->count == 0)
		return true;
	if (!sandbox_cgroup_kill_all(cg, timeout_ms, err))
		return false;
	bool ok = true;
	for (size_t i = 0; i < cg->count; i++) {
		/* The kernel may still be tearing down the last exited task for a moment. */
		unsigned step = 0;
		while (rmdir(cg->dir[i]) != 0) {
			if (errno == ENOENT)
				break;
			if (errno != EBUSY || clock_monotonic_ms() >= deadline) {
				ok = error_set(err, errno, "cannot remove cgroup %s", cg->dir[i]);
				break;
			}
			cgroup_backoff(&step, deadline);
		}
	}
	return ok;
}

bool sandbox_cgroup_destroy(struct sandbox_cgroup *cg, int timeout_ms, struct error *err)
{
	if (!cg)
		return true;
	bool ok = cgroup_kill_and_remove(cg, timeout_ms, err);
	free_dirs(cg);
	free(cg);
	return ok;
}
