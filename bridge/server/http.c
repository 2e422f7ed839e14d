/* SPDX-License-Identifier: MIT */
/* HTTP on the server: one route table for /healthz, /metrics, the viewer
 * and noVNC pages, noVNC's files and MCP's Streamable HTTP (mcp_http.c),
 * the request's body, and the request time limit. Every HTTP connection
 * has an MCP peer for /mcp, made with it. */
#include "bridge/server/http.h"

#include "bridge/server/access.h"
#include "bridge/server/conn.h"
#include "bridge/server/limits.h"
#include "bridge/server/mcp_http.h"
#include "bridge/server/metrics.h"
#include "bridge/server/novnc.h"
#include "bridge/server/options.h"
#include "bridge/server/reply.h"
#include "bridge/server/viewer_ws.h"
#include "util/log.h"

#include <stdlib.h>
#include <string.h>

static bool method_is(struct lws *wsi, enum lws_token_indexes token)
{
	return lws_hdr_total_length(wsi, token) > 0;
}

static void serve_metrics(struct http_conn *c)
{
	const struct bridge_server_options *o = c->base.server->options;
	char *text = bridge_metrics_render(o->metrics, o->registry);
	if (!text) {
		bridge_server_http_error(c, 500, "out of memory");
		return;
	}
	bridge_server_http_reply(c, 200, "text/plain; version=0.0.4", text, strlen(text));
	free(text);
}

/* LWS_CALLBACK_HTTP: routing, auth and the checks that need no body. */
static int begin_request(struct http_conn *c, const char *uri)
{
	struct lws *wsi = c->base.wsi;
	bridge_server_http_reset(c);
	c->body_pending = method_is(wsi, WSI_TOKEN_POST_URI);
	/* First: a client over its cap behind a proxy gets nothing else. */
	const char *why;
	int refused = bridge_server_attribute_request(c->base.server, wsi, &why);
	if (refused) {
		/* At once and then closed: a body trickled after a refusal would
		 * hold the proxy's connection for a client over its cap. */
		c->body_pending = false;
		c->close_after_reply = true;
		bridge_server_http_error(c, refused, why);
		return 0;
	}
	if (strcmp(uri, "/healthz") == 0) {
		bridge_server_http_reply(c, 200, "application/json", "{\"status\":\"ok\"}\n", 16);
		return 0;
	}
	if (!bridge_server_host_allowed(c->base.server, wsi)) {
		bridge_server_http_error(c, 403,
					 "Host header not allowed: use localhost or an address, or "
					 "start the server with --allowed-host NAME");
		return 0;
	}
	if (!c->base.server->options->mcp &&
	    (strcmp(uri, "/metrics") == 0 || strcmp(uri, "/mcp") == 0)) {
		bridge_server_http_error(
			c, 404, "this bridge speaks MCP on its stdio and serves only viewers here");
		return 0;
	}
	if (strcmp(uri, "/metrics") == 0) {
		serve_metrics(c);
		return 0;
	}
	if (strncmp(uri, "/view/", 6) == 0) {
		bridge_server_viewer_page(c);
		return 0;
	}
	if (strncmp(uri, "/novnc/", 7) == 0) {
		bridge_server_novnc_page(c);
		return 0;
	}
	if (strncmp(uri, "/novnc-files/", 13) == 0) {
		bridge_server_novnc_file(c, uri + 13);
		return 0;
	}
	if (strcmp(uri, "/mcp") != 0) {
		bridge_server_http_error(c, 404, "not found; MCP is served on /mcp");
		return 0;
	}
	return bridge_server_mcp_http_begin(c);
}

static void append_body(struct http_conn *c, const void *data, size_t len)
{
	/* Already answered (401, 404, 413...): read and dropped, not kept. */
	if (c->body_too_large || c->reply.status)
		return;
	if (c->body_len + len > c->base.server->options->max_message) {
		c->body_too_large = true;
		free(c->body);
		c->body = NULL;
		return;
	}
	char *grown = realloc(c->body, c->body_len + len + 1);
	if (!grown) {
		c->body_too_large = true;
		return;
	}
	memcpy(grown + c->body_len, data, len);
	c->body = grown;
	c->body_len += len;
}

static void open_connection(struct http_conn *c, struct lws *wsi)
{
	struct bridge_server *server = lws_context_user(lws_get_context(wsi));
	bridge_server_conn_track(server, &c->base, wsi, SERVER_CONN_HTTP);
	bridge_server_mcp_http_open(c);
}

static void close_connection(struct http_conn *c)
{
	/* A connection that closes before sending a request (a port scan, a
	 * TCP health probe) has no per-connection memory at all. */
	if (!c || !c->base.server)
		return;
	bridge_server_mcp_http_close(c);
	bridge_server_http_reset(c);
	bridge_server_conn_untrack(&c->base);
	c->base.server = NULL;
}

int bridge_server_http_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user,
				void *in, size_t len)
{
	struct http_conn *c = user;

	switch (reason) {
	case LWS_CALLBACK_HTTP:
		if (!c->base.server)
			open_connection(c, wsi);
		if (!c->peer && c->base.server->options->mcp)
			return -1;
		return begin_request(c, (const char *)in);
	case LWS_CALLBACK_HTTP_BODY:
		append_body(c, in, len);
		return 0;
	case LWS_CALLBACK_HTTP_BODY_COMPLETION:
		c->body_pending = false;
		if (c->reply.status)
			lws_callback_on_writable(wsi); /* answered before the body came */
		else
			bridge_server_mcp_http_finish(c);
		return 0;
	case LWS_CALLBACK_HTTP_WRITEABLE:
		return bridge_server_http_write(c);
	case LWS_CALLBACK_TIMER:
		/* The request's time is up. A call still running is our time,
		 * not the client's: that one waits for its reply, streamed
		 * progress or not. */
		if (c && c->base.server && c->mcp.awaiting_reply) {
			bridge_server_arm_request_timer(c->base.server, wsi);
			return 0;
		}
		log_info("closing a connection: its request took longer than allowed");
		return -1;
	case LWS_CALLBACK_CLOSED_HTTP:
	/* Between keep-alive transactions lws rebinds the protocol, freeing
	 * this per-connection memory: forget it as if the connection closed. */
	case LWS_CALLBACK_HTTP_DROP_PROTOCOL:
		close_connection(c);
		return 0;
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
		/* An upgrade without subprotocol mcp lands on this protocol. */
		lws_return_http_status(wsi, 400, NULL);
		return -1;
	default:
		return lws_callback_http_dummy(wsi, reason, user, in, len);
	}
}
