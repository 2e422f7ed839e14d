/* SPDX-License-Identifier: MIT */
/* What the MCP engine's public surface and the structs behind it
 * (state.h) both need: the logging levels and the bound on a result's
 * images. Types and constants only, so that state.h can use them without
 * including a module's header; server.h includes this one. */
#ifndef LIZARD_MCP_TYPES_H
#define LIZARD_MCP_TYPES_H

/* MCP logging levels (RFC 5424 severities), least severe first. */
enum mcp_log_level {
	MCP_LOG_DEBUG,
	MCP_LOG_INFO,
	MCP_LOG_NOTICE,
	MCP_LOG_WARNING,
	MCP_LOG_ERROR,
	MCP_LOG_CRITICAL,
	MCP_LOG_ALERT,
	MCP_LOG_EMERGENCY,
};

/* The most images one tools/call result carries. */
#define MCP_MAX_CALL_IMAGES 4

#endif
