/* SPDX-License-Identifier: MIT */
/* Helpers every tool family shares: arguments, points in the space models
 * see, screenshots, settling after an action, environment lists, progress
 * of long calls. Not part of any public surface, and it knows no family:
 * families include it, never the other way round. */
#ifndef LIZARD_BRIDGE_TOOLS_COMMON_H
#define LIZARD_BRIDGE_TOOLS_COMMON_H

#include "bridge/tools/geometry.h"
#include "mcp/server.h"
#include "sandbox/process.h" /* enum sandbox_user */
#include "vnc/framebuffer.h" /* enum vnc_wait_result */

#include <stdbool.h>
#include <stdint.h>

/* Tools answer with data through tools_reply_data (context.h), so that the
 * catalog can check every answer against the tool's outputSchema; a direct
 * call to the MCP engine would slip past that check. */
#pragma GCC poison mcp_call_structured mcp_call_structured_shown

struct bridge_session;
struct bridge_tools_context;
struct cJSON;
struct mcp_call;
struct vnc_rect;

/* Settling after an action: quiet period and upper bound. */
#define SETTLE_QUIET_MS 300
#define SETTLE_TIMEOUT_MS 5000

void tools_agent_space(struct bridge_session *session, struct agent_space *space);
/* Where the pointer is, in agent space. */
void tools_pointer(struct bridge_session *session, int *x, int *y);

/* Reads an argument (already type-checked), or def if absent. */
int tools_int(const struct cJSON *args, const char *name, int def);
const char *tools_string(const struct cJSON *args, const char *name, const char *def);
bool tools_bool(const struct cJSON *args, const char *name, bool def);

/* Checks an agent-space point and maps it to native pixels. what names it
 * in messages ("x/y", "coordinate"). */
bool tools_check_point(struct bridge_session *session, struct mcp_call *call, int x, int y,
		       const char *what, int *native_x, int *native_y);
/* Reads x and y (both or neither; required when required) and maps them.
 * Without them, the pointer position is used. */
bool tools_point(struct bridge_session *session, struct mcp_call *call, const struct cJSON *args,
		 bool required, int *native_x, int *native_y);

/* Adds a screenshot of region (agent space, NULL for the whole screen) to
 * the result, with a text block that explains its coordinates. */
bool tools_add_screenshot(struct bridge_session *session, struct mcp_call *call, const int *region,
			  const char *format, int quality, bool show_cursor);
/* Ends an action sent at action_end_ms: with args.screenshot, waits for the
 * screen to settle and adds the screenshot. */
void tools_finish_action(struct bridge_session *session, struct mcp_call *call,
			 const struct cJSON *args, int64_t action_end_ms);

/* "NAME=value" strings from an object of strings (envs), NULL-terminated;
 * NULL with the call failed when a name or value is not acceptable. */
char **tools_env_list(struct mcp_call *call, const struct cJSON *object);
void tools_free_env_list(char **list);

/* Actions that start something (open_url, launch): with args.screenshot,
 * waits until the program has drawn (START_DRAWN_MIN_PIXELS pixels since
 * drawn_before, a vnc_framebuffer_drawn_pixels count), up to
 * draw_timeout_ms counted from started_ms, then for the screen to settle,
 * and adds the screenshot with a text that says which happened. A quiet
 * screen alone proves nothing here: the program may not have drawn yet.
 * The minimum is more than the server drawing and removing its pointer a
 * few times. */
#define START_DRAW_TIMEOUT_MS 10000
#define START_DRAWN_MIN_PIXELS 4096
#define START_QUIET_MAX_MS 2000
void tools_finish_start(struct bridge_session *session, struct mcp_call *call,
			const struct cJSON *args, uint64_t drawn_before, int64_t started_ms,
			int draw_timeout_ms);

/* The session's sandbox (exec and the file tools), held until the call
 * ends, or NULL with the call failed saying why: no session, an attached
 * one (no sandbox), one that ended or failed, or one that is paused. */
struct sandbox *tools_session_sandbox(struct bridge_tools_context *context, struct mcp_call *call,
				      const struct cJSON *args, struct bridge_session **session);
/* args.user: SANDBOX_AS_USER unless it is "root". */
enum sandbox_user tools_sandbox_user(const struct cJSON *args);
/* Fails a sandbox call with err, unless its session ended meanwhile: that
 * is what happened then (its programs were killed), whatever the sandbox
 * said. */
void tools_fail_sandbox_call(struct mcp_call *call, struct bridge_session *session,
			     const struct error *err);

/* Progress of a long call, reported between its steps. */
struct tools_steps {
	struct bridge_session *session; /* may be NULL */
	struct mcp_call *call;
	double total;       /* < 0: unknown */
	const char *unit;   /* in tools_step's message: "ms" */
	double sent;        /* last progress sent */
	int64_t sent_ms;    /* when; notifications are spaced 250 ms apart */
	int64_t started_ms; /* when tools_steps_init ran */
};
void tools_steps_init(struct tools_steps *steps, struct bridge_session *session,
		      struct mcp_call *call, double total, const char *unit);
/* Call between steps with how much is done so far. Sends
 * notifications/progress when the client asked for it (at most every 250
 * ms, and only when done grew), and says whether to go on: false once the
 * client cancelled the call or the session stopped being usable, with the
 * call already failed (a cancelled call's reply is never sent). */
bool tools_step(struct tools_steps *steps, double done);
/* Only the notification, with a message of the caller's: value must grow
 * (elapsed ms will do when the call counts something else). */
__attribute__((format(printf, 3, 4))) void tools_report(struct tools_steps *steps, double value,
							const char *fmt, ...);
/* vnc_framebuffer_wait_settled in 250 ms slices with tools_step between
 * them, progress counted in ms from started_ms. False when tools_step
 * ended the call; else *result says how the wait ended. */
bool tools_settle_in_steps(struct tools_steps *steps, struct vnc_framebuffer *fb, int64_t since_ms,
			   int quiet_ms, int timeout_ms, int64_t started_ms,
			   enum vnc_wait_result *result);

#endif
