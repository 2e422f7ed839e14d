#include "workers.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct job {
	char *lane;
	mcp_job_fn fn;
	void *arg;
	struct job *next;
};

struct mcp_workers {
	pthread_mutex_t lock;
	pthread_cond_t work;
	struct job *head, *tail;
	char **busy_lanes; /* one slot per thread: the lane it runs, or NULL */
	pthread_t *threads;
	int thread_count;
	bool stopping;
};

static bool lane_busy(struct mcp_workers *w, const char *lane)
{
	for (int i = 0; i < w->thread_count; i++)
		if (w->busy_lanes[i] && strcmp(w->busy_lanes[i], lane) == 0)
			return true;
	return false;
}

/* The oldest job whose lane is free. Skipping a job of a busy lane keeps
 * its later lane-mates behind it, since they are found busy too. */
static struct job *take_runnable(struct mcp_workers *w)
{
	struct job *prev = NULL;
	for (struct job *j = w->head; j; prev = j, j = j->next) {
		if (j->lane && lane_busy(w, j->lane))
			continue;
		if (prev)
			prev->next = j->next;
		else
			w->head = j->next;
		if (w->tail == j)
			w->tail = prev;
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
		w->busy_lanes[slot] = job->lane;
		pthread_mutex_unlock(&w->lock);

		job->fn(job->arg);

		pthread_mutex_lock(&w->lock);
		w->busy_lanes[slot] = NULL;
		free(job->lane);
		free(job);
		/* A lane freed up: its next job is the one newly runnable, and
		 * this worker takes it itself on the next turn of the loop. One
		 * more is woken only while jobs wait, so an idle bridge does not
		 * wake every worker on every call; when stopping, all are, since
		 * those that found the queue not yet empty wait to see it so. */
		if (w->stopping)
			pthread_cond_broadcast(&w->work);
		else if (w->head)
			pthread_cond_signal(&w->work);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

struct mcp_workers *mcp_workers_create(int threads)
{
	struct mcp_workers *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->threads = calloc((size_t)threads, sizeof(*w->threads));
	w->busy_lanes = calloc((size_t)threads, sizeof(*w->busy_lanes));
	if (!w->threads || !w->busy_lanes)
		goto fail;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->work, NULL);
	for (int i = 0; i < threads; i++) {
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
	if (w->thread_count == 0) {
		pthread_cond_destroy(&w->work);
		pthread_mutex_destroy(&w->lock);
		goto fail;
	}
	return w;

fail:
	free(w->threads);
	free(w->busy_lanes);
	free(w);
	return NULL;
}

bool mcp_workers_submit(struct mcp_workers *w, const char *lane, mcp_job_fn fn, void *arg)
{
	struct job *job = calloc(1, sizeof(*job));
	if (!job)
		return false;
	if (lane && !(job->lane = strdup(lane))) {
		free(job);
		return false;
	}
	job->fn = fn;
	job->arg = arg;

	pthread_mutex_lock(&w->lock);
	if (w->stopping) {
		pthread_mutex_unlock(&w->lock);
		free(job->lane);
		free(job);
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
	free(w->busy_lanes);
	free(w);
}
