/* SPDX-License-Identifier: MIT */
/* A session's exposed ports and access token (see ports.h). */
#include "bridge/session/ports.h"

#include "bridge/session/state.h"
#include "sandbox/desktop.h"
#include "sandbox/port.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

/* Not session.h's: session.c calls in here, and modules do not go round
 * in circles. */
static struct sandbox *sandbox_of(struct bridge_session *s)
{
	return s->desktop ? sandbox_desktop_sandbox(s->desktop) : NULL;
}

static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static void (*watch_fn)(void *);
static void *watch_context;

bool bridge_session_ports_init(struct bridge_session *s, struct error *err)
{
	unsigned char bytes[32];
	if (getrandom(bytes, sizeof(bytes), 0) != (ssize_t)sizeof(bytes))
		return error_set(err, errno, "cannot make the session's access token");
	/* base64url without padding: fits a URL, a cookie and a header as is. */
	static const char alphabet[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	size_t out = 0;
	for (size_t i = 0; i < sizeof(bytes); i += 3) {
		unsigned v = (unsigned)bytes[i] << 16;
		v |= i + 1 < sizeof(bytes) ? (unsigned)bytes[i + 1] << 8 : 0;
		v |= i + 2 < sizeof(bytes) ? bytes[i + 2] : 0;
		size_t chars = i + 2 < sizeof(bytes) ? 4 : i + 1 < sizeof(bytes) ? 3 : 2;
		for (size_t k = 0; k < chars; k++)
			s->access_token[out++] = alphabet[(v >> (18 - 6 * k)) & 63];
	}
	s->access_token[out] = '\0';
	return true;
}

static int find_port(const struct bridge_session *s, int port)
{
	for (int i = 0; i < s->exposed_count; i++)
		if (s->exposed_ports[i] == port)
			return i;
	return -1;
}

bool bridge_session_expose_port(struct bridge_session *s, int port, struct error *err)
{
	if (port < 1 || port > 65535)
		return error_set(err, 0, "port %d is not in 1..65535", port);
	if (!sandbox_of(s))
		return error_set(err, 0,
				 "session %s is an attached VNC server: it has no sandbox whose "
				 "ports could be exposed",
				 s->id);
	pthread_mutex_lock(&s->lock);
	bool ok = true;
	if (s->state == BRIDGE_ENDED || s->state == BRIDGE_FAILED)
		ok = error_set(err, 0, "session %s has ended", s->id);
	else if (find_port(s, port) < 0 && s->exposed_count >= BRIDGE_SESSION_MAX_PORTS)
		ok = error_set(err, 0,
			       "session %s already exposes %d ports; unexpose_port one first",
			       s->id, BRIDGE_SESSION_MAX_PORTS);
	else if (find_port(s, port) < 0)
		s->exposed_ports[s->exposed_count++] = port;
	pthread_mutex_unlock(&s->lock);
	return ok;
}

bool bridge_session_unexpose_port(struct bridge_session *s, int port, struct error *err)
{
	pthread_mutex_lock(&s->lock);
	int i = find_port(s, port);
	if (i >= 0)
		s->exposed_ports[i] = s->exposed_ports[--s->exposed_count];
	pthread_mutex_unlock(&s->lock);
	if (i < 0)
		return error_set(err, 0, "port %d of session %s is not exposed", port, s->id);
	bridge_session_ports_changed();
	return true;
}

bool bridge_session_port_exposed(struct bridge_session *s, int port)
{
	pthread_mutex_lock(&s->lock);
	bool exposed = find_port(s, port) >= 0 && s->state != BRIDGE_ENDED;
	pthread_mutex_unlock(&s->lock);
	return exposed;
}

void bridge_session_access_token(struct bridge_session *s, char *out, size_t size)
{
	snprintf(out, size, "%s", s->access_token);
}

bool bridge_session_token_matches(struct bridge_session *s, const char *token, size_t len)
{
	size_t want = strlen(s->access_token);
	if (len != want)
		return false;
	unsigned char diff = 0;
	for (size_t i = 0; i < len; i++)
		diff |= (unsigned char)(token[i] ^ s->access_token[i]);
	return diff == 0;
}

void bridge_session_describe_ports(struct bridge_session *s, cJSON *info)
{
	if (!sandbox_of(s))
		return;
	cJSON_AddStringToObject(info, "access_token", s->access_token);
	cJSON *ports = cJSON_AddArrayToObject(info, "exposed_ports");
	pthread_mutex_lock(&s->lock);
	for (int i = 0; ports && i < s->exposed_count; i++)
		cJSON_AddItemToArray(ports, cJSON_CreateNumber(s->exposed_ports[i]));
	pthread_mutex_unlock(&s->lock);
}

bool bridge_session_dial_port(struct bridge_session *s, int port, int *pending, struct error *err)
{
	*pending = -1;
	struct sandbox *sandbox = sandbox_of(s);
	if (!sandbox)
		return error_set(err, 0, "session %s has no sandbox", s->id);
	pthread_mutex_lock(&s->lock);
	enum bridge_session_state state = s->state;
	bool paused = s->paused;
	pthread_mutex_unlock(&s->lock);
	if (state != BRIDGE_READY) {
		error_set(err, 0, "session %s is %s", s->id,
			  state == BRIDGE_STARTING ? "still starting; try again in a moment"
						   : "not running");
		err->code = EAGAIN;
		return false;
	}
	if (paused) {
		/* A frozen init cannot start the dialler: say so instead. */
		error_set(err, 0, "session %s is paused; resume_session it first", s->id);
		err->code = EAGAIN;
		return false;
	}
	return sandbox_port_dial_start(sandbox, port, pending, err);
}

int bridge_session_dial_finish(int pending, int port, struct error *err)
{
	return sandbox_port_dial_finish(pending, port, err);
}

void bridge_session_set_port_watch(void (*fn)(void *context), void *context)
{
	pthread_mutex_lock(&watch_lock);
	watch_fn = fn;
	watch_context = context;
	pthread_mutex_unlock(&watch_lock);
}

void bridge_session_ports_changed(void)
{
	/* Under the lock, so that set_port_watch(NULL) returns only once no
	 * call to the old watcher runs; the watcher only wakes a loop. */
	pthread_mutex_lock(&watch_lock);
	if (watch_fn)
		watch_fn(watch_context);
	pthread_mutex_unlock(&watch_lock);
}
