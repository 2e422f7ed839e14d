/* Shared by the tool files; not part of any public surface. */
#ifndef LIZARD_BRIDGE_TOOLS_INTERNAL_H
#define LIZARD_BRIDGE_TOOLS_INTERNAL_H

#include "tools.h"

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

/* The coordinates models see. Screens larger than models take (long edge
 * over 1568 px or more than 1.15 megapixels) are shown scaled; every
 * coordinate a tool receives is in that space and mapped back. */
struct agent_space {
	int native_width, native_height;
	int width, height;
	bool scaled;
};

void tools_agent_space(struct bridge_session *session, struct agent_space *space);
/* Agent pixel to the native pixel at the centre of what it shows. */
void tools_to_native(const struct agent_space *space, int x, int y, int *native_x, int *native_y);
void tools_to_agent(const struct agent_space *space, int native_x, int native_y, int *x, int *y);
/* Where the pointer is, in agent space. */
void tools_pointer(struct bridge_session *session, int *x, int *y);

/* The session named by args, or the only one, held until the call ends.
 * On failure the call has been failed with a message listing the sessions. */
struct bridge_session *tools_session(struct bridge_context *context, struct mcp_call *call,
				     const struct cJSON *args);
/* Like tools_session, and the desktop must be connected. */
struct bridge_session *tools_usable_session(struct bridge_context *context,
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

/* Registers tools so that sessions they take are released after each call. */
struct mcp_tool;
bool tools_register(struct mcp_server *server, struct bridge_context *context,
		    const struct mcp_tool *tools, size_t count);
bool tools_register_screen(struct mcp_server *server, struct bridge_context *context);
bool tools_register_sessions(struct mcp_server *server, struct bridge_context *context);
bool tools_register_input(struct mcp_server *server, struct bridge_context *context);
bool tools_register_desktop(struct mcp_server *server, struct bridge_context *context);
bool tools_register_computer(struct mcp_server *server, struct bridge_context *context);
bool tools_register_sandbox(struct mcp_server *server, struct bridge_context *context);

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
bool tools_do_wait(struct bridge_session *s, struct mcp_call *call, int ms, bool until_settled,
		   int quiet_ms, int timeout_ms);

#endif
