/* SPDX-License-Identifier: MIT */
#include "bridge/tools/context.h"

#include "bridge/session/registry.h"
#include "bridge/session/session.h"
#include "mcp/server.h"

#include <cjson/cJSON.h>

/* What this thread's call holds until tools_call_end. */
#define MAX_HELD 4
static __thread struct bridge_session *held[MAX_HELD];
static __thread int held_count;
static __thread bool answered_with_data;

struct bridge_session *tools_session(struct bridge_tools_context *c, struct mcp_call *call,
				     const cJSON *args)
{
	struct error err;
	if (held_count == MAX_HELD) {
		mcp_call_fail(call, "internal error: too many sessions in one call");
		return NULL;
	}
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(args, "session");
	const char *name = cJSON_IsString(id) ? id->valuestring : NULL;
	struct bridge_session *s = bridge_registry_acquire(c->registry, name, &err);
	if (!s) {
		mcp_call_fail(call, "%s", err.message);
		return NULL;
	}
	held[held_count++] = s;
	return s;
}

struct bridge_session *tools_usable_session(struct bridge_tools_context *c, struct mcp_call *call,
					    const cJSON *args)
{
	struct bridge_session *s = tools_session(c, call, args);
	struct error err;
	if (s && !bridge_session_usable(s, &err)) {
		mcp_call_fail(call, "%s", err.message);
		return NULL;
	}
	return s;
}

void tools_reply_data(struct mcp_call *call, cJSON *object)
{
	tools_reply_data_shown(call, object, NULL);
}

void tools_reply_data_shown(struct mcp_call *call, cJSON *object, cJSON *shown)
{
	if (!object) {
		cJSON_Delete(shown);
		mcp_call_fail(call, "out of memory");
		return;
	}
	mcp_call_structured_shown(call, object, shown);
	answered_with_data = true;
}

bool tools_call_end(void)
{
	while (held_count > 0)
		bridge_session_unref(held[--held_count]);
	bool data = answered_with_data;
	answered_with_data = false;
	return data;
}
