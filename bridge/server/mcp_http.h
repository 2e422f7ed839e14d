/* SPDX-License-Identifier: MIT */
/* MCP's Streamable HTTP transport on /mcp (see mcp_http.c): the MCP side of
 * an HTTP connection. The service thread only. */
#ifndef LIZARD_BRIDGE_SERVER_MCP_HTTP_H
#define LIZARD_BRIDGE_SERVER_MCP_HTTP_H

#include <stdbool.h>

struct http_conn;

/* A new HTTP connection gets an MCP peer whose replies come back to it
 * (through the outbox); false when out of memory. */
bool bridge_server_mcp_http_open(struct http_conn *c);
/* It went: a call still running finds its peer closed. */
void bridge_server_mcp_http_close(struct http_conn *c);
/* A request on /mcp, its head read: answers what needs no body. 0. */
int bridge_server_mcp_http_begin(struct http_conn *c);
/* Its body is all here: hands the message to the peer, or answers. */
void bridge_server_mcp_http_finish(struct http_conn *c);

#endif
