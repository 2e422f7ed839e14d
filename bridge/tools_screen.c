/* Tools that look: screenshot, cursor_position, screen_size. */
#include "tools_internal.h"

#include "session.h"
#include "../mcp/server.h"
#include "../vnc/framebuffer.h"
#include "../vnc/png.h"

#include <cjson/cJSON.h>
#include <stdio.h>

/* "settle": the screen counts as settled after this long without change. */
#define SETTLE_QUIET_MS 150
#define SETTLE_TIMEOUT_MS 3000

static void screenshot(struct mcp_call *call, const cJSON *args, void *userdata)
{
	struct bridge_session *s = tools_usable_session(userdata, call, args);
	if (!s)
		return;
	struct vnc_framebuffer *fb = bridge_session_framebuffer(s);
	bool settled = true;
	if (tools_bool(args, "settle", false)) {
		enum vnc_wait_result r =
			vnc_framebuffer_wait_settled(fb, SETTLE_QUIET_MS, SETTLE_TIMEOUT_MS);
		if (r == VNC_WAIT_CLOSED) {
			mcp_call_fail(call, "the desktop connection closed while waiting");
			return;
		}
		settled = r == VNC_WAIT_OK;
	}

	struct vnc_image image;
	if (!vnc_framebuffer_snapshot(fb, NULL, tools_bool(args, "show_cursor", true), &image,
				      NULL)) {
		mcp_call_fail(call, "the desktop has no picture yet; try again in a moment");
		return;
	}
	struct vnc_bytes png;
	if (!vnc_png_encode(&image, &png)) {
		vnc_image_finish(&image);
		mcp_call_fail(call, "encoding the screenshot failed (out of memory?)");
		return;
	}
	if (!mcp_call_image(call, png.data, png.len, "image/png"))
		mcp_call_fail(call, "out of memory while sending the screenshot");
	else
		mcp_call_text(call,
			      "Screenshot %dx%d PNG of session %s; coordinates are screen "
			      "pixels, (0,0) top left.%s",
			      image.width, image.height, bridge_session_id(s),
			      settled ? "" : " The screen was still changing.");
	vnc_bytes_finish(&png);
	vnc_image_finish(&image);
}

static void cursor_position(struct mcp_call *call, const cJSON *args, void *userdata)
{
	struct bridge_session *s = tools_usable_session(userdata, call, args);
	if (!s)
		return;
	int x, y;
	vnc_framebuffer_cursor_position(bridge_session_framebuffer(s), &x, &y);
	mcp_call_text(call, "{\"x\":%d,\"y\":%d}", x, y);
}

static void screen_size(struct mcp_call *call, const cJSON *args, void *userdata)
{
	struct bridge_session *s = tools_usable_session(userdata, call, args);
	if (!s)
		return;
	int width, height;
	vnc_framebuffer_size(bridge_session_framebuffer(s), &width, &height);
	mcp_call_text(call, "{\"width\":%d,\"height\":%d}", width, height);
}

static const struct mcp_tool screen_tools[] = {
	{
		.name = "screenshot",
		.title = "Take a screenshot",
		.description =
			"Capture the whole screen as a PNG image, with the mouse pointer drawn "
			"in. Coordinates in the image are the ones click and the other tools "
			"take. Set settle to wait (up to 3 s) until the screen stops changing "
			"first, e.g. right after an action.",
		.input_schema = "{\"type\":\"object\",\"properties\":{"
				"\"settle\":{\"type\":\"boolean\",\"description\":\"Wait until "
				"nothing has changed for 150 ms (at most 3 s) before capturing. "
				"Default false.\"},"
				"\"show_cursor\":{\"type\":\"boolean\",\"description\":\"Draw "
				"the mouse pointer. Default true.\"}," SESSION_PROPERTY "}}",
		.handler = screenshot,
		.read_only = true,
	},
	{
		.name = "cursor_position",
		.title = "Mouse pointer position",
		.description = "Where the mouse pointer is, as JSON {\"x\":..,\"y\":..} in "
			       "screen pixels.",
		.input_schema = "{\"type\":\"object\",\"properties\":{" SESSION_PROPERTY "}}",
		.handler = cursor_position,
		.read_only = true,
	},
	{
		.name = "screen_size",
		.title = "Screen size",
		.description = "The screen's size as JSON {\"width\":..,\"height\":..} in "
			       "pixels. Valid coordinates are 0..width-1 and 0..height-1.",
		.input_schema = "{\"type\":\"object\",\"properties\":{" SESSION_PROPERTY "}}",
		.handler = screen_size,
		.read_only = true,
	},
};

bool tools_register_screen(struct mcp_server *server, struct bridge_context *context)
{
	for (size_t i = 0; i < sizeof(screen_tools) / sizeof(screen_tools[0]); i++)
		if (!mcp_server_add_tool(server, &screen_tools[i], context))
			return false;
	return true;
}
