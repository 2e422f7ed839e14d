/* MCP over stdio: one JSON-RPC message per line on in_fd, replies one per
 * line on out_fd. Replies may arrive out of order; each line is written
 * whole. */
#ifndef LIZARD_MCP_STDIO_H
#define LIZARD_MCP_STDIO_H

#include <stddef.h>

struct mcp_server;

/* A line longer than this is discarded with a JSON-RPC error. */
#define MCP_STDIO_MAX_MESSAGE (4u * 1024 * 1024)

enum mcp_stdio_end {
	MCP_STDIO_EOF,     /* the client closed stdin */
	MCP_STDIO_STOPPED, /* stop_fd became readable */
	MCP_STDIO_ERROR,
};

enum mcp_stdio_end mcp_stdio_serve(struct mcp_server *server, int in_fd, int out_fd, int stop_fd,
				   size_t max_message);

#endif
