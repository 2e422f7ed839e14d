/* SPDX-License-Identifier: MIT */
/* What every connection has (see conn.h). */
#include "bridge/server/conn.h"

#include "bridge/server/options.h"
#include "util/log.h"

#include <stdlib.h>
#include <string.h>

void bridge_server_conn_track(struct bridge_server *server, struct server_conn *c, struct lws *wsi,
			      enum server_conn_kind kind)
{
	c->id = ++server->next_connection_id;
	c->wsi = wsi;
	c->server = server;
	c->kind = kind;
	c->next_live = server->live;
	server->live = c;
}

void bridge_server_conn_untrack(struct server_conn *c)
{
	for (struct server_conn **p = &c->server->live; *p; p = &(*p)->next_live) {
		if (*p == c) {
			*p = c->next_live;
			break;
		}
	}
	c->id = 0;
}

struct server_conn *bridge_server_conn_find(struct bridge_server *server, uint64_t id)
{
	for (struct server_conn *c = server->live; c; c = c->next_live)
		if (c->id == id)
			return c;
	return NULL;
}

void bridge_server_conn_kill(struct server_conn *c, const char *why)
{
	if (c->kicked)
		return;
	c->kicked = true;
	log_info("closing a connection: %s", why);
	/* Closed on the loop's next turn, whether or not it can be written to. */
	lws_set_timeout(c->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
}

void bridge_server_outgoing_free(struct outgoing *o)
{
	free(o->text);
	free(o);
}

void bridge_server_conn_enqueue(struct server_conn *c, struct outgoing *o)
{
	if (c->queued_bytes + o->len > BRIDGE_SERVER_MAX_QUEUED_BYTES) {
		/* It does not read: it goes, the others are not held up. */
		bridge_server_outgoing_free(o);
		bridge_server_conn_kill(c,
					"more than 64 MiB of replies queued: the client does not "
					"read them");
		return;
	}
	o->next = NULL;
	if (c->queue_tail)
		c->queue_tail->next = o;
	else
		c->queue_head = o;
	c->queue_tail = o;
	c->queued_bytes += o->len;
	lws_callback_on_writable(c->wsi);
}

void bridge_server_conn_free_queue(struct server_conn *c)
{
	while (c->queue_head) {
		struct outgoing *next = c->queue_head->next;
		bridge_server_outgoing_free(c->queue_head);
		c->queue_head = next;
	}
	c->queue_tail = NULL;
	c->queued_bytes = 0;
}

enum ws_collect bridge_server_collect(struct server_conn *c, const void *in, size_t len,
				      size_t limit)
{
	if (c->message_len + len > limit) {
		static const char reason[] = "message too large";
		lws_close_reason(c->wsi, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE,
				 (unsigned char *)reason, sizeof(reason) - 1);
		log_info("closing a WebSocket: message over %zu bytes", limit);
		return WS_MESSAGE_TOO_LARGE;
	}
	char *grown = realloc(c->message, c->message_len + len + 1);
	if (!grown)
		return WS_MESSAGE_TOO_LARGE;
	memcpy(grown + c->message_len, in, len);
	grown[c->message_len + len] = '\0';
	c->message = grown;
	c->message_len += len;
	if (!lws_is_final_fragment(c->wsi) || lws_remaining_packet_payload(c->wsi) > 0)
		return WS_MESSAGE_PARTIAL;
	return WS_MESSAGE_COMPLETE;
}

void bridge_server_message_done(struct server_conn *c)
{
	free(c->message);
	c->message = NULL;
	c->message_len = 0;
}
