/* SPDX-License-Identifier: MIT */
/* session_info (see info.h). */
#include "bridge/session/info.h"

#include "bridge/session/ports.h"
#include "bridge/session/resources.h"
#include "bridge/session/session.h"
#include "bridge/session/state.h"
#include "sandbox/desktop.h"
#include "sandbox/sandbox.h"
#include "util/clock.h"
#include "vnc/framebuffer.h"
#include "vnc/target.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

static const char *kind_name(enum bridge_session_kind kind)
{
	static const char *const names[] = { "desktop", "bare", "base", "interpreter", "vnc" };
	return names[kind];
}

static void add_time(cJSON *object, const char *name, time_t when)
{
	struct tm tm;
	char text[32];
	gmtime_r(&when, &tm);
	strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
	cJSON_AddStringToObject(object, name, text);
}

cJSON *bridge_session_describe(struct bridge_session *s)
{
	cJSON *info = cJSON_CreateObject();
	if (!info)
		return NULL;
	char size[32], where[300];
	int w, h;
	vnc_framebuffer_size(s->fb, &w, &h);
	snprintf(size, sizeof(size), "%dx%d", w > 0 ? w : s->width, h > 0 ? h : s->height);
	cJSON_AddStringToObject(info, "session", s->id);
	cJSON_AddStringToObject(info, "template", kind_name(s->kind));
	if (s->kind == BRIDGE_ATTACHED) {
		vnc_target_describe(&s->target, where, sizeof(where));
		cJSON_AddStringToObject(info, "vnc", where);
	}
	if (bridge_session_has_screen(s))
		cJSON_AddStringToObject(info, "size", size);
	else
		cJSON_AddNullToObject(info, "size");
	add_time(info, "created", s->created);

	pthread_mutex_lock(&s->lock);
	bool paused = s->paused && s->state == BRIDGE_READY;
	cJSON_AddStringToObject(info, "state",
				paused ? "paused" : bridge_session_state_name(s->state));
	if (s->state == BRIDGE_FAILED || s->state == BRIDGE_RECONNECTING ||
	    s->state == BRIDGE_ENDED)
		cJSON_AddStringToObject(info, "reason", s->failure);
	cJSON_AddNumberToObject(info, "timeout_ms", (double)s->timeout_ms);
	if (s->deadline_ms > 0) {
		int64_t left = s->deadline_ms -
			       (s->paused ? s->paused_at_ms : clock_monotonic_ms());
		add_time(info, "deadline", time(NULL) + (time_t)(left > 0 ? left / 1000 : 0));
		cJSON_AddNumberToObject(info, "remaining_ms", (double)(left > 0 ? left : 0));
	} else {
		cJSON_AddNullToObject(info, "deadline");
	}
	pthread_mutex_unlock(&s->lock);
	cJSON_AddItemToObject(info, "metadata", cJSON_Duplicate(s->metadata, true));
	if (s->volume[0])
		cJSON_AddStringToObject(info, "volume", s->volume);
	if (s->image[0])
		cJSON_AddStringToObject(info, "image", s->image);
	bridge_session_describe_resources(s, info);
	bridge_session_describe_ports(s, info);
	struct sandbox *sandbox = bridge_session_sandbox(s);
	cJSON *isolation = cJSON_AddObjectToObject(info, "sandbox");
	if (sandbox) {
		cJSON_AddBoolToObject(isolation, "isolated", sandbox_isolated(sandbox));
		cJSON_AddBoolToObject(isolation, "network", sandbox_has_network(sandbox));
		cJSON_AddStringToObject(isolation, "isolation",
					sandbox_describe_isolation(sandbox));
	} else {
		cJSON_AddBoolToObject(isolation, "isolated", false);
		cJSON_AddStringToObject(
			isolation, "isolation",
			s->kind == BRIDGE_ATTACHED
				? "none: an attached VNC server the bridge does not run"
				: "none yet: the session has not started");
	}
	return info;
}
