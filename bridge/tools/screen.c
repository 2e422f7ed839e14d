/* SPDX-License-Identifier: MIT */
#include "bridge/tools/screen.h"

#include "bridge/tools/common.h"

#include "bridge/session/session.h"
#include "bridge/session/resources.h"
#include "mcp/server.h"
#include "vnc/framebuffer.h"

#include <cjson/cJSON.h>
#include <stdio.h>

void tools_screenshot(struct mcp_call *call, const cJSON *args,
		      struct bridge_tools_context *context)
{
	/* A paused session's framebuffer holds the last frame before the pause. */
	struct bridge_session *s = tools_session(context, call, args);
	bool paused = s && bridge_session_paused(s) && bridge_session_state(s) == BRIDGE_READY;
	struct error err;
	if (s && (!paused || !bridge_session_has_screen(s)) && !bridge_session_usable(s, &err)) {
		mcp_call_fail(call, "%s", err.message);
		return;
	}
	if (!s)
		return;
	struct vnc_framebuffer *fb = bridge_session_framebuffer(s);
	bool settled = true;
	if (!paused && tools_bool(args, "settle", false)) {
		enum vnc_wait_result r = vnc_framebuffer_wait_settled(fb, 0, SETTLE_QUIET_MS,
								      SETTLE_TIMEOUT_MS);
		if (r == VNC_WAIT_CLOSED) {
			mcp_call_fail(call, "the desktop connection closed while waiting");
			return;
		}
		settled = r == VNC_WAIT_OK;
	}
	int region[4];
	const cJSON *jregion = cJSON_GetObjectItemCaseSensitive(args, "region");
	for (int i = 0; jregion && i < 4; i++)
		region[i] = cJSON_GetArrayItem(jregion, i)->valueint;
	if (!tools_add_screenshot(
		    s, call, jregion ? region : NULL, tools_string(args, "format", "png"),
		    tools_int(args, "quality", 80), tools_bool(args, "show_cursor", true)))
		return;
	if (!settled)
		mcp_call_text(call, "The screen was still changing after %d ms.",
			      SETTLE_TIMEOUT_MS);
	if (paused)
		mcp_call_text(call,
			      "Session %s is paused: this is the last frame before the "
			      "pause. resume_session lets it continue.",
			      bridge_session_id(s));
}

void tools_cursor_position(struct mcp_call *call, const cJSON *args,
			   struct bridge_tools_context *context)
{
	struct bridge_session *s = tools_usable_session(context, call, args);
	if (!s)
		return;
	int x, y;
	tools_pointer(s, &x, &y);
	cJSON *reply = cJSON_CreateObject();
	if (!reply || !cJSON_AddNumberToObject(reply, "x", x) ||
	    !cJSON_AddNumberToObject(reply, "y", y)) {
		cJSON_Delete(reply);
		mcp_call_fail(call, "out of memory");
		return;
	}
	tools_reply_data(call, reply);
}

void tools_screen_size(struct mcp_call *call, const cJSON *args,
		       struct bridge_tools_context *context)
{
	struct bridge_session *s = tools_usable_session(context, call, args);
	if (!s)
		return;
	struct agent_space space;
	tools_agent_space(s, &space);
	cJSON *reply = cJSON_CreateObject();
	bool ok = reply && cJSON_AddNumberToObject(reply, "width", space.width) &&
		  cJSON_AddNumberToObject(reply, "height", space.height);
	if (ok && space.scaled)
		ok = cJSON_AddNumberToObject(reply, "native_width", space.native_width) &&
		     cJSON_AddNumberToObject(reply, "native_height", space.native_height);
	if (!ok) {
		cJSON_Delete(reply);
		mcp_call_fail(call, "out of memory");
		return;
	}
	tools_reply_data(call, reply);
}
