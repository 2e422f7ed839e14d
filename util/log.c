/* SPDX-License-Identifier: MIT */
#include "util/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <stdlib.h>
#include <time.h>

static enum log_level current_level = LOG_INFO;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

void log_set_level(enum log_level level)
{
	current_level = level;
}

void log_init_from_env(void)
{
	const char *value = getenv("LIZARD_LOG");
	if (!value)
		return;
	if (strcasecmp(value, "error") == 0)
		current_level = LOG_ERROR;
	else if (strcasecmp(value, "warn") == 0)
		current_level = LOG_WARN;
	else if (strcasecmp(value, "info") == 0)
		current_level = LOG_INFO;
	else if (strcasecmp(value, "debug") == 0)
		current_level = LOG_DEBUG;
}

int log_enabled(enum log_level level)
{
	return level <= current_level;
}

void log_write(enum log_level level, const char *fmt, ...)
{
	static const char *const names[] = { "error", "warn", "info", "debug" };
	if (!log_enabled(level))
		return;

	char message[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);

	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	struct tm tm;
	gmtime_r(&now.tv_sec, &tm);

	/* One fprintf per line under a lock keeps lines from interleaving. */
	pthread_mutex_lock(&log_lock);
	fprintf(stderr, "%02d:%02d:%02d.%03ld lizard-bridge %s: %s\n", tm.tm_hour, tm.tm_min,
		tm.tm_sec, now.tv_nsec / 1000000L, names[level], message);
	fflush(stderr);
	pthread_mutex_unlock(&log_lock);
}
