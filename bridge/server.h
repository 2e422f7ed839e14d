/* lizard-bridge serve: MCP over WebSocket and Streamable HTTP on /mcp,
 * /healthz and /metrics, all on one libwebsockets context whose loop never
 * waits for a tool: calls run on the MCP worker pool and their replies come
 * back through a locked outbox and lws_cancel_service(). */
#ifndef LIZARD_BRIDGE_SERVER_H
#define LIZARD_BRIDGE_SERVER_H

#include <stddef.h>

struct bridge_context;
struct bridge_metrics;
struct mcp_server;

struct bridge_server_options {
	const char *listen;   /* "ADDR:PORT", "[v6]:PORT" or a UNIX socket path */
	const char *api_key;  /* required on /mcp */
	struct mcp_server *mcp;
	struct bridge_context *context;
	struct bridge_metrics *metrics;
	size_t max_message;   /* HTTP body / WebSocket message limit */
	int stop_fd;          /* readable: shut down */
};

/* Serves until stop_fd becomes readable. Returns 0, or 1 when the server
 * could not start (the message is logged). */
int bridge_server_run(const struct bridge_server_options *options);

#endif
