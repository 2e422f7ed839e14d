/* SPDX-License-Identifier: MIT */
/* What peers that have not authenticated can hold: connections in all and
 * per client address (see limits.c), and the time one request may take.
 * The service thread only, but for the log hook. */
#ifndef LIZARD_BRIDGE_SERVER_LIMITS_H
#define LIZARD_BRIDGE_SERVER_LIMITS_H

#include <stdbool.h>

struct bridge_server;
struct lws;
struct lws_filter_network_conn_args;

bool bridge_server_limits_init(struct bridge_server *server);
void bridge_server_limits_finish(struct bridge_server *server);
void bridge_server_find_listener(struct bridge_server *server, int port, const char *path);
/* LWS_CALLBACK_FILTER_NETWORK_CONNECTION: nonzero refuses the connection. */
int bridge_server_filter_accept(struct bridge_server *server,
				const struct lws_filter_network_conn_args *filter);
void bridge_server_wsi_created(struct bridge_server *server, struct lws *wsi);
void bridge_server_wsi_destroyed(struct bridge_server *server, struct lws *wsi);
/* A request's head has been read: a connection from a trusted proxy now
 * counts for the client its X-Forwarded-For names, until the request is
 * done. 0 lets it go on; otherwise the HTTP status to refuse it with
 * (400: the header names no client; 429: that client is at its cap), and
 * *why says why for the reply body. */
int bridge_server_attribute_request(struct bridge_server *server, struct lws *wsi,
				    const char **why);
/* The request is answered: a trusted proxy's connection, kept alive for its
 * next request, counts for no client meanwhile. */
void bridge_server_request_done(struct bridge_server *server, struct lws *wsi);
/* The time one HTTP request may take from now (LWS_CALLBACK_TIMER). */
void bridge_server_arm_request_timer(struct bridge_server *server, struct lws *wsi);
/* Any thread's log hook: lws could not accept (out of descriptors). */
void bridge_server_note_accept_failure(void);
/* Service thread, after each loop turn: sheds the backlog after a failed
 * accept so the loop does not spin. */
void bridge_server_shed_backlog(struct bridge_server *server);

#endif
