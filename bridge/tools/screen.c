/* Tools that look: screenshot, cursor_position, screen_size. */
#include "bridge/tools/common.h"

#include "bridge/session/session.h"
#include "bridge/session/resources.h"
#include "mcp/server.h"
#include "vnc/framebuffer.h"

#include <cjson/cJSON.h>
#include <stdio.h>

static void screenshot(struct mcp_call *call, const cJSON *args, void *userdata)
{
	/* A paused session's framebuffer holds the last frame before the pause. */
	struct bridge_session *s = tools_session(userdata, call, args);
	bool paused = s && bridge_session_paused(s) && bridge_session_state(s) == BRIDGE_READY;
	struct error err;
	if (s && !paused && !bridge_session_usable(s, &err)) {
		mcp_call_fail(call, "%s", err.message);
		return;
	}
	if (!s)
		return;
	struct vnc_framebuffer *fb = bridge_session_framebuffer(s);
	bool settled = true;
	if (!paused && tools_bool(args, "settle", false)) {
		enum vnc_wait_result r = vnc_framebuffer_wait_settled(
			fb, 0, SETTLE_QUIET_MS, SETTLE_TIMEOUT_MS);
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
	if (!tools_add_screenshot(s, call, jregion ? region : NULL,
				  tools_string(args, "format", "png"), tools_int(args, "quality", 80),
				  tools_bool(args, "show_cursor", true)))
		return;
	if (!settled)
		mcp_call_text(call, "The screen was still changing after %d ms.", SETTLE_TIMEOUT_MS);
	if (paused)
		mcp_call_text(call, "Session %s is paused: this is the last frame before the "
				    "pause. resume_session lets it continue.",
			      bridge_session_id(s));
}

static void cursor_position(struct mcp_call *call, const cJSON *args, void *userdata)
{
	struct bridge_session *s = tools_usable_session(userdata, call, args);
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
	mcp_call_structured(call, reply);
}

static void screen_size(struct mcp_call *call, const cJSON *args, void *userdata)
{
	struct bridge_session *s = tools_usable_session(userdata, call, args);
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
	mcp_call_structured(call, reply);
}

static const struct mcp_tool screen_tools[] = {
	{
		.name = "screenshot",
		.quick = true,
		.title = "Take a screenshot",
		.description =
			"Capture the screen as an image with the mouse pointer drawn in. Its "
			"coordinates are the ones every other tool takes (large screens come "
			"scaled; the text says how). region [x1, y1, x2, y2] zooms into part of "
			"the screen at full resolution. settle waits until the screen stops "
			"changing first.",
		.input_schema =
			"{\"type\":\"object\",\"properties\":{"
			"\"region\":{\"type\":\"array\",\"items\":{\"type\":\"integer\","
			"\"minimum\":0},\"minItems\":4,\"maxItems\":4,\"description\":\"[x1, y1, "
			"x2, y2]: the top-left and bottom-right corners to zoom into.\"},"
			"\"format\":{\"type\":\"string\",\"enum\":[\"png\",\"jpeg\"],"
			"\"description\":\"Default png (exact); jpeg is smaller.\"},"
			"\"quality\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100,"
			"\"description\":\"JPEG quality, default 80.\"},"
			"\"settle\":{\"type\":\"boolean\",\"description\":\"Wait until nothing "
			"has changed for 300 ms (at most 5 s) before capturing. Default false.\"},"
			"\"show_cursor\":{\"type\":\"boolean\",\"description\":\"Draw the mouse "
			"pointer. Default true.\"}," SESSION_PROPERTY "}}",
		.handler = screenshot,
		.read_only = true,
	},
	{
		.name = "cursor_position",
		.quick = true,
		.title = "Mouse pointer position",
		.description = "Where the mouse pointer is, as JSON {\"x\":..,\"y\":..} in "
			       "screenshot coordinates.",
		.input_schema = "{\"type\":\"object\",\"properties\":{" SESSION_PROPERTY "}}",
		.output_schema = "{\"type\":\"object\",\"properties\":{"
				 "\"x\":{\"type\":\"integer\",\"minimum\":0},"
				 "\"y\":{\"type\":\"integer\",\"minimum\":0}},"
				 "\"required\":[\"x\",\"y\"],\"additionalProperties\":false}",
		.handler = cursor_position,
		.read_only = true,
	},
	{
		.name = "screen_size",
		.quick = true,
		.title = "Screen size",
		.description = "The screen's size in screenshot coordinates as JSON "
			       "{\"width\":..,\"height\":..} (plus native_width and native_height "
			       "when screenshots are scaled). Valid coordinates are 0..width-1 and "
			       "0..height-1.",
		.input_schema = "{\"type\":\"object\",\"properties\":{" SESSION_PROPERTY "}}",
		.output_schema =
			"{\"type\":\"object\",\"properties\":{"
			"\"width\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"In "
			"screenshot coordinates.\"},"
			"\"height\":{\"type\":\"integer\",\"minimum\":1},"
			"\"native_width\":{\"type\":\"integer\",\"minimum\":1,\"description\":"
			"\"Screen pixels, only when screenshots are scaled.\"},"
			"\"native_height\":{\"type\":\"integer\",\"minimum\":1}},"
			"\"required\":[\"width\",\"height\"],\"additionalProperties\":false}",
		.handler = screen_size,
		.read_only = true,
	},
};

bool tools_register_screen(struct mcp_server *server, struct bridge_tools_context *context)
{
	return tools_register(server, context, screen_tools, sizeof(screen_tools) / sizeof(screen_tools[0]));
}
