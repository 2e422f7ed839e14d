/* SPDX-License-Identifier: MIT */
/* A root daemon's user and network namespaces (sandbox/userns.c), made by
 * many threads at once, as sessions, sandboxes started ahead and roots made
 * ahead do. Each is made by a child that shares the daemon's memory but
 * has a copy of its descriptors; two such children that each held the
 * other's pipe waited for each other for ever, and so did their threads. */
#include "test.h"

#include "sandbox/userns.h"
#include "util/error.h"

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#define THREADS 4
#define ROUNDS 150
/* Far more than the rounds take (a few seconds), far less than a hang. */
#define DEADLINE_S 60

static atomic_int finished, made;
static char first_error[sizeof(((struct error *)0)->message)];
static pthread_mutex_t error_lock = PTHREAD_MUTEX_INITIALIZER;

static void *make_many(void *arg)
{
	uid_t owner = 3900000 + (uid_t)(intptr_t)arg;
	for (int i = 0; i < ROUNDS; i++) {
		struct error err = { 0 };
		int user = sandbox_userns_make(owner, 1, &err);
		int net = user >= 0 ? sandbox_netns_make(user, &err) : -1;
		if (net >= 0)
			atomic_fetch_add(&made, 1);
		else {
			pthread_mutex_lock(&error_lock);
			if (!first_error[0])
				snprintf(first_error, sizeof(first_error), "%s", err.message);
			pthread_mutex_unlock(&error_lock);
		}
		if (user >= 0)
			close(user);
		if (net >= 0)
			close(net);
	}
	atomic_fetch_add(&finished, 1);
	return NULL;
}

static int open_descriptors(void)
{
	DIR *dir = opendir("/proc/self/fd");
	int n = 0;
	if (!dir)
		return -1;
	while (readdir(dir))
		n++;
	closedir(dir);
	return n;
}

static void namespaces_made_at_once_by_many_threads_all_arrive(void)
{
	if (geteuid() != 0)
		SKIP("only a root daemon makes namespaces with maps of other ids");
	int before = open_descriptors();
	pthread_t threads[THREADS];
	for (intptr_t t = 0; t < THREADS; t++)
		ASSERT(pthread_create(&threads[t], NULL, make_many, (void *)t) == 0);
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		nanosleep(&(struct timespec){ .tv_nsec = 20 * 1000000L }, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (atomic_load(&finished) < THREADS && now.tv_sec - start.tv_sec < DEADLINE_S);
	if (atomic_load(&finished) < THREADS) {
		/* The stuck threads cannot be joined: report and leave. */
		fprintf(stderr, "%s:%d: %d of %d threads still wait after %d s (%d made)\n",
			__FILE__, __LINE__, THREADS - atomic_load(&finished), THREADS, DEADLINE_S,
			atomic_load(&made));
		_exit(EXIT_FAILURE);
	}
	for (int t = 0; t < THREADS; t++)
		pthread_join(threads[t], NULL);
	if (first_error[0])
		FAIL_AT("a namespace was not made: %s", first_error);
	ASSERT_EQ(atomic_load(&made), THREADS * ROUNDS);
	ASSERT_EQ(open_descriptors(), before);
}

int main(void)
{
	RUN_TEST(namespaces_made_at_once_by_many_threads_all_arrive);
	TEST_EXIT();
}
