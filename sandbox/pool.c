/* SPDX-License-Identifier: MIT */
#include "sandbox/pool.h"

#include "sandbox/root.h"
#include "sandbox/uid.h"

#include "util/clock.h"
#include "util/log.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* After a start that failed, the pool waits this long before the next
 * (doubling up to the most): a machine that cannot start sandboxes is not
 * kept busy trying. */
#define RETRY_FIRST_MS 1000
#define RETRY_MOST_MS 60000
/* How often the ready ones are looked at while none is wanted: one whose
 * init ended is replaced before a session needs it, and meanwhile holds
 * its uids and disk no longer. */
#define WATCH_MS 1000

static struct {
	pthread_mutex_t lock;
	pthread_cond_t changed;
	pthread_t thread;
	/* Set last by sandbox_pool_start, read by any thread: what it set
	 * before is there for whoever sees it true. */
	atomic_bool running;
	bool stopping;
	unsigned target; /* how many are kept ready */
	unsigned count;
	unsigned held; /* given back, their sessions still trying: not refilled */
	struct sandbox *ready[SANDBOX_POOL_MAX];
	const struct sandbox_uid_range *uid_range;
	uint64_t disk_bytes;
	bool fuse; /* its sandboxes' roots are FUSE ones: no cgroup can be given */
} pool = { .lock = PTHREAD_MUTEX_INITIALIZER, .changed = PTHREAD_COND_INITIALIZER };

static bool same_range(const struct sandbox_uid_range *a, const struct sandbox_uid_range *b)
{
	struct sandbox_uid_range fallback = SANDBOX_UID_RANGE_DEFAULT;
	a = a ? a : &fallback;
	b = b ? b : &fallback;
	return a->first == b->first && a->count == b->count;
}

/* Whether options are what the pool's sandboxes were started with, envs
 * aside. */
static bool fits(const struct sandbox_options *o)
{
	return atomic_load(&pool.running) && o->network && (!o->cgroup || !pool.fuse) &&
	       !o->workspace_dir && !o->workspace_image && o->disk_bytes == pool.disk_bytes &&
	       !o->restore_dir && !o->image_dir && same_range(o->uid_range, pool.uid_range);
}

/* Whether a ready sandbox's init still runs. */
static bool alive(struct sandbox *s)
{
	struct pollfd pfd = { .fd = sandbox_watch_fd(s), .events = 0 };
	if (poll(&pfd, 1, 0) != 0) {
		log_info("a sandbox started ahead has ended: another one starts");
		return false;
	}
	return true;
}

/* Whether a ready sandbox can still be handed out. Its copy of /etc is
 * checked only then: that walks /etc, and may copy it. */
static bool usable(struct sandbox *s)
{
	if (!alive(s))
		return false;
	if (!sandbox_root_copies_current(s)) {
		log_info("the host's /etc changed since a sandbox was started ahead: another one "
			 "starts");
		return false;
	}
	return true;
}

struct sandbox *sandbox_pool_take(const struct sandbox_options *o)
{
	if (!fits(o))
		return NULL;
	struct sandbox *s = NULL;
	while (!s) {
		pthread_mutex_lock(&pool.lock);
		struct sandbox *next = pool.count > 0 ? pool.ready[--pool.count] : NULL;
		pthread_cond_broadcast(&pool.changed);
		pthread_mutex_unlock(&pool.lock);
		if (!next)
			return NULL;
		if (usable(next)) {
			s = next;
			log_info("a session takes a sandbox started ahead");
		} else {
			sandbox_destroy(next, NULL);
		}
	}
	struct error failed;
	if (o->cgroup && !sandbox_adopt_cgroup(s, o->cgroup, &failed)) {
		log_warn("a sandbox started ahead could not join its session's cgroup: %s",
			 failed.message);
		sandbox_destroy(s, NULL);
		return NULL;
	}
	for (size_t i = 0; s && o->envs && o->envs[i]; i++) {
		const char *equals = strchr(o->envs[i], '=');
		char name[256];
		if (!equals || (size_t)(equals - o->envs[i]) >= sizeof(name))
			continue; /* the session's layer checks names before this */
		snprintf(name, sizeof(name), "%.*s", (int)(equals - o->envs[i]), o->envs[i]);
		if (!sandbox_set_env(s, name, equals + 1)) {
			sandbox_destroy(s, NULL);
			return NULL;
		}
	}
	return s;
}

/* Destroys the ready ones that have ended; called and
 * returns with pool.lock held, which it lets go while destroying. */
static void prune(void)
{
	struct sandbox *gone[SANDBOX_POOL_MAX];
	unsigned count = 0, kept = 0;
	for (unsigned i = 0; i < pool.count; i++) {
		if (alive(pool.ready[i]))
			pool.ready[kept++] = pool.ready[i];
		else
			gone[count++] = pool.ready[i];
	}
	pool.count = kept;
	if (count == 0)
		return;
	pthread_mutex_unlock(&pool.lock);
	for (unsigned i = 0; i < count; i++)
		sandbox_destroy(gone[i], NULL);
	pthread_mutex_lock(&pool.lock);
}

bool sandbox_pool_give_back(void)
{
	if (!atomic_load(&pool.running))
		return false;
	pthread_mutex_lock(&pool.lock);
	struct sandbox *s = pool.count > 0 ? pool.ready[--pool.count] : NULL;
	if (s)
		pool.held++;
	pthread_mutex_unlock(&pool.lock);
	if (!s)
		return false;
	log_info("a sandbox started ahead is given back: a session found no free uids, and it "
		 "held some");
	sandbox_destroy(s, NULL);
	return true;
}

void sandbox_pool_resume(void)
{
	pthread_mutex_lock(&pool.lock);
	if (pool.held > 0)
		pool.held--;
	pthread_cond_broadcast(&pool.changed);
	pthread_mutex_unlock(&pool.lock);
}

/* The pool's thread: starts sandboxes while fewer than the target are
 * ready. It lives as long as the daemon's sessions may: the sandboxes it
 * starts die with the thread that started them (sandbox.h). */
static void *fill(void *unused)
{
	(void)unused;
	struct sandbox_options options = { .network = true,
					   .uid_range = pool.uid_range,
					   .disk_bytes = pool.disk_bytes };
	int retry_ms = RETRY_FIRST_MS;
	pthread_mutex_lock(&pool.lock);
	while (!pool.stopping) {
		prune();
		if (pool.stopping)
			break;
		if (pool.count + pool.held >= pool.target) {
			struct timespec until = clock_deadline_ms(WATCH_MS);
			pthread_cond_timedwait(&pool.changed, &pool.lock, &until);
			continue;
		}
		pthread_mutex_unlock(&pool.lock);
		struct error err;
		struct sandbox *s = sandbox_create(&options, &err);
		pthread_mutex_lock(&pool.lock);
		if (s && !pool.stopping) {
			pool.ready[pool.count++] = s;
			log_info("a sandbox started ahead is ready");
			retry_ms = RETRY_FIRST_MS;
			continue;
		}
		if (s) {
			pthread_mutex_unlock(&pool.lock);
			sandbox_destroy(s, NULL);
			pthread_mutex_lock(&pool.lock);
			break;
		}
		log_warn("a sandbox started ahead failed (next try in %d s): %s", retry_ms / 1000,
			 err.message);
		struct timespec until = clock_deadline_ms(retry_ms);
		while (!pool.stopping &&
		       pthread_cond_timedwait(&pool.changed, &pool.lock, &until) != ETIMEDOUT)
			;
		retry_ms = retry_ms * 2 < RETRY_MOST_MS ? retry_ms * 2 : RETRY_MOST_MS;
	}
	pthread_mutex_unlock(&pool.lock);
	return NULL;
}

bool sandbox_pool_start(unsigned count, const struct sandbox_uid_range *uid_range,
			uint64_t disk_bytes, struct error *err)
{
	if (count == 0 || atomic_load(&pool.running))
		return true;
	if (count > SANDBOX_POOL_MAX)
		return error_set(err, 0, "at most %d sandboxes are started ahead",
				 SANDBOX_POOL_MAX);
	pool.target = count;
	pool.uid_range = uid_range;
	pool.disk_bytes = disk_bytes;
	pool.fuse = sandbox_root_uses_fuse();
	pool.stopping = false;
	/* Its waits are timed on the monotonic clock (clock_deadline_ms). */
	clock_cond_init(&pool.changed);
	int failed = pthread_create(&pool.thread, NULL, fill, NULL);
	if (failed)
		return error_set(err, failed,
				 "cannot start the thread that starts sandboxes ahead");
	atomic_store(&pool.running, true);
	return true;
}

void sandbox_pool_stop(void)
{
	if (!atomic_load(&pool.running))
		return;
	atomic_store(&pool.running, false); /* no take from here on */
	pthread_mutex_lock(&pool.lock);
	pool.stopping = true;
	pthread_cond_broadcast(&pool.changed);
	pthread_mutex_unlock(&pool.lock);
	/* The thread's end kills what it started and still holds (the death
	 * signal); destroying them reaps them and removes their files. */
	pthread_join(pool.thread, NULL);
	/* Under the lock: a take or give-back that began before the stop
	 * pops under it too, so none is destroyed twice. */
	struct sandbox *left[SANDBOX_POOL_MAX];
	pthread_mutex_lock(&pool.lock);
	unsigned count = pool.count;
	memcpy(left, pool.ready, count * sizeof(left[0]));
	pool.count = 0;
	pthread_mutex_unlock(&pool.lock);
	for (unsigned i = 0; i < count; i++)
		sandbox_destroy(left[i], NULL);
}
