/* SPDX-License-Identifier: MIT */
/* Session cgroups on this machine's real kernel: a memory limit that kills
 * one process, a CPU quota, freeze and thaw, killing a tree that setsid()s,
 * removal, and the groups of a daemon that died. Where this process cannot
 * create limited cgroups it prints why and exits 77 (skipped).
 *
 * Children join their cgroup the way the sandbox will start processes:
 * between fork and exec, through fds the parent opened. This process is a
 * child subreaper, so even orphaned grandchildren come back here to be
 * reaped and their cause of death checked. */
#include "test.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/cgroup.h"

#define MIB ((uint64_t)1 << 20)

static struct sandbox_cgroup_root *root;

/* Every process a test started, so that when the code under test fails to
 * kill them, the test still does not leave them running. */
static pid_t started[64];
static int started_count;

static void remember(pid_t pid)
{
	if (pid > 0 && started_count < (int)(sizeof(started) / sizeof(started[0])))
		started[started_count++] = pid;
}

static int wait_status(pid_t pid, int timeout_ms);

/* Kills what is still running of ours. waitpid(WNOHANG) returning 0 means
 * pid is our unreaped child, so the pid cannot belong to anyone else. */
static void kill_leftovers(void)
{
	for (int i = 0; i < started_count; i++) {
		if (waitpid(started[i], NULL, WNOHANG) == 0) {
			kill(started[i], SIGKILL);
			wait_status(started[i], 2000); /* a v1-frozen one dies only when thawed */
		}
	}
	started_count = 0;
}
static char prefix[32]; /* cgroup names unique to this run */

static int64_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void pause_ms(int ms)
{
	struct timespec t = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (nanosleep(&t, &t) != 0 && errno == EINTR)
		;
}

static const char *name_for(const char *what)
{
	static char name[64];
	snprintf(name, sizeof(name), "%s-%s", prefix, what);
	return name;
}

/* Waits for pid with a deadline; -1 when it is still running then. */
static int wait_status(pid_t pid, int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;
	for (;;) {
		int status;
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return status;
		if (r < 0 || now_ms() >= deadline)
			return -1;
		pause_ms(5);
	}
}

static bool killed_by(int status, int sig)
{
	return status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == sig;
}

/* Forks a child that joins cg, then runs body (which must not return). */
static pid_t spawn_in(struct sandbox_cgroup *cg, void (*body)(void *), void *arg)
{
	struct sandbox_cgroup_join join;
	struct error err;
	if (!sandbox_cgroup_join_open(cg, &join, &err)) {
		fprintf(stderr, "join_open: %s\n", err.message);
		return -1;
	}
	/* The child says when it has joined, so that no test acts on the group
	 * before its processes are in it (EOF instead: it failed to). */
	int joined[2];
	if (pipe(joined) != 0) {
		sandbox_cgroup_join_close(&join);
		return -1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		close(joined[0]);
		if (sandbox_cgroup_join_self(&join) != 0)
			_exit(99);
		if (write(joined[1], "j", 1) != 1)
			_exit(98);
		close(joined[1]);
		body(arg);
		_exit(0);
	}
	close(joined[1]);
	sandbox_cgroup_join_close(&join);
	remember(pid);
	char byte;
	ssize_t n;
	do
		n = read(joined[0], &byte, 1);
	while (n < 0 && errno == EINTR);
	close(joined[0]);
	if (n != 1)
		fprintf(stderr, "child %d did not join its cgroup\n", (int)pid);
	return pid;
}

static void sleep_forever(void *arg)
{
	(void)arg;
	for (;;)
		pause();
}

static void allocate_past_the_limit(void *arg)
{
	(void)arg;
	/* Touch every page, 1 MiB at a time, up to 4x the 64 MiB limit. */
	for (int i = 0; i < 256; i++) {
		char *block = malloc(MIB);
		if (!block)
			_exit(3);
		memset(block, i + 1, MIB);
	}
	_exit(0); /* reaching here means the limit was not enforced */
}

static void spin(void *arg)
{
	(void)arg;
	volatile uint64_t x = 0;
	for (;;)
		x++;
}

static void count(void *arg)
{
	_Atomic uint64_t *counter = arg;
	for (;;)
		atomic_fetch_add(counter, 1);
}

/* Whether /proc/<pid>/cgroup places pid in a cgroup ending in name. */
static bool process_in(pid_t pid, const char *name)
{
	char path[64], text[4096], needle[80];
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	snprintf(needle, sizeof(needle), "/%s\n", name);
	return strstr(text, needle) != NULL;
}

static bool gone(const char *dir)
{
	struct stat st;
	return stat(dir, &st) != 0 && errno == ENOENT;
}

static void memory_limit_kills_one_process_not_the_group(void)
{
	struct error err;
	struct sandbox_limits limits = { .memory_bytes = 64 * MIB, .pids = 64 };
	struct sandbox_cgroup *cg = sandbox_cgroup_create(root, name_for("memory"), &limits, &err);
	if (!cg)
		FAIL_AT("create: %s", err.message);
	pid_t bystander = spawn_in(cg, sleep_forever, NULL);
	pid_t hog = spawn_in(cg, allocate_past_the_limit, NULL);
	ASSERT(bystander > 0 && hog > 0);
	int status = wait_status(hog, 20000);
	struct sandbox_usage usage;
	bool read = sandbox_cgroup_usage(cg, &usage, &err);
	bool bystander_alive = waitpid(bystander, NULL, WNOHANG) == 0;
	bool bystander_joined = process_in(bystander, name_for("memory"));
	sandbox_cgroup_destroy(cg, 2000, &err);
	int bystander_status = wait_status(bystander, 2000);

	if (status == -1)
		FAIL_AT("the allocating process still ran after 20 s");
	if (!killed_by(status, SIGKILL))
		FAIL_AT("the allocating process was not SIGKILLed (status 0x%x)", status);
	ASSERT(read);
	ASSERT_EQ(usage.oom_kills, 1);
	ASSERT_EQ(usage.processes, 1);
	ASSERT(usage.memory_peak_bytes != SANDBOX_USAGE_UNKNOWN);
	ASSERT(usage.memory_peak_bytes <= 64 * MIB);
	ASSERT(usage.memory_peak_bytes >= 32 * MIB);
	ASSERT(bystander_alive);
	ASSERT(bystander_joined);
	ASSERT(killed_by(bystander_status, SIGKILL)); /* by destroy */
}

/* Under v1 a cgroup weighs as much as one process at each level of the
 * tree (cpu.shares 1024), v2 likewise (cpu.weight 100). On a shared machine
 * with a dozen busy processes the group would then get a fraction of a CPU
 * and never reach its quota, and the test could not fail. For the window,
 * the group and its ancestors up to the shared lizard-bridge directory get
 * the highest weight, so that the quota, not the competition, decides; that
 * costs others at most the one CPU the quota allows, for two seconds. */
struct weight_boost {
	char path[3][4200];
	char old[3][32];
	int count;
};

static void boost_weight(struct sandbox_cgroup *cg, struct weight_boost *b)
{
	b->count = 0;
	for (size_t i = 0; sandbox_cgroup_dir(cg, i); i++) {
		char dir[4096];
		snprintf(dir, sizeof(dir), "%s", sandbox_cgroup_dir(cg, i));
		for (int level = 0; level < 3 && b->count < 3; level++) {
			/* file, highest weight, the kernel's default */
			static const char *const files[][3] = {
				{ "cpu.shares", "262144", "1024\n" },
				{ "cpu.weight", "10000", "100\n" }
			};
			for (int f = 0; f < 2; f++) {
				char path[4200];
				snprintf(path, sizeof(path), "%s/%s", dir, files[f][0]);
				FILE *in = fopen(path, "re");
				if (!in)
					continue;
				bool got = fgets(b->old[b->count], sizeof(b->old[0]), in) != NULL;
				fclose(in);
				/* Only from the default: another run boosting the shared
				 * directory right now restores it itself. */
				got = got && strcmp(b->old[b->count], files[f][2]) == 0;
				FILE *out = got ? fopen(path, "we") : NULL;
				if (!out)
					continue;
				fputs(files[f][1], out);
				if (fclose(out) == 0)
					snprintf(b->path[b->count++], sizeof(b->path[0]), "%s",
						 path);
			}
			*strrchr(dir, '/') = '\0';
		}
	}
}

static void restore_weight(struct weight_boost *b)
{
	for (int i = b->count - 1; i >= 0; i--) {
		FILE *out = fopen(b->path[i], "we");
		if (out) {
			fputs(b->old[i], out);
			fclose(out);
		}
	}
}

/* Two spinning processes on a machine with at least two CPUs would use up
 * to two CPUs; a 1-CPU quota holds them to one. The upper bound proves
 * enforcement (other load can only lower the figure), and the kernel's own
 * count of throttled time shows the quota at work. The lower bound is
 * tolerant: it checks that the time is charged to this group at all. */
static void cpu_quota_holds_two_spinners_to_one_cpu(void)
{
	struct error err;
	struct sandbox_limits limits = { .cpu_millis = 1000 };
	struct sandbox_cgroup *cg = sandbox_cgroup_create(root, name_for("cpu"), &limits, &err);
	if (!cg)
		FAIL_AT("create: %s", err.message);
	struct weight_boost boost;
	boost_weight(cg, &boost);
	pid_t a = spawn_in(cg, spin, NULL), b = spawn_in(cg, spin, NULL);
	struct sandbox_usage before, after;
	pause_ms(300); /* let both start spinning before the window opens */
	bool ok = sandbox_cgroup_usage(cg, &before, &err);
	int64_t start = now_ms();
	pause_ms(2000);
	ok = ok && sandbox_cgroup_usage(cg, &after, &err);
	int64_t elapsed = now_ms() - start;
	restore_weight(&boost);
	sandbox_cgroup_destroy(cg, 2000, &err);
	wait_status(a, 2000);
	wait_status(b, 2000);
	ASSERT(ok);
	double cpus = (double)(after.cpu_usec - before.cpu_usec) / 1000.0 / (double)elapsed;
	fprintf(stderr,
		"  two spinners under a 1-CPU quota used %.2f CPUs over %lld ms "
		"(throttled %.0f ms)\n",
		cpus, (long long)elapsed,
		(double)(after.cpu_throttled_usec - before.cpu_throttled_usec) / 1000.0);
	if (cpus > 1.3)
		FAIL_AT("%.2f CPUs used under a 1-CPU quota", cpus);
	/* Tolerant: even at the highest weight, other load takes its part. */
	if (cpus < 0.5)
		FAIL_AT("only %.2f CPUs charged to the group: are the spinners in it?", cpus);
	ASSERT(after.cpu_throttled_usec != SANDBOX_USAGE_UNKNOWN);
	ASSERT(after.cpu_throttled_usec > before.cpu_throttled_usec);
}

/* The counter lives in shared memory: a frozen process cannot touch it. */
static void frozen_counter_stops_and_continues_after_thaw(void)
{
	_Atomic uint64_t *counter = mmap(NULL, sizeof(*counter), PROT_READ | PROT_WRITE,
					 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT(counter != MAP_FAILED);
	atomic_store(counter, 0);
	struct error err;
	struct sandbox_cgroup *cg = sandbox_cgroup_create(root, name_for("freeze"), NULL, &err);
	if (!cg)
		FAIL_AT("create: %s", err.message);
	pid_t pid = spawn_in(cg, count, (void *)counter);
	int64_t deadline = now_ms() + 2000;
	while (atomic_load(counter) == 0 && now_ms() < deadline)
		pause_ms(1);
	bool started = atomic_load(counter) > 0;

	bool froze = sandbox_cgroup_freeze(cg, 2000, &err);
	bool frozen_twice = froze && sandbox_cgroup_freeze(cg, 2000, &err);
	uint64_t at_freeze = atomic_load(counter);
	pause_ms(300);
	uint64_t after_pause = atomic_load(counter);
	bool reported = sandbox_cgroup_is_frozen(cg);
	bool thawed = sandbox_cgroup_thaw(cg, 2000, &err);
	deadline = now_ms() + 2000;
	while (atomic_load(counter) == after_pause && now_ms() < deadline)
		pause_ms(1);
	uint64_t after_thaw = atomic_load(counter);
	sandbox_cgroup_destroy(cg, 2000, &err);
	int status = wait_status(pid, 2000);
	munmap((void *)counter, sizeof(*counter));

	ASSERT(started);
	if (!froze)
		FAIL_AT("freeze: %s", err.message);
	ASSERT(frozen_twice);
	ASSERT(reported);
	ASSERT_EQ(after_pause, at_freeze);
	ASSERT(thawed);
	ASSERT(after_thaw > after_pause);
	ASSERT(killed_by(status, SIGKILL));
}

/* child -> grandchild that setsid()s and forks again, then both wait. */
static void tree_with_a_setsid_grandchild(void *arg)
{
	int *pipe_fds = arg;
	pid_t grandchild = fork();
	if (grandchild == 0) {
		setsid();
		pid_t great = fork();
		if (great == 0) {
			pid_t self = getpid();
			if (write(pipe_fds[1], &self, sizeof(self)) != sizeof(self))
				_exit(2);
			sleep_forever(NULL);
		}
		_exit(0); /* orphan its child: it now belongs to the subreaper */
	}
	waitpid(grandchild, NULL, 0);
	pid_t self = getpid(); /* second message: the middle process is gone */
	if (write(pipe_fds[1], &self, sizeof(self)) != sizeof(self))
		_exit(2);
	sleep_forever(NULL);
}

static void kill_all_ends_a_tree_that_left_the_session(void)
{
	int fds[2];
	ASSERT(pipe(fds) == 0);
	struct error err;
	struct sandbox_cgroup *cg = sandbox_cgroup_create(root, name_for("tree"), NULL, &err);
	if (!cg)
		FAIL_AT("create: %s", err.message);
	pid_t child = spawn_in(cg, tree_with_a_setsid_grandchild, fds);
	/* Two messages in either order: the orphan's pid, and the child's own
	 * once it has reaped the middle process. */
	pid_t got[2] = { 0, 0 };
	bool told = read(fds[0], &got[0], sizeof(pid_t)) == sizeof(pid_t) &&
		    read(fds[0], &got[1], sizeof(pid_t)) == sizeof(pid_t) &&
		    (got[0] == child || got[1] == child);
	pid_t orphan = got[0] == child ? got[1] : got[0];
	remember(orphan); /* ours once orphaned: we are the subreaper */
	close(fds[0]);
	close(fds[1]);
	struct sandbox_usage before, after;
	bool read_before = sandbox_cgroup_usage(cg, &before, &err);
	bool killed = sandbox_cgroup_kill_all(cg, 3000, &err);
	if (!killed)
		fprintf(stderr, "kill_all: %s\n", err.message);
	bool read_after = sandbox_cgroup_usage(cg, &after, &err);
	int child_status = wait_status(child, 2000);
	int orphan_status = told ? wait_status(orphan, 2000) : -1;
	char *copies[SANDBOX_CGROUP_MAX_HIERARCHIES];
	size_t count = 0;
	while (count < SANDBOX_CGROUP_MAX_HIERARCHIES && sandbox_cgroup_dir(cg, count)) {
		copies[count] = strdup(sandbox_cgroup_dir(cg, count));
		count++;
	}
	bool destroyed = sandbox_cgroup_destroy(cg, 2000, &err);

	ASSERT(told);
	ASSERT(read_before && before.processes == 2);
	ASSERT(killed);
	ASSERT(read_after && after.processes == 0);
	ASSERT(killed_by(child_status, SIGKILL));
	ASSERT(killed_by(orphan_status, SIGKILL));
	ASSERT(destroyed);
	ASSERT(count > 0);
	for (size_t i = 0; i < count; i++) {
		if (!gone(copies[i]))
			FAIL_AT("%s is still there after destroy", copies[i]);
		free(copies[i]);
	}
}

static void paused_group_can_still_be_killed(void)
{
	struct error err;
	struct sandbox_cgroup *cg = sandbox_cgroup_create(root, name_for("paused"), NULL, &err);
	if (!cg)
		FAIL_AT("create: %s", err.message);
	pid_t a = spawn_in(cg, sleep_forever, NULL), b = spawn_in(cg, spin, NULL);
	bool froze = sandbox_cgroup_freeze(cg, 2000, &err);
	bool killed = sandbox_cgroup_kill_all(cg, 3000, &err);
	if (!killed)
		fprintf(stderr, "kill_all: %s\n", err.message);
	int status_a = wait_status(a, 2000), status_b = wait_status(b, 2000);
	bool still_frozen = sandbox_cgroup_is_frozen(cg);
	bool destroyed = sandbox_cgroup_destroy(cg, 2000, &err);
	ASSERT(froze);
	ASSERT(killed);
	ASSERT(killed_by(status_a, SIGKILL));
	ASSERT(killed_by(status_b, SIGKILL));
	ASSERT(!still_frozen);
	ASSERT(destroyed);
}

static void limits_need_their_controller_and_names_are_checked(void)
{
	struct error err;
	ASSERT(sandbox_cgroup_create(root, "../escape", NULL, &err) == NULL);
	ASSERT_CONTAINS(err.message, "'.' at position 1");
	struct sandbox_cgroup *cg = sandbox_cgroup_create(root, name_for("twice"), NULL, &err);
	ASSERT(cg != NULL);
	ASSERT(sandbox_cgroup_create(root, name_for("twice"), NULL, &err) == NULL);
	ASSERT_CONTAINS(err.message, "already exists");
	ASSERT(sandbox_cgroup_destroy(cg, 1000, &err));
}

/* Whether the parent of dir holds an entry "<pid>-...". */
static bool has_entry_starting(const char *dir, int pid)
{
	char parent[4096], start[32];
	snprintf(parent, sizeof(parent), "%s", dir);
	*strrchr(parent, '/') = '\0';
	snprintf(start, sizeof(start), "%d-", pid);
	DIR *d = opendir(parent);
	if (!d)
		return false;
	bool found = false;
	struct dirent *e;
	while ((e = readdir(d)))
		found |= strncmp(e->d_name, start, strlen(start)) == 0;
	closedir(d);
	return found;
}

/* A "daemon" that dies without cleaning up leaves a group with a process
 * in it; the next start kills the process and removes the directories. */
static void stale_groups_of_a_dead_daemon_are_removed(void)
{
	int fds[2];
	ASSERT(pipe(fds) == 0);
	pid_t daemon = fork();
	if (daemon == 0) {
		struct error err;
		struct sandbox_cgroup_root *own = sandbox_cgroup_root_open(
			sandbox_cgroup_root_version(root), &err);
		struct sandbox_cgroup *cg = own ? sandbox_cgroup_create(own, "left-behind", NULL,
									&err)
						: NULL;
		pid_t worker = cg ? spawn_in(cg, sleep_forever, NULL) : -1;
		if (write(fds[1], &worker, sizeof(worker)) != sizeof(worker))
			_exit(2);
		sleep_forever(NULL);
	}
	remember(daemon);
	pid_t worker = -1;
	bool told = read(fds[0], &worker, sizeof(worker)) == sizeof(worker) && worker > 0;
	remember(worker);
	close(fds[0]);
	close(fds[1]);
	kill(daemon, SIGKILL);
	int daemon_status = wait_status(daemon, 2000);
	unsigned removed = 0;
	struct error err;
	bool ok = sandbox_cgroup_root_remove_stale(root, &removed, &err);
	int worker_status = told ? wait_status(worker, 2000) : -1;

	ASSERT(told);
	ASSERT(killed_by(daemon_status, SIGKILL));
	if (!ok)
		FAIL_AT("remove_stale: %s", err.message);
	ASSERT(removed >= 1);
	if (!killed_by(worker_status, SIGKILL))
		FAIL_AT("the left-behind worker %d: status 0x%x (removed %u)", (int)worker,
			worker_status, removed);
	for (size_t i = 0; sandbox_cgroup_root_dir(root, i); i++)
		if (has_entry_starting(sandbox_cgroup_root_dir(root, i), (int)daemon))
			FAIL_AT("the dead daemon's directory is still next to %s",
				sandbox_cgroup_root_dir(root, i));
}

static void limits_without_their_controller_say_which(void)
{
	struct sandbox_limits memory = { .memory_bytes = 64 * MIB };
	struct error err;
	struct sandbox_cgroup *cg = sandbox_cgroup_create(root, name_for("nomem"), &memory, &err);
	if (cg) {
		sandbox_cgroup_destroy(cg, 1000, &err);
		SKIP("this cgroup v2 tree has the memory controller, so no limit lacks "
		     "its controller here");
	}
	ASSERT_CONTAINS(err.message, "a memory limit cannot be enforced: the memory controller is "
				     "not available");
}

static void run_all(const char *label)
{
	char describe[512];
	sandbox_cgroup_root_describe(root, describe, sizeof(describe));
	fprintf(stderr, "%s: %s\n", label, describe);
	RUN_TEST(limits_need_their_controller_and_names_are_checked);
	RUN_TEST(frozen_counter_stops_and_continues_after_thaw);
	RUN_TEST(kill_all_ends_a_tree_that_left_the_session);
	RUN_TEST(stale_groups_of_a_dead_daemon_are_removed);
	RUN_TEST(paused_group_can_still_be_killed);
	kill_leftovers();
}

/* Last: closes the root, and checks nothing of this daemon is left. */
static void closing_the_root_removes_the_daemon_directories(void)
{
	char *dirs[SANDBOX_CGROUP_MAX_HIERARCHIES];
	size_t count = 0;
	while (count < SANDBOX_CGROUP_MAX_HIERARCHIES && sandbox_cgroup_root_dir(root, count)) {
		dirs[count] = strdup(sandbox_cgroup_root_dir(root, count));
		count++;
	}
	struct error err;
	error_clear(&err);
	sandbox_cgroup_root_close(root, &err);
	root = NULL;
	ASSERT_STR_EQ(err.message, "");
	for (size_t i = 0; i < count; i++) {
		if (!gone(dirs[i]))
			FAIL_AT("%s is still there after close", dirs[i]);
		free(dirs[i]);
	}
}

int main(void)
{
	if (geteuid() != 0 && !getenv("LIZARD_TEST_CGROUP_DELEGATED")) {
		fprintf(stderr, "SKIP: cgroup tests need root (or a delegated cgroup v2 subtree, "
				"then set LIZARD_TEST_CGROUP_DELEGATED=1)\n");
		return 77;
	}
	struct error why;
	if (!sandbox_cgroup_available(&why)) {
		fprintf(stderr, "SKIP: no writable cgroup controllers: %s\n", why.message);
		return 77;
	}
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	snprintf(prefix, sizeof(prefix), "t%d", (int)getpid());
	struct error err;
	root = sandbox_cgroup_root_open(SANDBOX_CGROUP_AUTO, &err);
	if (!root) {
		fprintf(stderr, "root_open: %s\n", err.message);
		return 1;
	}
	run_all("limited hierarchy");
	RUN_TEST(memory_limit_kills_one_process_not_the_group);
	RUN_TEST(cpu_quota_holds_two_spinners_to_one_cpu);
	kill_leftovers();
	enum sandbox_cgroup_version version = sandbox_cgroup_root_version(root);
	RUN_TEST(closing_the_root_removes_the_daemon_directories);

	/* On a hybrid host the unified (v2) tree may have no controllers but
	 * still has cgroup.freeze and cgroup.kill: run what needs none there. */
	if (version == SANDBOX_CGROUP_V1) {
		root = sandbox_cgroup_root_open(SANDBOX_CGROUP_V2, &err);
		if (!root) {
			fprintf(stderr, "no cgroup v2 part: %s\n", err.message);
		} else {
			run_all("unified hierarchy");
			RUN_TEST(limits_without_their_controller_say_which);
			RUN_TEST(closing_the_root_removes_the_daemon_directories);
		}
	}
	TEST_EXIT();
}
