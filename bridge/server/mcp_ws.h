/* SPDX-License-Identifier: MIT */
/* MCP over WebSocket on /mcp, subprotocol "mcp" (see mcp_ws.c). */
#ifndef LIZARD_BRIDGE_SERVER_MCP_WS_H
#define LIZARD_BRIDGE_SERVER_MCP_WS_H

#include <libwebsockets.h>

extern const struct lws_protocols bridge_server_mcp_ws_protocol;

#endif
