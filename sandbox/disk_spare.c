/* SPDX-License-Identifier: MIT */
#include "sandbox/disk_spare.h"

#include "sandbox/disk.h"
#include "sandbox/root.h"
#include "sandbox/root_ahead.h"
#include "sandbox/uid.h"
#include "util/clock.h"
#include "util/log.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Sizes whose next spare is being made: one thread each at most. */
#define MAKING_MAX 8

/* A spare of a size, and whether it carries a root made ahead. */
struct kind {
	uint64_t bytes; /* 0: none */
	bool root;
};

static bool same_kind(struct kind a, struct kind b)
{
	return a.bytes == b.bytes && a.root == b.root;
}

static pthread_mutex_t making_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kind making[MAKING_MAX];

/* Cleared once a root could not be made ahead (an older kernel): spares
 * are plain from then on. */
static atomic_bool roots_ahead = true;

/* Spares mounted ahead, nowhere yet (disk.h): the spare image of a size
 * exists with one of these, or without when its mount failed. Changed
 * together with the image's name, under ready_lock, so a session never
 * mounts an image that is mounted here. */
struct ready {
	struct kind kind; /* bytes 0: a free slot */
	int mount_fd;
	int loop;
	struct sandbox_root_ahead *root; /* with kind.root */
	char daemon_dir[200];            /* where its image is */
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
	struct kind kind;
	struct sandbox_uid_range range; /* a root's ids */
};

static void spare_name(char *out, size_t size, struct kind kind, const char *suffix)
{
	snprintf(out, size, "spare-%llu%s.img%s", (unsigned long long)kind.bytes,
		 kind.root ? "-root" : "", suffix);
}

static void *make_spare(void *arg)
{
	struct job *job = arg;
	wait_quiet();
	char part[64], spare[64];
	spare_name(part, sizeof(part), job->kind, ".part");
	spare_name(spare, sizeof(spare), job->kind, "");
	unlinkat(job->daemon_fd, part, 0);
	struct error why;
	int loop = -1, mount_fd = -1;
	struct sandbox_root_ahead *root = NULL;
	if (sandbox_disk_make(job->daemon_fd, job->daemon_dir, part, job->kind.bytes, geteuid(),
			      false, &why)) {
		/* Mounted while it is still the thread's own. */
		mount_fd = sandbox_disk_mount_detached(job->daemon_fd, job->daemon_dir, part, &loop,
						       &why);
		if (mount_fd >= 0)
			sandbox_root_prepare_disk(mount_fd);
		if (mount_fd >= 0 && job->kind.root &&
		    !(root = sandbox_root_ahead_make(mount_fd, job->daemon_dir, &job->range,
						     &why))) {
			/* EINVAL: a kernel that cannot mount on a detached
			 * tree; else, most likely, no ids free just now. */
			log_debug("no root made ahead: %s", why.message);
			if (why.code == EINVAL)
				atomic_store(&roots_ahead, false);
		}
		pthread_mutex_lock(&ready_lock);
		struct ready *slot = NULL;
		for (size_t i = 0; i < MAKING_MAX && !slot; i++)
			if (!ready[i].kind.bytes)
				slot = &ready[i];
		/* A root's spare is offered with its root only. */
		if ((job->kind.root && !root) ||
		    renameat2(job->daemon_fd, part, job->daemon_fd, spare, RENAME_NOREPLACE) != 0) {
			unlinkat(job->daemon_fd, part, 0);
		} else if (slot && mount_fd >= 0) {
			*slot = (struct ready){ job->kind, mount_fd, loop, root, "" };
			snprintf(slot->daemon_dir, sizeof(slot->daemon_dir), "%s", job->daemon_dir);
			mount_fd = -1;
			root = NULL;
		} else if (job->kind.root) {
			unlinkat(job->daemon_fd, spare, 0); /* its root went with the mount */
		}
		pthread_mutex_unlock(&ready_lock);
		sandbox_root_ahead_free(root);
		if (mount_fd >= 0)
			close(mount_fd);
	}
	pthread_mutex_lock(&making_lock);
	for (size_t i = 0; i < MAKING_MAX; i++)
		if (same_kind(making[i], job->kind))
			making[i] = (struct kind){ 0 };
	pthread_mutex_unlock(&making_lock);
	close(job->daemon_fd);
	free(job);
	return NULL;
}

/* Starts the thread that makes the next spare of bytes, unless one is at
 * it already; nothing happens when it cannot (the next session then makes
 * its own disk). */
static void replenish(const char *daemon_dir, int daemon_fd, struct kind kind,
		      const struct sandbox_uid_range *range)
{
	pthread_mutex_lock(&making_lock);
	size_t slot = MAKING_MAX;
	bool busy = false;
	for (size_t i = 0; i < MAKING_MAX; i++) {
		busy = busy || same_kind(making[i], kind);
		if (!making[i].bytes && slot == MAKING_MAX)
			slot = i;
	}
	struct job *job = busy || slot == MAKING_MAX ? NULL : calloc(1, sizeof(*job));
	if (job) {
		job->daemon_fd = fcntl(daemon_fd, F_DUPFD_CLOEXEC, 3);
		job->kind = kind;
		job->range = range ? *range : SANDBOX_UID_RANGE_DEFAULT;
		snprintf(job->daemon_dir, sizeof(job->daemon_dir), "%s", daemon_dir);
		pthread_attr_t attr;
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		pthread_t thread;
		if (job->daemon_fd >= 0 && pthread_create(&thread, &attr, make_spare, job) == 0) {
			making[slot] = kind;
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
		busy = busy || making[i].bytes;
	if (!busy)
		rmdir(daemon_dir); /* fails while it holds a spare or a session */
	pthread_mutex_unlock(&making_lock);
}

bool sandbox_disk_spare_take(const char *daemon_dir, int dir_fd, const char *where,
			     const char *name, const struct sandbox_disk_want *want,
			     struct sandbox_disk_taken *taken, struct error *err)
{
	*taken = (struct sandbox_disk_taken){ .mount_fd = -1, .loop = -1, .root = NULL };
	struct kind kind = { want->bytes, want->root && atomic_load(&roots_ahead) };
	int daemon_fd = open(daemon_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	char spare[64];
	spare_name(spare, sizeof(spare), kind, "");
	pthread_mutex_lock(&ready_lock);
	bool ok = daemon_fd >= 0 &&
		  renameat2(daemon_fd, spare, dir_fd, name, RENAME_NOREPLACE) == 0;
	/* Without the directory nothing was renamed: the spares stay. */
	for (size_t i = 0; daemon_fd >= 0 && i < MAKING_MAX; i++) {
		if (!same_kind(ready[i].kind, kind))
			continue;
		if (ok) {
			*taken = (struct sandbox_disk_taken){ ready[i].mount_fd, ready[i].loop,
							      ready[i].root };
		} else { /* its image is gone */
			close(ready[i].mount_fd);
			sandbox_root_ahead_free(ready[i].root);
		}
		ready[i] = (struct ready){ .kind = { 0 } };
		break;
	}
	pthread_mutex_unlock(&ready_lock);
	/* A root's image without its root (a dead daemon's, say) holds
	 * another root's layers: not this session's either. */
	if (ok && kind.root && !taken->root) {
		unlinkat(dir_fd, name, 0);
		ok = false;
	}
	/* A root made for other ids, or before the host's /etc changed, is
	 * not this session's: neither is its disk, which holds its layers. */
	if (ok && taken->root && !sandbox_root_ahead_fits(taken->root, want->range)) {
		sandbox_root_ahead_free(taken->root);
		close(taken->mount_fd);
		*taken = (struct sandbox_disk_taken){ .mount_fd = -1, .loop = -1, .root = NULL };
		unlinkat(dir_fd, name, 0);
		ok = false;
	}
	if (!ok)
		ok = sandbox_disk_make(dir_fd, where, name, want->bytes, geteuid(), false, err);
	if (ok && daemon_fd >= 0)
		replenish(daemon_dir, daemon_fd, kind, want->range);
	if (daemon_fd >= 0)
		close(daemon_fd);
	return ok;
}

bool sandbox_disk_spare_drop_roots(void)
{
	bool dropped = false;
	pthread_mutex_lock(&ready_lock);
	for (size_t i = 0; i < MAKING_MAX; i++) {
		if (!ready[i].kind.root)
			continue;
		char spare[64];
		spare_name(spare, sizeof(spare), ready[i].kind, "");
		int dir = open(ready[i].daemon_dir,
			       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dir < 0)
			continue; /* kept whole: its image could not go */
		unlinkat(dir, spare, 0);
		close(dir);
		close(ready[i].mount_fd);
		sandbox_root_ahead_free(ready[i].root);
		ready[i] = (struct ready){ .kind = { 0 } };
		dropped = true;
	}
	pthread_mutex_unlock(&ready_lock);
	return dropped;
}
