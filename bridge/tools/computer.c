/* SPDX-License-Identifier: MIT */
#include "bridge/tools/computer.h"

#include "bridge/tools/common.h"
#include "bridge/tools/input.h"

#include "bridge/session/session.h"
#include "mcp/server.h"
#include "vnc/framebuffer.h"
#include "util/clock.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Reads a [x, y] argument and maps it; absent is allowed when !required
 * (then the pointer position). */
static bool coordinate(struct bridge_session *s, struct mcp_call *call, const cJSON *args,
		       const char *name, bool required, int *x, int *y)
{
	const cJSON *pair = cJSON_GetObjectItemCaseSensitive(args, name);
	if (!pair) {
		if (required) {
			mcp_call_fail(call, "action %s needs %s [x, y]",
				      tools_string(args, "action", ""), name);
			return false;
		}
		vnc_framebuffer_cursor_position(bridge_session_framebuffer(s), x, y);
		return true;
	}
	return tools_check_point(s, call, cJSON_GetArrayItem(pair, 0)->valueint,
				 cJSON_GetArrayItem(pair, 1)->valueint, name, x, y);
}

static const char *required_text(struct mcp_call *call, const cJSON *args)
{
	const char *text = tools_string(args, "text", NULL);
	if (!text || !*text)
		mcp_call_fail(call, "action %s needs text", tools_string(args, "action", ""));
	return text && *text ? text : NULL;
}

static int duration_ms(const cJSON *args, int def)
{
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(args, "duration");
	return cJSON_IsNumber(d) ? (int)lround(d->valuedouble * 1000) : def;
}

static bool click_action(struct bridge_session *s, struct mcp_call *call, const cJSON *args,
			 enum tools_button button, int count)
{
	int x, y;
	return coordinate(s, call, args, "coordinate", false, &x, &y) &&
	       tools_do_click(s, call, x, y, button, count, tools_string(args, "text", NULL));
}

/* Runs the action; false when it failed the call. */
static bool run_action(struct bridge_session *s, struct mcp_call *call, const cJSON *args,
		       const char *action)
{
	int x, y, x0, y0;
	const char *text;
	if (strcmp(action, "left_click") == 0)
		return click_action(s, call, args, TOOLS_LEFT, 1);
	if (strcmp(action, "right_click") == 0)
		return click_action(s, call, args, TOOLS_RIGHT, 1);
	if (strcmp(action, "middle_click") == 0)
		return click_action(s, call, args, TOOLS_MIDDLE, 1);
	if (strcmp(action, "double_click") == 0)
		return click_action(s, call, args, TOOLS_LEFT, 2);
	if (strcmp(action, "triple_click") == 0)
		return click_action(s, call, args, TOOLS_LEFT, 3);
	if (strcmp(action, "mouse_move") == 0)
		return coordinate(s, call, args, "coordinate", true, &x, &y) &&
		       tools_do_move(s, call, x, y);
	if (strcmp(action, "left_mouse_down") == 0 || strcmp(action, "left_mouse_up") == 0)
		return coordinate(s, call, args, "coordinate", false, &x, &y) &&
		       tools_do_button(s, call, x, y, TOOLS_LEFT,
				       strcmp(action, "left_mouse_down") == 0);
	if (strcmp(action, "left_click_drag") == 0) {
		if (!coordinate(s, call, args, "start_coordinate", false, &x0, &y0) ||
		    !coordinate(s, call, args, "coordinate", true, &x, &y))
			return false;
		int points[4] = { x0, y0, x, y };
		return tools_do_drag(s, call, points, 2, TOOLS_LEFT);
	}
	if (strcmp(action, "scroll") == 0) {
		const char *direction = tools_string(args, "scroll_direction", NULL);
		if (!direction) {
			mcp_call_fail(call, "action scroll needs scroll_direction (up, down, left, "
					    "right)");
			return false;
		}
		return coordinate(s, call, args, "coordinate", false, &x, &y) &&
		       tools_do_scroll(s, call, x, y, direction,
				       tools_int(args, "scroll_amount", 3),
				       tools_string(args, "text", NULL));
	}
	if (strcmp(action, "key") == 0)
		return (text = required_text(call, args)) && tools_do_press(s, call, text);
	if (strcmp(action, "type") == 0)
		return (text = required_text(call, args)) && tools_do_type(s, call, text);
	if (strcmp(action, "hold_key") == 0)
		return (text = required_text(call, args)) &&
		       tools_do_hold_key(s, call, text, duration_ms(args, 1000));
	if (strcmp(action, "wait") == 0)
		return tools_do_wait(s, call, duration_ms(args, 1000), false, 0, 0, NULL);
	mcp_call_fail(call, "unknown action '%s'", action);
	return false;
}

void tools_computer(struct mcp_call *call, const cJSON *args, struct bridge_tools_context *context)
{
	struct bridge_session *s = tools_usable_session(context, call, args);
	if (!s)
		return;
	const char *action = tools_string(args, "action", "");
	if (strcmp(action, "screenshot") == 0) {
		tools_add_screenshot(s, call, NULL, "png", 0, true);
		return;
	}
	if (strcmp(action, "zoom") == 0) {
		const cJSON *jregion = cJSON_GetObjectItemCaseSensitive(args, "region");
		if (!jregion) {
			mcp_call_fail(call, "action zoom needs region [x1, y1, x2, y2]");
			return;
		}
		int region[4];
		for (int i = 0; i < 4; i++)
			region[i] = cJSON_GetArrayItem(jregion, i)->valueint;
		tools_add_screenshot(s, call, region, "png", 0, true);
		return;
	}
	if (strcmp(action, "cursor_position") == 0) {
		int x, y;
		tools_pointer(s, &x, &y);
		mcp_call_text(call, "X=%d,Y=%d", x, y);
		return;
	}
	if (!run_action(s, call, args, action))
		return;
	if (strcmp(action, "wait") != 0)
		mcp_call_text(call, "Done: %s.", action);
	/* Screenshots after actions unless asked not to, as agents expect. */
	if (tools_bool(args, "screenshot", true)) {
		cJSON *with_screenshot = cJSON_Duplicate(args, true);
		if (with_screenshot) {
			cJSON_DeleteItemFromObjectCaseSensitive(with_screenshot, "screenshot");
			cJSON_AddTrueToObject(with_screenshot, "screenshot");
			tools_finish_action(s, call, with_screenshot, clock_monotonic_ms());
			cJSON_Delete(with_screenshot);
		}
	}
}
