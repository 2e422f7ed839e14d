/* SPDX-License-Identifier: MIT */
/* The browser viewer (see viewer_ws.c): its page and its WebSocket. */
#ifndef LIZARD_BRIDGE_SERVER_VIEWER_WS_H
#define LIZARD_BRIDGE_SERVER_VIEWER_WS_H

#include <libwebsockets.h>

struct bridge_server;
struct http_conn;

/* GET /view/<session>: the page, embedded in the binary. */
void bridge_server_viewer_page(struct http_conn *c);

extern const struct lws_protocols bridge_server_viewer_protocol;

/* The loop was woken: viewers whose hub has news get a writable callback,
 * and those whose link was revoked go (a revoked one that does not read
 * at once). */
void bridge_server_viewer_wake_all(struct bridge_server *server);

#endif
