/* SPDX-License-Identifier: MIT */
#include "sandbox/disk_spare.h"

#include "sandbox/disk.h"
#include "sandbox/root.h"
#include "util/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Sizes whose next spare is being made: one thread each at most. */
#define MAKING_MAX 8

static pthread_mutex_t making_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t making[MAKING_MAX];

/* Spares mounted ahead, nowhere yet (disk.h): the spare image of a size
 * exists with one of these, or without when its mount failed. Changed
 * together with the image's name, under ready_lock, so a session never
 * mounts an image that is mounted here. */
struct ready {
	uint64_t bytes; /* 0: a free slot */
	int mount_fd;
	int loop;
};
static pthread_mutex_t ready_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ready ready[MAKING_MAX];

/* Sandboxes starting now (sandbox_disk_spare_hold): a spare is formatted
 * once none has started for QUIET_MS, or after QUIET_WAIT_MS whatever
 * happens. mke2fs and the loop device take a core for about 10 ms, which a
 * start on 2 cores waited for (bench/start-ab.mjs: 42-48 ms against 33-36
 * with the spare made after the start and its first exec). */
#define QUIET_MS 100
#define QUIET_WAIT_MS 2000

static pthread_once_t quiet_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t quiet_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t quiet_changed;
static int starting;
static int64_t last_start_end_ms;

static void quiet_init(void)
{
	clock_cond_init(&quiet_changed);
}

void sandbox_disk_spare_hold(void)
{
	pthread_once(&quiet_once, quiet_init);
	pthread_mutex_lock(&quiet_lock);
	starting++;
	pthread_mutex_unlock(&quiet_lock);
}

void sandbox_disk_spare_release(void)
{
	pthread_once(&quiet_once, quiet_init);
	pthread_mutex_lock(&quiet_lock);
	if (starting > 0 && --starting == 0) {
		last_start_end_ms = clock_monotonic_ms();
		pthread_cond_broadcast(&quiet_changed);
	}
	pthread_mutex_unlock(&quiet_lock);
}

/* Returns once no sandbox has been starting for QUIET_MS, or at the
 * latest QUIET_WAIT_MS from now. */
static void wait_quiet(void)
{
	pthread_once(&quiet_once, quiet_init);
	int64_t give_up = clock_monotonic_ms() + QUIET_WAIT_MS;
	pthread_mutex_lock(&quiet_lock);
	for (;;) {
		int64_t now = clock_monotonic_ms();
		int64_t until = starting > 0 ? give_up : last_start_end_ms + QUIET_MS;
		if (until > give_up)
			until = give_up;
		if (now >= until)
			break;
		struct timespec deadline = clock_deadline_ms(until - now);
		pthread_cond_timedwait(&quiet_changed, &quiet_lock, &deadline);
	}
	pthread_mutex_unlock(&quiet_lock);
}

struct job {
	int daemon_fd;
	char daemon_dir[200];
	uint64_t bytes;
};

static void spare_name(char *out, size_t size, uint64_t bytes, const char *suffix)
{
	snprintf(out, size, "spare-%llu.img%s", (unsigned long long)bytes, suffix);
}

static void *make_spare(void *arg)
{
	struct job *job = arg;
	wait_quiet();
	char part[64], spare[64];
	spare_name(part, sizeof(part), job->bytes, ".part");
	spare_name(spare, sizeof(spare), job->bytes, "");
	unlinkat(job->daemon_fd, part, 0);
	struct error ignored;
	int loop = -1, mount_fd = -1;
	if (sandbox_disk_make(job->daemon_fd, job->daemon_dir, part, job->bytes, geteuid(), false,
			      &ignored)) {
		/* Mounted while it is still the thread's own. */
		mount_fd = sandbox_disk_mount_detached(job->daemon_fd, job->daemon_dir, part, &loop,
						       &ignored);
		if (mount_fd >= 0)
			sandbox_root_prepare_disk(mount_fd);
		pthread_mutex_lock(&ready_lock);
		struct ready *slot = NULL;
		for (size_t i = 0; i < MAKING_MAX && !slot; i++)
			if (!ready[i].bytes)
				slot = &ready[i];
		if (renameat2(job->daemon_fd, part, job->daemon_fd, spare, RENAME_NOREPLACE) != 0) {
			unlinkat(job->daemon_fd, part, 0);
		} else if (slot && mount_fd >= 0) {
			*slot = (struct ready){ job->bytes, mount_fd, loop };
			mount_fd = -1;
		}
		pthread_mutex_unlock(&ready_lock);
		if (mount_fd >= 0)
			close(mount_fd);
	}
	pthread_mutex_lock(&making_lock);
	for (size_t i = 0; i < MAKING_MAX; i++)
		if (making[i] == job->bytes)
			making[i] = 0;
	pthread_mutex_unlock(&making_lock);
	close(job->daemon_fd);
	free(job);
	return NULL;
}

/* Starts the thread that makes the next spare of bytes, unless one is at
 * it already; nothing happens when it cannot (the next session then makes
 * its own disk). */
static void replenish(const char *daemon_dir, int daemon_fd, uint64_t bytes)
{
	pthread_mutex_lock(&making_lock);
	size_t slot = MAKING_MAX;
	bool busy = false;
	for (size_t i = 0; i < MAKING_MAX; i++) {
		busy = busy || making[i] == bytes;
		if (!making[i] && slot == MAKING_MAX)
			slot = i;
	}
	struct job *job = busy || slot == MAKING_MAX ? NULL : calloc(1, sizeof(*job));
	if (job) {
		job->daemon_fd = fcntl(daemon_fd, F_DUPFD_CLOEXEC, 3);
		job->bytes = bytes;
		snprintf(job->daemon_dir, sizeof(job->daemon_dir), "%s", daemon_dir);
		pthread_attr_t attr;
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		pthread_t thread;
		if (job->daemon_fd >= 0 && pthread_create(&thread, &attr, make_spare, job) == 0) {
			making[slot] = bytes;
			job = NULL;
		}
		pthread_attr_destroy(&attr);
		if (job && job->daemon_fd >= 0)
			close(job->daemon_fd);
		free(job);
	}
	pthread_mutex_unlock(&making_lock);
}

void sandbox_disk_spare_remove_dir(const char *daemon_dir)
{
	pthread_mutex_lock(&making_lock);
	bool busy = false;
	for (size_t i = 0; i < MAKING_MAX; i++)
		busy = busy || making[i];
	if (!busy)
		rmdir(daemon_dir); /* fails while it holds a spare or a session */
	pthread_mutex_unlock(&making_lock);
}

bool sandbox_disk_spare_take(const char *daemon_dir, int dir_fd, const char *where,
			     const char *name, uint64_t bytes, int *mount_fd, int *loop,
			     struct error *err)
{
	*mount_fd = -1;
	int daemon_fd = open(daemon_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	char spare[64];
	spare_name(spare, sizeof(spare), bytes, "");
	pthread_mutex_lock(&ready_lock);
	bool ok = daemon_fd >= 0 &&
		  renameat2(daemon_fd, spare, dir_fd, name, RENAME_NOREPLACE) == 0;
	for (size_t i = 0; i < MAKING_MAX; i++) {
		if (ready[i].bytes != bytes)
			continue;
		if (ok) {
			*mount_fd = ready[i].mount_fd;
			*loop = ready[i].loop;
		} else {
			close(ready[i].mount_fd); /* its image is gone */
		}
		ready[i] = (struct ready){ 0 };
		break;
	}
	pthread_mutex_unlock(&ready_lock);
	if (!ok)
		ok = sandbox_disk_make(dir_fd, where, name, bytes, geteuid(), false, err);
	if (ok && daemon_fd >= 0)
		replenish(daemon_dir, daemon_fd, bytes);
	if (daemon_fd >= 0)
		close(daemon_fd);
	return ok;
}
