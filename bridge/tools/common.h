/* Shared by the tool files; not part of any public surface. */
#ifndef LIZARD_BRIDGE_TOOLS_INTERNAL_H
#define LIZARD_BRIDGE_TOOLS_INTERNAL_H

#include "bridge/tools/geometry.h"
#include "bridge/tools/catalog.h"
#include "vnc/framebuffer.h" /* enum vnc_wait_result */

#include <stdbool.h>
#include <stdint.h>

struct bridge_session;
struct cJSON;
struct mcp_call;
struct mcp_server;
struct vnc_rect;

/* The session property every computer tool takes. */
#define SESSION_PROPERTY                                                                  \
	"\"session\":{\"type\":\"string\",\"description\":\"Session id. Optional when "   \
	"there is only one session.\"}"

/* Any action can return the screen once it has settled. */
#define SCREENSHOT_PROPERTY                                                               \
	"\"screenshot\":{\"type\":\"boolean\",\"description\":\"Also return a screenshot "\
	"taken once the screen has stopped changing after the action (no change for "     \
	"300 ms, waiting at most 5 s). Default false.\"}"

/* Settling after an action: quiet period and upper bound. */
#define SETTLE_QUIET_MS 300
#define SETTLE_TIMEOUT_MS 5000

void tools_agent_space(struct bridge_session *session, struct agent_space *space);
/* Where the pointer is, in agent space. */
void tools_pointer(struct bridge_session *session, int *x, int *y);

/* The session named by args, or the only one, held until the call ends.
 * On failure the call has been failed with a message listing the sessions. */
struct bridge_session *tools_session(struct bridge_tools_context *context, struct mcp_call *call,
				     const struct cJSON *args);
/* Like tools_session, and the desktop must be connected. */
struct bridge_session *tools_usable_session(struct bridge_tools_context *context,
					    struct mcp_call *call, const struct cJSON *args);

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
bool tools_point(struct bridge_session *session, struct mcp_call *call,
		 const struct cJSON *args, bool required, int *native_x, int *native_y);

/* Adds a screenshot of region (agent space, NULL for the whole screen) to
 * the result, with a text block that explains its coordinates. */
bool tools_add_screenshot(struct bridge_session *session, struct mcp_call *call,
			  const int *region, const char *format, int quality, bool show_cursor);
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

/* Progress of a long call, reported between its steps. */
struct tools_steps {
	struct bridge_session *session; /* may be NULL */
	struct mcp_call *call;
	double total;     /* < 0: unknown */
	const char *unit; /* in tools_step's message: "ms" */
	double sent;      /* last progress sent */
	int64_t sent_ms;  /* when; notifications are spaced 250 ms apart */
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
__attribute__((format(printf, 3, 4)))
void tools_report(struct tools_steps *steps, double value, const char *fmt, ...);
/* vnc_framebuffer_wait_settled in 250 ms slices with tools_step between
 * them, progress counted in ms from started_ms. False when tools_step
 * ended the call; else *result says how the wait ended. */
bool tools_settle_in_steps(struct tools_steps *steps, struct vnc_framebuffer *fb,
			   int64_t since_ms, int quiet_ms, int timeout_ms, int64_t started_ms,
			   enum vnc_wait_result *result);

/* Registers tools so that sessions they take are released after each call. */
struct mcp_tool;
bool tools_register(struct mcp_server *server, struct bridge_tools_context *context,
		    const struct mcp_tool *tools, size_t count);
bool tools_register_screen(struct mcp_server *server, struct bridge_tools_context *context);
bool tools_register_sessions(struct mcp_server *server, struct bridge_tools_context *context);
bool tools_register_input(struct mcp_server *server, struct bridge_tools_context *context);
bool tools_register_desktop(struct mcp_server *server, struct bridge_tools_context *context);
bool tools_register_computer(struct mcp_server *server, struct bridge_tools_context *context);
bool tools_register_sandbox(struct mcp_server *server, struct bridge_tools_context *context);
bool tools_register_volumes(struct mcp_server *server, struct bridge_tools_context *context);

/* Actions shared by the named tools and the computer tool. Coordinates
 * are native; each fails the call itself and returns false on error. */
enum tools_button { TOOLS_LEFT, TOOLS_MIDDLE, TOOLS_RIGHT };
bool tools_parse_button(const char *name, enum tools_button *button);
bool tools_do_click(struct bridge_session *s, struct mcp_call *call, int x, int y,
		    enum tools_button button, int count, const char *modifiers);
bool tools_do_move(struct bridge_session *s, struct mcp_call *call, int x, int y);
bool tools_do_button(struct bridge_session *s, struct mcp_call *call, int x, int y,
		     enum tools_button button, bool down);
bool tools_do_drag(struct bridge_session *s, struct mcp_call *call, const int *points,
		   int count, enum tools_button button);
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
/* The wait tool's data: {"mode":"fixed"|"settle","waited_ms","updates"} plus
 * "settled" after a settle wait, next to the sentence tools_do_wait wrote. */
void tools_reply_wait(struct mcp_call *call, bool until_settled,
		      const struct tools_wait_report *report);
#define TOOLS_WAIT_SCHEMA                                                                   \
	"{\"type\":\"object\",\"properties\":{"                                             \
	"\"mode\":{\"type\":\"string\",\"enum\":[\"fixed\",\"settle\"]},"                   \
	"\"waited_ms\":{\"type\":\"integer\",\"minimum\":0},"                                 \
	"\"updates\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"How often the "   \
	"screen changed meanwhile.\"},"                                                      \
	"\"settled\":{\"type\":\"boolean\",\"description\":\"settle: the screen stayed "      \
	"still for quiet_ms before timeout_ms.\"}},"                                         \
	"\"required\":[\"mode\",\"waited_ms\",\"updates\"],\"additionalProperties\":false}"

#endif
