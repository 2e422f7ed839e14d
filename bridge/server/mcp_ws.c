/* SPDX-License-Identifier: MIT */
/* MCP over WebSocket on /mcp: subprotocol "mcp", one JSON-RPC message per
 * text frame. Messages over the size limit close the connection with 1009;
 * replies go out in fragments, one per writable callback. */
#include "bridge/server/mcp_ws.h"

#include "bridge/server/access.h"
#include "bridge/server/conn.h"
#include "bridge/server/metrics.h"
#include "bridge/server/options.h"
#include "bridge/server/outbox.h"
#include "mcp/server.h"
#include "util/log.h"

#include <stdlib.h>
#include <string.h>

#define WS_FRAGMENT 65536

/* One MCP client on one WebSocket. */
struct mcp_ws_conn {
	struct server_conn base;
	struct mcp_peer *peer;
	struct peer_link *link;
};

/* Replies from the outbox go out in order, a fragment per writable
 * callback. */
static void deliver(struct server_conn *c, struct outgoing *o)
{
	bridge_server_conn_enqueue(c, o);
}

static int refuse_upgrade(struct lws *wsi, struct bridge_server *server)
{
	char uri[64];
	if (!server->options->mcp || lws_hdr_copy(wsi, uri, sizeof(uri), WSI_TOKEN_GET_URI) <= 0 ||
	    strcmp(uri, "/mcp") != 0) {
		lws_return_http_status(wsi, 404, NULL);
		return -1;
	}
	if (!bridge_server_origin_allowed(wsi) || !bridge_server_host_allowed(server, wsi)) {
		lws_return_http_status(wsi, 403, NULL);
		return -1;
	}
	if (!bridge_server_authorized(server, wsi, true)) {
		lws_return_http_status(wsi, 401, NULL);
		return -1;
	}
	return 0;
}

static int receive(struct mcp_ws_conn *w, const void *in, size_t len)
{
	struct server_conn *c = &w->base;
	enum ws_collect state = bridge_server_collect(c, in, len, c->server->options->max_message);
	if (state != WS_MESSAGE_COMPLETE)
		return state == WS_MESSAGE_PARTIAL ? 0 : -1;
	if (lws_frame_is_binary(c->wsi)) {
		static const char reason[] = "send JSON-RPC as text frames";
		lws_close_reason(c->wsi, LWS_CLOSE_STATUS_UNACCEPTABLE_OPCODE,
				 (unsigned char *)reason, sizeof(reason) - 1);
		return -1;
	}
	mcp_peer_handle(w->peer, c->message, c->message_len);
	bridge_server_message_done(c);
	return 0;
}

static int send_next(struct server_conn *c)
{
	struct outgoing *o = c->queue_head;
	if (!o)
		return 0;
	size_t chunk = o->len - o->sent > WS_FRAGMENT ? WS_FRAGMENT : o->len - o->sent;
	bool first = o->sent == 0, last = o->sent + chunk == o->len;
	int flags = lws_write_ws_flags(LWS_WRITE_TEXT, first, last);
	if (lws_write(c->wsi, (unsigned char *)o->text + LWS_PRE + o->sent, chunk, flags) <
	    (int)chunk)
		return -1;
	o->sent += chunk;
	if (last) {
		c->queued_bytes -= o->len;
		c->queue_head = o->next;
		if (!c->queue_head)
			c->queue_tail = NULL;
		free(o->text);
		free(o);
	}
	if (c->queue_head)
		lws_callback_on_writable(c->wsi);
	return 0;
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
		    size_t len)
{
	struct mcp_ws_conn *w = user;
	struct server_conn *c = w ? &w->base : NULL;
	struct bridge_server *server = lws_context_user(lws_get_context(wsi));
	switch (reason) {
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
		return refuse_upgrade(wsi, server);
	case LWS_CALLBACK_ESTABLISHED:
		/* Authenticated at the upgrade: no request clock from here. */
		lws_set_timer_usecs(wsi, LWS_SET_TIMER_USEC_CANCEL);
		bridge_server_conn_track(server, c, wsi, SERVER_CONN_MCP_WS);
		c->deliver = deliver;
		w->link = malloc(sizeof(*w->link));
		if (!w->link)
			return -1;
		*w->link = (struct peer_link){ server, c->id };
		w->peer = mcp_peer_create(server->options->mcp, bridge_server_send_to_peer,
					  w->link);
		if (!w->peer)
			return -1;
		bridge_metrics_connections(server->options->metrics, "websocket", 1);
		return 0;
	case LWS_CALLBACK_RECEIVE:
		return receive(w, in, len);
	case LWS_CALLBACK_SERVER_WRITEABLE:
		return c->kicked ? -1 : send_next(c);
	case LWS_CALLBACK_CLOSED:
		if (!c->server)
			return 0;
		mcp_peer_close(w->peer);
		free(w->link);
		free(c->message);
		bridge_server_conn_free_queue(c);
		bridge_server_conn_untrack(c);
		bridge_metrics_connections(server->options->metrics, "websocket", -1);
		c->server = NULL;
		return 0;
	default:
		return 0;
	}
}

const struct lws_protocols bridge_server_mcp_ws_protocol = {
	.name = "mcp",
	.callback = callback,
	.per_session_data_size = sizeof(struct mcp_ws_conn),
	.rx_buffer_size = 65536,
};
