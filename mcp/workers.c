/* SPDX-License-Identifier: MIT */
#include "mcp/workers.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct job {
	char *lane, *group, *owner;
	bool quick;
	mcp_job_fn fn;
	void *arg;
	struct job *next;
};

struct mcp_workers {
	pthread_mutex_t lock;
	pthread_cond_t work;
	struct job *head, *tail;
	struct job **running; /* one slot per thread: the job it runs, or NULL */
	pthread_t *threads;
	int thread_count;
	struct mcp_workers_limits limits;
	bool stopping;
};

static bool same(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

static void job_free(struct job *job)
{
	free(job->lane);
	free(job->group);
	free(job->owner);
	free(job);
}

/* Whether job may start now, given what runs. */
static bool within_bounds(const struct mcp_workers *w, const struct job *job)
{
	int long_all = 0, long_owner = 0, long_group = 0, quick_owner = 0;
	for (int i = 0; i < w->thread_count; i++) {
		const struct job *r = w->running[i];
		if (!r)
			continue;
		if (job->lane && same(r->lane, job->lane))
			return false;
		if (r->quick) {
			quick_owner += same(r->owner, job->owner);
			continue;
		}
		long_all++;
		long_owner += same(r->owner, job->owner);
		long_group += same(r->group, job->group);
	}
	if (job->quick)
		return !job->owner || quick_owner < w->limits.quick_per_owner;
	return long_all < w->thread_count - w->limits.reserved &&
	       (!job->owner || long_owner < w->limits.long_per_owner) &&
	       (!job->group || long_group < w->limits.long_per_group);
}

/* Lanes of jobs passed over in one look at the queue: a later job of such
 * a lane must wait too, or it would overtake. */
#define HELD_LANES_MAX 64

static bool lane_held(const char *const *held, int count, const struct job *from,
		      const struct job *job)
{
	for (int i = 0; i < count; i++)
		if (same(held[i], job->lane))
			return true;
	if (count < HELD_LANES_MAX)
		return false;
	/* More lanes held than noted: look at the jobs before this one. */
	for (const struct job *j = from; j != job; j = j->next)
		if (same(j->lane, job->lane))
			return true;
	return false;
}

/* The oldest job that may start, taken off the queue. */
static struct job *take_runnable(struct mcp_workers *w)
{
	const char *held[HELD_LANES_MAX];
	int held_count = 0;
	struct job *prev = NULL;
	for (struct job *j = w->head; j; prev = j, j = j->next) {
		bool held_back = j->lane && lane_held(held, held_count, w->head, j);
		if (held_back || !within_bounds(w, j)) {
			if (j->lane && !held_back && held_count < HELD_LANES_MAX)
				held[held_count++] = j->lane;
			continue;
		}
		if (prev)
			prev->next = j->next;
		else
			w->head = j->next;
		if (w->tail == j)
			w->tail = prev;
		j->next = NULL;
		return j;
	}
	return NULL;
}

struct worker_arg {
	struct mcp_workers *workers;
	int slot;
};

static void *worker_main(void *arg)
{
	struct mcp_workers *w = ((struct worker_arg *)arg)->workers;
	int slot = ((struct worker_arg *)arg)->slot;
	free(arg);

	pthread_mutex_lock(&w->lock);
	for (;;) {
		struct job *job = take_runnable(w);
		if (!job) {
			if (w->stopping && !w->head)
				break;
			pthread_cond_wait(&w->work, &w->lock);
			continue;
		}
		w->running[slot] = job;
		/* Others may be startable too (a bound that was full when they
		 * came): one more worker looks. */
		if (w->head)
			pthread_cond_signal(&w->work);
		pthread_mutex_unlock(&w->lock);

		job->fn(job->arg);

		pthread_mutex_lock(&w->lock);
		w->running[slot] = NULL;
		job_free(job);
		/* A bound or a lane freed up. This worker looks itself on the next
		 * turn; the rest only while jobs wait, so an idle bridge does not
		 * wake every worker on every call. When stopping, all are woken,
		 * since those that found the queue not yet empty wait to see it so. */
		if (w->stopping)
			pthread_cond_broadcast(&w->work);
		else if (w->head)
			pthread_cond_signal(&w->work);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

struct mcp_workers *mcp_workers_create(const struct mcp_workers_limits *limits)
{
	if (limits->threads < 1 || limits->reserved < 0 || limits->reserved >= limits->threads ||
	    limits->long_per_owner < 1 || limits->long_per_group < 1 || limits->quick_per_owner < 1)
		return NULL;
	struct mcp_workers *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->limits = *limits;
	w->threads = calloc((size_t)limits->threads, sizeof(*w->threads));
	w->running = calloc((size_t)limits->threads, sizeof(*w->running));
	if (!w->threads || !w->running)
		goto fail;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->work, NULL);
	for (int i = 0; i < limits->threads; i++) {
		struct worker_arg *arg = malloc(sizeof(*arg));
		if (!arg)
			break;
		arg->workers = w;
		arg->slot = i;
		if (pthread_create(&w->threads[i], NULL, worker_main, arg) != 0) {
			free(arg);
			break;
		}
		w->thread_count++;
	}
	/* Fewer threads than asked would break the reservation. */
	if (w->thread_count < limits->threads) {
		mcp_workers_destroy(w);
		return NULL;
	}
	return w;

fail:
	free(w->threads);
	free(w->running);
	free(w);
	return NULL;
}

static bool copy_string(char **to, const char *from)
{
	*to = from ? strdup(from) : NULL;
	return !from || *to;
}

bool mcp_workers_submit(struct mcp_workers *w, const struct mcp_job_kind *kind, mcp_job_fn fn,
			void *arg)
{
	struct job *job = calloc(1, sizeof(*job));
	if (!job)
		return false;
	if (!copy_string(&job->lane, kind->lane) || !copy_string(&job->group, kind->group) ||
	    !copy_string(&job->owner, kind->owner)) {
		job_free(job);
		return false;
	}
	job->quick = kind->quick;
	job->fn = fn;
	job->arg = arg;

	pthread_mutex_lock(&w->lock);
	if (w->stopping) {
		pthread_mutex_unlock(&w->lock);
		job_free(job);
		return false;
	}
	if (w->tail)
		w->tail->next = job;
	else
		w->head = job;
	w->tail = job;
	/* One job, one worker: waking them all would have them fight over the
	 * lock on a machine with fewer cores than workers. */
	pthread_cond_signal(&w->work);
	pthread_mutex_unlock(&w->lock);
	return true;
}

void mcp_workers_destroy(struct mcp_workers *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	w->stopping = true;
	pthread_cond_broadcast(&w->work);
	pthread_mutex_unlock(&w->lock);
	for (int i = 0; i < w->thread_count; i++)
		pthread_join(w->threads[i], NULL);
	pthread_cond_destroy(&w->work);
	pthread_mutex_destroy(&w->lock);
	free(w->threads);
	free(w->running);
	free(w);
}
