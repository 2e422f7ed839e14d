/* SPDX-License-Identifier: MIT */
#include "bridge/session/registry.h"

#include "bridge/session/session.h"
#include "bridge/session/info.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/utf8.h"
#include "vnc/framebuffer.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <stdlib.h>
#include <time.h>

#define REAPER_TICK_MS 100

struct release {
	struct bridge_session *session;
	struct release *next;
};

struct bridge_registry {
	pthread_mutex_t lock;
	pthread_cond_t stop_signal; /* also: something to release */
	struct bridge_session *sessions[BRIDGE_MAX_SESSIONS];
	size_t count;
	struct release *releases; /* references to drop on the reaper */
	bool stopping;            /* the reaper ends */
	bool shut_down;           /* no session may be added or acquired any more */
	pthread_t reaper;
};

/* Drops the queued references; called without the lock. */
static void release_all(struct release *r)
{
	while (r) {
		struct release *next = r->next;
		bridge_session_unref(r->session);
		free(r);
		r = next;
	}
}

void bridge_registry_release(struct bridge_registry *r, struct bridge_session *s)
{
	if (!s)
		return;
	struct release *entry = malloc(sizeof(*entry));
	if (!entry) {
		bridge_session_unref(s); /* out of memory: here, then */
		return;
	}
	pthread_mutex_lock(&r->lock);
	bool reaper_gone = r->shut_down;
	if (!reaper_gone) {
		entry->session = s;
		entry->next = r->releases;
		r->releases = entry;
		pthread_cond_broadcast(&r->stop_signal);
	}
	pthread_mutex_unlock(&r->lock);
	if (reaper_gone) { /* shutting down: nobody else will */
		free(entry);
		bridge_session_unref(s);
	}
}

void bridge_registry_new_id(char *id, size_t size)
{
	unsigned char bytes[4];
	if (getrandom(bytes, sizeof(bytes), 0) != (ssize_t)sizeof(bytes))
		memset(bytes, 0, sizeof(bytes));
	snprintf(id, size, "s-%02x%02x%02x%02x", bytes[0], bytes[1], bytes[2], bytes[3]);
}

/* Removes sessions whose deadline passed; they end outside the lock. */
static void reap(struct bridge_registry *r)
{
	struct bridge_session *expired[BRIDGE_MAX_SESSIONS];
	size_t n = 0;
	int64_t now = clock_monotonic_ms();
	pthread_mutex_lock(&r->lock);
	for (size_t i = 0; i < r->count;) {
		int64_t deadline = bridge_session_deadline(r->sessions[i]);
		if (deadline > 0 && now >= deadline) {
			expired[n++] = r->sessions[i];
			r->sessions[i] = r->sessions[--r->count];
		} else {
			i++;
		}
	}
	pthread_mutex_unlock(&r->lock);
	for (size_t i = 0; i < n; i++) {
		bridge_session_end(expired[i], "its deadline passed");
		bridge_session_unref(expired[i]);
	}
}

static void *reaper_main(void *arg)
{
	struct bridge_registry *r = arg;
	pthread_mutex_lock(&r->lock);
	while (!r->stopping) {
		struct timespec tick = clock_deadline_ms(REAPER_TICK_MS);
		if (!r->releases)
			pthread_cond_timedwait(&r->stop_signal, &r->lock, &tick);
		struct release *releases = r->releases;
		r->releases = NULL;
		pthread_mutex_unlock(&r->lock);
		release_all(releases);
		reap(r);
		pthread_mutex_lock(&r->lock);
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

struct bridge_registry *bridge_registry_create(void)
{
	struct bridge_registry *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	pthread_mutex_init(&r->lock, NULL);
	clock_cond_init(&r->stop_signal);
	if (pthread_create(&r->reaper, NULL, reaper_main, r) != 0) {
		pthread_cond_destroy(&r->stop_signal);
		pthread_mutex_destroy(&r->lock);
		free(r);
		return NULL;
	}
	return r;
}

void bridge_registry_shutdown(struct bridge_registry *r)
{
	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	bool first = !r->shut_down;
	r->stopping = true;
	r->shut_down = true;
	pthread_cond_broadcast(&r->stop_signal);
	/* The list is emptied under the lock, so no worker can acquire a
	 * session from here on, and each is ended and released exactly once,
	 * whoever else still holds a reference. */
	struct bridge_session *held[BRIDGE_MAX_SESSIONS];
	size_t n = r->count;
	memcpy(held, r->sessions, n * sizeof(*held));
	r->count = 0;
	pthread_mutex_unlock(&r->lock);
	if (first)
		pthread_join(r->reaper, NULL);
	/* References handed over after the reaper ended are dropped here. */
	pthread_mutex_lock(&r->lock);
	struct release *releases = r->releases;
	r->releases = NULL;
	pthread_mutex_unlock(&r->lock);
	release_all(releases);
	for (size_t i = 0; i < n; i++) {
		bridge_session_end(held[i], "the bridge is shutting down");
		bridge_session_unref(held[i]);
	}
}

void bridge_registry_destroy(struct bridge_registry *r)
{
	if (!r)
		return;
	bridge_registry_shutdown(r);
	pthread_cond_destroy(&r->stop_signal);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

bool bridge_registry_add(struct bridge_registry *r, struct bridge_session *s, struct error *err)
{
	pthread_mutex_lock(&r->lock);
	bool shut_down = r->shut_down;
	bool ok = !shut_down && r->count < BRIDGE_MAX_SESSIONS;
	if (ok)
		r->sessions[r->count++] = bridge_session_ref(s);
	pthread_mutex_unlock(&r->lock);
	if (shut_down)
		error_set(err, 0, "the bridge is shutting down");
	else if (!ok)
		error_set(err, 0, "the bridge already holds %d sessions; kill one first",
			  BRIDGE_MAX_SESSIONS);
	return ok;
}

static void list_locked(struct bridge_registry *r, char *out, size_t size)
{
	size_t used = 0;
	out[0] = '\0';
	for (size_t i = 0; i < r->count; i++) {
		int n = snprintf(out + used, size - used, "%s%s", i ? ", " : "",
				 bridge_session_id(r->sessions[i]));
		if (n < 0 || (size_t)n >= size - used)
			break;
		used += (size_t)n;
	}
}

static struct bridge_session *find_locked(struct bridge_registry *r, const char *id)
{
	for (size_t i = 0; i < r->count; i++)
		if (strcmp(bridge_session_id(r->sessions[i]), id) == 0)
			return r->sessions[i];
	return NULL;
}

struct bridge_session *bridge_registry_acquire(struct bridge_registry *r, const char *id,
					       struct error *err)
{
	char known[512];
	pthread_mutex_lock(&r->lock);
	struct bridge_session *s = id ? find_locked(r, id) : r->count == 1 ? r->sessions[0] : NULL;
	if (s)
		bridge_session_ref(s);
	list_locked(r, known, sizeof(known));
	size_t count = r->count;
	bool shut_down = r->shut_down;
	pthread_mutex_unlock(&r->lock);
	if (s)
		return s;
	char shown[65];
	if (shut_down)
		error_set(err, 0, "the bridge is shutting down");
	else if (count == 0)
		error_set(err, 0, "there is no session; create one with create_session");
	else if (id)
		error_set(err, 0, "no session '%s'; the sessions are: %s",
			  utf8_excerpt(shown, sizeof(shown), id), known);
	else
		error_set(err, 0, "there are %zu sessions; say which with \"session\": %s", count,
			  known);
	return NULL;
}

bool bridge_registry_kill(struct bridge_registry *r, const char *id, const char *why,
			  struct error *err)
{
	char known[512];
	pthread_mutex_lock(&r->lock);
	struct bridge_session *s = NULL;
	for (size_t i = 0; i < r->count && !s; i++) {
		if (strcmp(bridge_session_id(r->sessions[i]), id) == 0) {
			s = r->sessions[i];
			r->sessions[i] = r->sessions[--r->count];
		}
	}
	list_locked(r, known, sizeof(known));
	pthread_mutex_unlock(&r->lock);
	if (!s) {
		char shown[65];
		error_set(err, 0, "no session '%s'; the sessions are: %s",
			  utf8_excerpt(shown, sizeof(shown), id), known[0] ? known : "(none)");
		return false;
	}
	bridge_session_end(s, why);
	bridge_session_unref(s);
	return true;
}

size_t bridge_registry_snapshot(struct bridge_registry *r, struct bridge_session **out, size_t max)
{
	pthread_mutex_lock(&r->lock);
	size_t n = r->count < max ? r->count : max;
	for (size_t i = 0; i < n; i++)
		out[i] = bridge_session_ref(r->sessions[i]);
	pthread_mutex_unlock(&r->lock);
	return n;
}

cJSON *bridge_registry_describe(struct bridge_registry *r)
{
	struct bridge_session *held[BRIDGE_MAX_SESSIONS];
	size_t n = bridge_registry_snapshot(r, held, BRIDGE_MAX_SESSIONS);
	cJSON *list = cJSON_CreateArray();
	for (size_t i = 0; i < n; i++) {
		if (list)
			cJSON_AddItemToArray(list, bridge_session_describe(held[i]));
		bridge_session_unref(held[i]);
	}
	return list;
}

void bridge_registry_visit(struct bridge_registry *r,
			   void (*fn)(struct bridge_session *session, void *context), void *context)
{
	pthread_mutex_lock(&r->lock);
	for (size_t i = 0; i < r->count; i++)
		fn(r->sessions[i], context);
	pthread_mutex_unlock(&r->lock);
}

void bridge_registry_count_states(struct bridge_registry *r, int counts[5])
{
	memset(counts, 0, sizeof(int) * 5);
	pthread_mutex_lock(&r->lock);
	for (size_t i = 0; i < r->count; i++)
		counts[bridge_session_state(r->sessions[i])]++;
	pthread_mutex_unlock(&r->lock);
}

bool bridge_registry_lane(struct bridge_registry *r, const char *id, char *lane, size_t size)
{
	pthread_mutex_lock(&r->lock);
	struct bridge_session *s = id ? find_locked(r, id) : r->count == 1 ? r->sessions[0] : NULL;
	if (s)
		snprintf(lane, size, "session:%s", bridge_session_id(s));
	pthread_mutex_unlock(&r->lock);
	return s != NULL;
}
