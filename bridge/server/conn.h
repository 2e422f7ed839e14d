/* SPDX-License-Identifier: MIT */
/* What every connection of the server has (struct server_conn, state.h):
 * its id among the live ones, its write queue, the close from outside its
 * callbacks, and a WebSocket message put together from fragments. The
 * service thread only. */
#ifndef LIZARD_BRIDGE_SERVER_CONN_H
#define LIZARD_BRIDGE_SERVER_CONN_H

#include "bridge/server/state.h"

#include <stdbool.h>
#include <stddef.h>

/* Gives c an id and puts it among the live connections. */
void bridge_server_conn_track(struct bridge_server *server, struct server_conn *c, struct lws *wsi,
			      enum server_conn_kind kind);
void bridge_server_conn_untrack(struct server_conn *c);
/* The live connection with that id, or NULL (it went). */
struct server_conn *bridge_server_conn_find(struct bridge_server *server, uint64_t id);

/* Closes a connection from outside its own callbacks, at once. */
void bridge_server_conn_kill(struct server_conn *c, const char *why);

/* Appends o to c's write queue and asks for a writable callback; over
 * BRIDGE_SERVER_MAX_QUEUED_BYTES o is dropped and c killed. Takes o. */
void bridge_server_conn_enqueue(struct server_conn *c, struct outgoing *o);
void bridge_server_conn_free_queue(struct server_conn *c);
void bridge_server_outgoing_free(struct outgoing *o);

enum ws_collect { WS_MESSAGE_PARTIAL, WS_MESSAGE_COMPLETE, WS_MESSAGE_TOO_LARGE };
/* Appends a received fragment to c->message; says whether the message is
 * whole, or over limit (then it closes with 1009). The caller frees
 * c->message after handling a complete one (bridge_server_message_done). */
enum ws_collect bridge_server_collect(struct server_conn *c, const void *in, size_t len,
				      size_t limit);
void bridge_server_message_done(struct server_conn *c);

#endif
