/* The computer-use tools, registered with the MCP server. */
#ifndef LIZARD_BRIDGE_TOOLS_H
#define LIZARD_BRIDGE_TOOLS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

struct mcp_server;
struct bridge_session;

#define BRIDGE_MAX_SESSIONS 64

/* What the tools act on. The caller owns the sessions. */
struct bridge_context {
	pthread_mutex_t lock;
	struct bridge_session *sessions[BRIDGE_MAX_SESSIONS];
	size_t session_count;
};

struct cJSON;

bool bridge_tools_register(struct mcp_server *server, struct bridge_context *context);
/* The worker lane of a call: its session, so input to one desktop stays in
 * order. An mcp_lane_fn; userdata is the context. */
bool bridge_tools_lane(const char *tool, const struct cJSON *args, char *lane, size_t size,
		       void *userdata);

#endif
