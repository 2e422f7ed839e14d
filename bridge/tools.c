#include "tools_internal.h"

#include "session.h"
#include "../mcp/server.h"
#include "../vnc/framebuffer.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

static void list_sessions_locked(struct bridge_context *c, char *out, size_t size)
{
	size_t used = 0;
	out[0] = '\0';
	for (size_t i = 0; i < c->session_count; i++) {
		int n = snprintf(out + used, size - used, "%s%s", i ? ", " : "",
				 bridge_session_id(c->sessions[i]));
		if (n < 0 || (size_t)n >= size - used)
			break;
		used += (size_t)n;
	}
}

struct bridge_session *tools_session(struct bridge_context *c, struct mcp_call *call,
				     const cJSON *args)
{
	const char *wanted = tools_string(args, "session", NULL);
	struct bridge_session *found = NULL;
	char known[512];
	pthread_mutex_lock(&c->lock);
	if (wanted) {
		for (size_t i = 0; i < c->session_count && !found; i++)
			if (strcmp(bridge_session_id(c->sessions[i]), wanted) == 0)
				found = c->sessions[i];
	} else if (c->session_count == 1) {
		found = c->sessions[0];
	}
	list_sessions_locked(c, known, sizeof(known));
	size_t count = c->session_count;
	pthread_mutex_unlock(&c->lock);

	if (found)
		return found;
	if (count == 0)
		mcp_call_fail(call, "there is no session; create one with create_session");
	else if (wanted)
		mcp_call_fail(call, "no session '%.64s'; the sessions are: %s", wanted, known);
	else
		mcp_call_fail(call, "there are %zu sessions; say which with \"session\": %s", count,
			      known);
	return NULL;
}

struct bridge_session *tools_usable_session(struct bridge_context *c, struct mcp_call *call,
					    const cJSON *args)
{
	struct bridge_session *s = tools_session(c, call, args);
	char err[320];
	if (s && !bridge_session_usable(s, err, sizeof(err))) {
		mcp_call_fail(call, "%s", err);
		return NULL;
	}
	return s;
}

int tools_int(const cJSON *args, const char *name, int def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, name);
	return cJSON_IsNumber(v) ? (int)v->valuedouble : def;
}

const char *tools_string(const cJSON *args, const char *name, const char *def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, name);
	return cJSON_IsString(v) ? v->valuestring : def;
}

bool tools_bool(const cJSON *args, const char *name, bool def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, name);
	return cJSON_IsBool(v) ? cJSON_IsTrue(v) : def;
}

bool tools_point(struct bridge_session *s, struct mcp_call *call, const cJSON *args,
		 bool required, int *x, int *y)
{
	const cJSON *jx = cJSON_GetObjectItemCaseSensitive(args, "x");
	const cJSON *jy = cJSON_GetObjectItemCaseSensitive(args, "y");
	struct vnc_framebuffer *fb = bridge_session_framebuffer(s);
	if (!jx && !jy && !required) {
		vnc_framebuffer_cursor_position(fb, x, y);
		return true;
	}
	if (!jx || !jy) {
		mcp_call_fail(call, "give both x and y%s", required ? "" : ", or neither to use "
								     "the pointer position");
		return false;
	}
	int width, height;
	vnc_framebuffer_size(fb, &width, &height);
	double vx = jx->valuedouble, vy = jy->valuedouble;
	if (vx < 0 || vx >= width || vy < 0 || vy >= height) {
		mcp_call_fail(call,
			      "(%.0f, %.0f) is outside the %dx%d screen; x must be 0..%d and y "
			      "0..%d",
			      vx, vy, width, height, width - 1, height - 1);
		return false;
	}
	*x = (int)vx;
	*y = (int)vy;
	return true;
}

bool bridge_tools_register(struct mcp_server *server, struct bridge_context *context)
{
	return tools_register_screen(server, context) && tools_register_input(server, context);
}
