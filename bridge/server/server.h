/* SPDX-License-Identifier: MIT */
/* lizard-bridge serve: MCP over WebSocket and Streamable HTTP on /mcp,
 * /healthz and /metrics, all on one libwebsockets context whose loop never
 * waits for a tool: calls run on the MCP worker pool and their replies come
 * back through a locked outbox and lws_cancel_service(). */
#ifndef LIZARD_BRIDGE_SERVER_H
#define LIZARD_BRIDGE_SERVER_H

#include "bridge/server/options.h"

struct bridge_viewer_links;

/* Serves until stop_fd becomes readable. Returns 0, or 1 when the server
 * could not start (the message is logged). */
int bridge_server_run(const struct bridge_server_options *options);

/* Where viewer links of a server listening on listen point, and how a
 * session's viewers wake its loop (a loop that is not running, or no
 * longer, is not woken), and the host names of exposed ports
 * (public_host, or localhost:PORT when NULL). For main, before the tools are registered. */
void bridge_server_viewer_links(const char *listen, const char *public_host,
				struct bridge_viewer_links *links);

#endif
