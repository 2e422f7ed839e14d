/* Shared by the tool files; not part of any public surface. */
#ifndef LIZARD_BRIDGE_TOOLS_INTERNAL_H
#define LIZARD_BRIDGE_TOOLS_INTERNAL_H

#include "tools.h"

#include <stdbool.h>

struct cJSON;
struct mcp_call;
struct mcp_server;

/* The session property every computer tool takes. */
#define SESSION_PROPERTY                                                                  \
	"\"session\":{\"type\":\"string\",\"description\":\"Session id. Optional when "   \
	"there is only one session.\"}"

/* The session named by args, or the only one. On failure the call has
 * been failed with a message listing the sessions. */
struct bridge_session *tools_session(struct bridge_context *context, struct mcp_call *call,
				     const struct cJSON *args);
/* Like tools_session, and the desktop must be connected. */
struct bridge_session *tools_usable_session(struct bridge_context *context,
					    struct mcp_call *call, const struct cJSON *args);

/* Reads integer argument name (already type-checked), or def if absent. */
int tools_int(const struct cJSON *args, const char *name, int def);
const char *tools_string(const struct cJSON *args, const char *name, const char *def);
bool tools_bool(const struct cJSON *args, const char *name, bool def);

/* Reads x and y (both or neither; required when required) and checks them
 * against the screen. Without them, *x and *y get the pointer position. */
bool tools_point(struct bridge_session *session, struct mcp_call *call,
		 const struct cJSON *args, bool required, int *x, int *y);

bool tools_register_screen(struct mcp_server *server, struct bridge_context *context);
bool tools_register_input(struct mcp_server *server, struct bridge_context *context);

#endif
