/* SPDX-License-Identifier: MIT */
/* The worker pool's bounds: no owner and no group takes it over, quick
 * jobs always find a worker, lanes keep their order. Jobs block until the
 * test lets them go, and note what ran beside them. */
#include "test.h"

#include "mcp/workers.h"

#include <pthread.h>
#include <stdbool.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static bool released;
static int running, most_running;
static int order[64], order_count;

struct job {
	int id;
	bool block; /* wait for release */
	bool started, finished;
};

static void run_job(void *arg)
{
	struct job *job = arg;
	pthread_mutex_lock(&lock);
	job->started = true;
	order[order_count++ % 64] = job->id;
	if (++running > most_running)
		most_running = running;
	pthread_cond_broadcast(&changed);
	while (job->block && !released)
		pthread_cond_wait(&changed, &lock);
	running--;
	job->finished = true;
	pthread_cond_broadcast(&changed);
	pthread_mutex_unlock(&lock);
}

static void reset(void)
{
	pthread_mutex_lock(&lock);
	released = false;
	running = most_running = order_count = 0;
	pthread_mutex_unlock(&lock);
}

static void release_all(void)
{
	pthread_mutex_lock(&lock);
	released = true;
	pthread_cond_broadcast(&changed);
	pthread_mutex_unlock(&lock);
}

/* Waits up to 5 s for flag to be set; true when it was. */
static bool wait_for(const bool *flag)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 5;
	pthread_mutex_lock(&lock);
	while (!*flag && pthread_cond_timedwait(&changed, &lock, &until) == 0)
		;
	bool ok = *flag;
	pthread_mutex_unlock(&lock);
	return ok;
}

/* Gives the pool time to start what it should not: only for asserting
 * that something did not happen, after what should have is seen. */
static void settle(void)
{
	struct timespec pause = { 0, 100 * 1000000L };
	nanosleep(&pause, NULL);
}

static int count_started(const struct job *jobs, int n)
{
	int started = 0;
	for (int i = 0; i < n; i++)
		started += jobs[i].started;
	return started;
}

/* How many of jobs started: once `expected` have (waiting up to 5 s),
 * and a moment for more to start wrongly. */
static int started_of(const struct job *jobs, int n, int expected)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 5;
	pthread_mutex_lock(&lock);
	while (count_started(jobs, n) < expected &&
	       pthread_cond_timedwait(&changed, &lock, &until) == 0)
		;
	pthread_mutex_unlock(&lock);
	settle();
	pthread_mutex_lock(&lock);
	int started = count_started(jobs, n);
	pthread_mutex_unlock(&lock);
	return started;
}

static const struct mcp_workers_limits limits = {
	.threads = 6,
	.reserved = 2,
	.long_per_owner = 3,
	.long_per_group = 2,
	.quick_per_owner = 1,
};

static void one_owner_runs_at_most_its_bound_of_long_jobs(void)
{
	reset();
	struct mcp_workers *w = mcp_workers_create(&limits);
	ASSERT(w);
	struct job jobs[8];
	for (int i = 0; i < 8; i++) {
		jobs[i] = (struct job){ .id = i, .block = true };
		/* Each in a group of its own: only the owner's bound applies. */
		char group[8];
		snprintf(group, sizeof(group), "g%d", i);
		ASSERT(mcp_workers_submit(w, &(struct mcp_job_kind){ .group = group, .owner = "a" },
					  run_job, &jobs[i]));
	}
	ASSERT_EQ(started_of(jobs, 8, 3), 3);
	/* Another owner's long job still runs beside them. */
	struct job other = { .id = 100, .block = true };
	ASSERT(mcp_workers_submit(w, &(struct mcp_job_kind){ .owner = "b" }, run_job, &other));
	ASSERT(wait_for(&other.started));
	release_all();
	mcp_workers_destroy(w);
	for (int i = 0; i < 8; i++)
		ASSERT(jobs[i].finished);
	ASSERT_EQ(most_running, 4);
}

static void one_group_runs_at_most_its_bound_of_long_jobs(void)
{
	reset();
	struct mcp_workers *w = mcp_workers_create(&limits);
	ASSERT(w);
	struct job jobs[6];
	for (int i = 0; i < 6; i++) {
		jobs[i] = (struct job){ .id = i, .block = true };
		/* Owners of their own: only the group's bound applies. */
		char owner[8];
		snprintf(owner, sizeof(owner), "o%d", i);
		ASSERT(mcp_workers_submit(w,
					  &(struct mcp_job_kind){ .group = "desk", .owner = owner },
					  run_job, &jobs[i]));
	}
	ASSERT_EQ(started_of(jobs, 6, 2), 2);
	release_all();
	mcp_workers_destroy(w);
	ASSERT_EQ(most_running, 2);
}

static void quick_jobs_find_a_worker_while_long_ones_fill_the_rest(void)
{
	reset();
	struct mcp_workers *w = mcp_workers_create(&limits);
	ASSERT(w);
	struct job jobs[12];
	for (int i = 0; i < 12; i++) {
		jobs[i] = (struct job){ .id = i, .block = true };
		char owner[8];
		snprintf(owner, sizeof(owner), "o%d", i);
		ASSERT(mcp_workers_submit(w, &(struct mcp_job_kind){ .owner = owner }, run_job,
					  &jobs[i]));
	}
	/* Six workers, two kept back. */
	ASSERT_EQ(started_of(jobs, 12, 4), 4);
	struct job quick = { .id = 50 };
	ASSERT(mcp_workers_submit(w, &(struct mcp_job_kind){ .owner = "o1", .quick = true },
				  run_job, &quick));
	ASSERT(wait_for(&quick.finished));
	release_all();
	mcp_workers_destroy(w);
	for (int i = 0; i < 12; i++)
		ASSERT(jobs[i].finished);
}

static void one_owner_cannot_take_every_worker_with_quick_jobs(void)
{
	reset();
	struct mcp_workers *w = mcp_workers_create(&limits);
	ASSERT(w);
	struct job flood[6], other = { .id = 60 };
	for (int i = 0; i < 6; i++) {
		flood[i] = (struct job){ .id = i, .block = true };
		ASSERT(mcp_workers_submit(w,
					  &(struct mcp_job_kind){ .owner = "flood", .quick = true },
					  run_job, &flood[i]));
	}
	ASSERT_EQ(started_of(flood, 6, 1), 1);
	ASSERT(mcp_workers_submit(w, &(struct mcp_job_kind){ .owner = "other", .quick = true },
				  run_job, &other));
	ASSERT(wait_for(&other.finished));
	release_all();
	mcp_workers_destroy(w);
}

static void a_lane_keeps_its_order_while_a_bound_holds_its_first_job(void)
{
	reset();
	struct mcp_workers *w = mcp_workers_create(&limits);
	ASSERT(w);
	/* The owner's three long places are taken... */
	struct job fill[3], lane[3];
	for (int i = 0; i < 3; i++) {
		fill[i] = (struct job){ .id = 10 + i, .block = true };
		ASSERT(mcp_workers_submit(w, &(struct mcp_job_kind){ .owner = "a" }, run_job,
					  &fill[i]));
	}
	ASSERT_EQ(started_of(fill, 3, 3), 3);
	/* ...so its lane job waits; a quick job of another owner in that lane
	 * must not overtake it, and must not be held by what holds it either
	 * once it is its turn. */
	lane[0] = (struct job){ .id = 20 };
	lane[1] = (struct job){ .id = 21 };
	lane[2] = (struct job){ .id = 22 };
	ASSERT(mcp_workers_submit(w, &(struct mcp_job_kind){ .lane = "L", .owner = "a" }, run_job,
				  &lane[0]));
	ASSERT(mcp_workers_submit(w, &(struct mcp_job_kind){ .lane = "L", .owner = "b" }, run_job,
				  &lane[1]));
	ASSERT(mcp_workers_submit(
		w, &(struct mcp_job_kind){ .lane = "L", .owner = "b", .quick = true }, run_job,
		&lane[2]));
	ASSERT_EQ(started_of(lane, 3, 0), 0);
	release_all();
	ASSERT(wait_for(&lane[2].finished));
	mcp_workers_destroy(w);
	int seen = 0;
	for (int i = 0; i < order_count; i++)
		if (order[i] >= 20 && order[i] <= 22)
			ASSERT_EQ(order[i], 20 + seen++);
	ASSERT_EQ(seen, 3);
}

static void limits_that_make_no_sense_are_refused(void)
{
	ASSERT(!mcp_workers_create(&(struct mcp_workers_limits){ .threads = 2,
								 .reserved = 2,
								 .long_per_owner = 1,
								 .long_per_group = 1,
								 .quick_per_owner = 1 }));
	ASSERT(!mcp_workers_create(&(struct mcp_workers_limits){
		.threads = 2, .long_per_owner = 0, .long_per_group = 1, .quick_per_owner = 1 }));
}

int main(void)
{
	RUN_TEST(one_owner_runs_at_most_its_bound_of_long_jobs);
	RUN_TEST(one_group_runs_at_most_its_bound_of_long_jobs);
	RUN_TEST(quick_jobs_find_a_worker_while_long_ones_fill_the_rest);
	RUN_TEST(one_owner_cannot_take_every_worker_with_quick_jobs);
	RUN_TEST(a_lane_keeps_its_order_while_a_bound_holds_its_first_job);
	RUN_TEST(limits_that_make_no_sense_are_refused);
	TEST_EXIT();
}
