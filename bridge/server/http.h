/* SPDX-License-Identifier: MIT */
/* HTTP on the server: the route table and the body of a request (see
 * http.c). */
#ifndef LIZARD_BRIDGE_SERVER_HTTP_H
#define LIZARD_BRIDGE_SERVER_HTTP_H

#include <libwebsockets.h>

/* The "http" protocol's callback for what server.c does not take itself. */
int bridge_server_http_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user,
				void *in, size_t len);

#endif
