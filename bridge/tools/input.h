/* SPDX-License-Identifier: MIT */
/* Tools that act: click, move_mouse, mouse_down, mouse_up, drag, scroll,
 * type, press, hold_key, wait. Each builds its event sequence first and
 * sends it in one go, releasing every key and button it pressed. If the
 * connection drops halfway, the server releases what the client held. The
 * actions behind them are shared with the computer tool. */
#ifndef LIZARD_BRIDGE_TOOLS_INPUT_H
#define LIZARD_BRIDGE_TOOLS_INPUT_H

#include "bridge/tools/context.h"

#include <stdbool.h>

struct bridge_session;
struct mcp_call;

tools_handler tools_click, tools_move_mouse, tools_mouse_down, tools_mouse_up, tools_drag,
	tools_scroll, tools_type, tools_press, tools_hold_key, tools_wait;

/* Actions shared by the named tools and the computer tool. Coordinates
 * are native; each fails the call itself and returns false on error. */
enum tools_button { TOOLS_LEFT, TOOLS_MIDDLE, TOOLS_RIGHT };
bool tools_parse_button(const char *name, enum tools_button *button);
bool tools_do_click(struct bridge_session *s, struct mcp_call *call, int x, int y,
		    enum tools_button button, int count, const char *modifiers);
bool tools_do_move(struct bridge_session *s, struct mcp_call *call, int x, int y);
bool tools_do_button(struct bridge_session *s, struct mcp_call *call, int x, int y,
		     enum tools_button button, bool down);
bool tools_do_drag(struct bridge_session *s, struct mcp_call *call, const int *points, int count,
		   enum tools_button button);
bool tools_do_scroll(struct bridge_session *s, struct mcp_call *call, int x, int y,
		     const char *direction, int amount, const char *modifiers);
bool tools_do_type(struct bridge_session *s, struct mcp_call *call, const char *text);
bool tools_do_press(struct bridge_session *s, struct mcp_call *call, const char *keys);
bool tools_do_hold_key(struct bridge_session *s, struct mcp_call *call, const char *keys,
		       int duration_ms);
/* What a wait saw, for tools that return it as data. */
struct tools_wait_report {
	long long waited_ms;
	unsigned long long updates; /* frames the screen changed in */
	bool settled;               /* until_settled: it stayed still for quiet_ms */
};
bool tools_do_wait(struct bridge_session *s, struct mcp_call *call, int ms, bool until_settled,
		   int quiet_ms, int timeout_ms, struct tools_wait_report *report);

#endif
