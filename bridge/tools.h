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

bool bridge_tools_register(struct mcp_server *server, struct bridge_context *context);

#endif
