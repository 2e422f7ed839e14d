/* SPDX-License-Identifier: MIT */
/* Who may use the server: the API key (compared in constant time, never
 * logged), the Origin of browsers, and the Host header (the DNS rebinding
 * guard). */
#ifndef LIZARD_BRIDGE_SERVER_ACCESS_H
#define LIZARD_BRIDGE_SERVER_ACCESS_H

#include <stdbool.h>

struct bridge_server;
struct lws;

/* Authorization: the API key from the Authorization header, or (when
 * allow_query) from ?access_token=. */
bool bridge_server_authorized(struct bridge_server *server, struct lws *wsi, bool allow_query);
/* False when an Origin header names another site than this server. */
bool bridge_server_origin_allowed(struct lws *wsi);
/* False when the Host header names something else than this server: the
 * DNS rebinding guard (/mcp, /viewer, /view, /metrics). */
bool bridge_server_host_allowed(struct bridge_server *server, struct lws *wsi);

#endif
