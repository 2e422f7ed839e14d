/* SPDX-License-Identifier: MIT */
/* MCP over stdio: one JSON-RPC message per line on in_fd, replies one per
 * line on out_fd. Replies may arrive out of order; each line is written
 * whole. */
#ifndef LIZARD_MCP_STDIO_H
#define LIZARD_MCP_STDIO_H

#include <stddef.h>

struct mcp_server;

/* A message (a line without its "\n", or "\r\n") longer than this is
 * discarded with a JSON-RPC error; one of exactly this size is served. */
#define MCP_STDIO_MAX_MESSAGE (4u * 1024 * 1024)

/* When stdin closes, calls already read get this long to finish; those
 * still running are then stopped and answered with an error, and after
 * MCP_STDIO_GIVE_UP_MS more the bridge exits regardless (2 s in all). */
#define MCP_STDIO_DRAIN_MS 1200
#define MCP_STDIO_GIVE_UP_MS 500

enum mcp_stdio_end {
	MCP_STDIO_EOF,     /* the client closed stdin (replies sent, or drain timed out) */
	MCP_STDIO_STOPPED, /* stop_fd became readable */
	MCP_STDIO_ERROR,
};

enum mcp_stdio_end mcp_stdio_serve(struct mcp_server *server, int in_fd, int out_fd, int stop_fd,
				   size_t max_message);

#endif
