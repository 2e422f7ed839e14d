/* SPDX-License-Identifier: MIT */
/* MCP's Streamable HTTP transport on /mcp (2025-11-25): POST one JSON-RPC
 * message, answered with JSON (or one SSE event when the client accepts
 * only that); 202 for notifications and responses; Mcp-Session-Id issued
 * at initialize and required after; DELETE ends the MCP session; GET is
 * 405. A request with a progressToken from a client that accepts
 * text/event-stream turns into an SSE stream at its first progress
 * notification: chunked, each notification an event, then the response,
 * then the stream ends (the connection stays for the next request). */
#include "bridge/server/mcp_http.h"

#include "bridge/server/access.h"
#include "bridge/server/conn.h"
#include "bridge/server/limits.h"
#include "bridge/server/options.h"
#include "bridge/server/outbox.h"
#include "bridge/server/reply.h"
#include "mcp/jsonrpc.h"
#include "mcp/server.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#define MAX_MCP_SESSIONS 1024

/* MCP sessions of the HTTP transport (not desktops). Service thread only. */
static char mcp_sessions[MAX_MCP_SESSIONS][33];
static int mcp_session_count;

static void new_mcp_session(char *id)
{
	unsigned char bytes[16];
	if (getrandom(bytes, sizeof(bytes), 0) != (ssize_t)sizeof(bytes))
		memset(bytes, 0, sizeof(bytes));
	for (int i = 0; i < 16; i++)
		snprintf(id + i * 2, 3, "%02x", bytes[i]);
	if (mcp_session_count == MAX_MCP_SESSIONS) {
		/* The oldest goes: its client gets 404 and starts over. */
		memmove(mcp_sessions[0], mcp_sessions[1],
			sizeof(mcp_sessions[0]) * (MAX_MCP_SESSIONS - 1));
		mcp_session_count--;
	}
	memcpy(mcp_sessions[mcp_session_count++], id, 33);
}

static int find_mcp_session(const char *id)
{
	for (int i = 0; i < mcp_session_count; i++)
		if (strcmp(mcp_sessions[i], id) == 0)
			return i;
	return -1;
}

static bool method_is(struct lws *wsi, enum lws_token_indexes token)
{
	return lws_hdr_total_length(wsi, token) > 0;
}

static int custom_header(struct lws *wsi, const char *name, char *out, int size)
{
	int len = lws_hdr_custom_copy(wsi, out, size, name, (int)strlen(name));
	if (len < 0)
		out[0] = '\0';
	return len;
}

/* A request on /mcp: auth, the protocol version, the MCP session, the
 * method; the checks that need no body. */
int bridge_server_mcp_http_begin(struct http_conn *c)
{
	struct lws *wsi = c->base.wsi;
	if (!bridge_server_origin_allowed(wsi)) {
		bridge_server_http_error(c, 403, "Origin not allowed");
		return 0;
	}
	if (!bridge_server_authorized(c->base.server, wsi, false)) {
		c->reply.extra_header_name = "www-authenticate:";
		c->reply.extra_header_value = "Bearer";
		bridge_server_http_error(
			c, 401, "missing or wrong API key; send Authorization: Bearer <key>");
		return 0;
	}

	char version[64];
	if (custom_header(wsi, "mcp-protocol-version:", version, sizeof(version)) > 0 &&
	    !mcp_protocol_version_supported(version)) {
		bridge_server_http_error(c, 400, "unsupported MCP-Protocol-Version");
		return 0;
	}
	custom_header(wsi, "mcp-session-id:", c->mcp.session_id, sizeof(c->mcp.session_id));

	if (method_is(wsi, WSI_TOKEN_DELETE_URI)) {
		int index = c->mcp.session_id[0] ? find_mcp_session(c->mcp.session_id) : -1;
		if (index < 0) {
			bridge_server_http_error(c, 404, "unknown MCP session");
			return 0;
		}
		memmove(mcp_sessions[index], mcp_sessions[index + 1],
			sizeof(mcp_sessions[0]) * (size_t)(mcp_session_count - index - 1));
		mcp_session_count--;
		bridge_server_http_reply(c, 200, "application/json", "{}\n", 3);
		return 0;
	}
	if (!method_is(wsi, WSI_TOKEN_POST_URI)) {
		c->reply.extra_header_name = "allow:";
		c->reply.extra_header_value = "POST, DELETE";
		bridge_server_http_error(
			c, 405,
			"use POST for messages, DELETE to end the MCP session, or a "
			"WebSocket upgrade with subprotocol mcp");
		return 0;
	}

	char length[32];
	if (lws_hdr_copy(wsi, length, sizeof(length), WSI_TOKEN_HTTP_CONTENT_LENGTH) <= 0) {
		/* libwebsockets 4.1 cannot read chunked request bodies: say so
		 * and close, rather than misread the chunks as requests. */
		c->body_pending = false;
		c->close_after_reply = true;
		bridge_server_http_error(c, 411, "send the message with a Content-Length");
		return 0;
	}
	if (strtoull(length, NULL, 10) > c->base.server->options->max_message) {
		bridge_server_http_error(c, 413, "message too large");
		return 0;
	}
	char accept[256];
	if (lws_hdr_copy(wsi, accept, sizeof(accept), WSI_TOKEN_HTTP_ACCEPT) > 0) {
		c->mcp.accepts_sse = strstr(accept, "text/event-stream") != NULL;
		c->mcp.sse = c->mcp.accepts_sse && !strstr(accept, "application/json");
	}
	return 0; /* the body follows */
}

/* A token as parsed by cJSON itself: request ids and tokens keep their
 * number text (jsonrpc_parse), the notification we match them with is read
 * by cJSON_Parse, so both sides are compared as cJSON_Parse reads them. */
static cJSON *plain_token(const cJSON *token)
{
	if (cJSON_IsRaw(token))
		return cJSON_Parse(token->valuestring);
	return cJSON_Duplicate(token, false);
}

/* The whole POST body is here: decide about the MCP session and hand the
 * message to a peer whose replies come back to this connection. */
void bridge_server_mcp_http_finish(struct http_conn *c)
{
	if (c->body_too_large) {
		bridge_server_http_error(c, 413, "message too large");
		return;
	}
	struct jsonrpc_message msg;
	jsonrpc_parse(c->body ? c->body : "", c->body_len, &msg);
	bool initialize = msg.kind == JSONRPC_REQUEST && strcmp(msg.method, "initialize") == 0;
	if (msg.kind == JSONRPC_REQUEST && c->mcp.accepts_sse) {
		const cJSON *meta = cJSON_GetObjectItemCaseSensitive(msg.params, "_meta");
		const cJSON *token = cJSON_GetObjectItemCaseSensitive(meta, "progressToken");
		/* Without memory for it the reply is plain JSON, as before. */
		if (jsonrpc_is_id(token))
			c->mcp.progress_token = plain_token(token);
	}
	enum jsonrpc_kind kind = msg.kind;
	jsonrpc_message_finish(&msg);

	if (kind != JSONRPC_INVALID && !initialize) {
		if (!c->mcp.session_id[0]) {
			bridge_server_http_error(
				c, 400, "Mcp-Session-Id header required (from initialize)");
			return;
		}
		if (find_mcp_session(c->mcp.session_id) < 0) {
			bridge_server_http_error(c, 404, "unknown MCP session; initialize again");
			return;
		}
	}
	if (initialize) {
		new_mcp_session(c->mcp.session_id);
		c->mcp.initializing = true;
	}
	/* Several POSTs of one client share its MCP session: a cancellation
	 * in one names a call made in another. */
	mcp_peer_set_scope(c->peer, c->mcp.session_id[0] ? c->mcp.session_id : NULL);
	if (kind == JSONRPC_NOTIFICATION || kind == JSONRPC_RESPONSE) {
		mcp_peer_handle(c->peer, c->body, c->body_len);
		bridge_server_http_reply(c, 202, "application/json", "", 0);
		return;
	}
	c->mcp.awaiting_reply = true;
	mcp_peer_handle(c->peer, c->body, c->body_len);
}

static bool is_notification(const struct outgoing *o)
{
	static const char prefix[] = "{\"jsonrpc\":\"2.0\",\"method\":";
	return o->len >= sizeof(prefix) - 1 &&
	       memcmp(o->text + LWS_PRE, prefix, sizeof(prefix) - 1) == 0;
}

/* Whether a notification is progress of the request this connection waits
 * on. Other notifications (logging) have no place in its reply. */
static bool is_our_progress(const struct http_conn *c, const struct outgoing *o)
{
	if (!c->mcp.progress_token)
		return false;
	cJSON *root = cJSON_Parse(o->text + LWS_PRE);
	const cJSON *method = cJSON_GetObjectItemCaseSensitive(root, "method");
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(root, "params");
	bool ours = cJSON_IsString(method) &&
		    strcmp(method->valuestring, "notifications/progress") == 0 &&
		    cJSON_Compare(cJSON_GetObjectItemCaseSensitive(params, "progressToken"),
				  c->mcp.progress_token, true);
	cJSON_Delete(root);
	return ours;
}

/* Makes o's JSON one SSE event in one HTTP chunk, in place of its text;
 * the last one also carries the chunk that ends the body. */
static bool frame_event(struct outgoing *o, bool last)
{
	static const char end_of_body[] = "0\r\n\r\n";
	size_t event_len = o->len + sizeof("event: message\ndata: \n\n") - 1;
	size_t size = LWS_PRE + 20 + event_len + 2 + sizeof(end_of_body);
	char *framed = malloc(size);
	if (!framed)
		return false;
	int n = snprintf(framed + LWS_PRE, size - LWS_PRE,
			 "%zx\r\nevent: message\ndata: %s\n\n\r\n%s", event_len, o->text + LWS_PRE,
			 last ? end_of_body : "");
	free(o->text);
	o->text = framed;
	o->len = (size_t)n;
	o->sent = 0;
	return true;
}

/* A notification or the reply for a request answered as an SSE stream. */
static void stream(struct http_conn *c, struct outgoing *o, bool last)
{
	if (!frame_event(o, last)) {
		bridge_server_outgoing_free(o);
		bridge_server_conn_kill(&c->base, "out of memory for an SSE event");
		return;
	}
	if (!c->mcp.streaming) {
		c->mcp.streaming = true;
		c->reply.status = 200;
		c->reply.content_type = "text/event-stream";
		c->reply.headers_sent = false;
		if (c->mcp.initializing)
			snprintf(c->reply.session_header, sizeof(c->reply.session_header), "%s",
				 c->mcp.session_id);
	}
	if (last) {
		c->mcp.stream_done = true;
		c->mcp.awaiting_reply = false;
		/* The client gets its full time to read the rest. */
		bridge_server_arm_request_timer(c->base.server, c->base.wsi);
	}
	bridge_server_conn_enqueue(&c->base, o);
}

static void deliver(struct server_conn *base, struct outgoing *o)
{
	struct http_conn *c = (struct http_conn *)base;
	if (!c->mcp.awaiting_reply) {
		bridge_server_outgoing_free(o);
		return;
	}
	if (is_notification(o)) {
		if (c->mcp.accepts_sse && is_our_progress(c, o))
			stream(c, o, false);
		else
			bridge_server_outgoing_free(o);
		return;
	}
	if (c->mcp.streaming) {
		stream(c, o, true);
		return;
	}
	/* The client gets its full time to read the reply, however long the
	 * call took. */
	bridge_server_arm_request_timer(c->base.server, c->base.wsi);
	/* Errors without an id (unparsable, invalid) are the request's fault. */
	bool bad_request = strstr(o->text + LWS_PRE, "\"id\":null,\"error\"") != NULL;
	if (c->mcp.initializing)
		snprintf(c->reply.session_header, sizeof(c->reply.session_header), "%s",
			 c->mcp.session_id);
	if (c->mcp.sse) {
		char *event = malloc(o->len + 32);
		if (event) {
			int n = snprintf(event, o->len + 32, "event: message\ndata: %s\n\n",
					 o->text + LWS_PRE);
			bridge_server_http_reply(c, bad_request ? 400 : 200, "text/event-stream",
						 event, (size_t)n);
			free(event);
		}
	} else {
		bridge_server_http_reply(c, bad_request ? 400 : 200, "application/json",
					 o->text + LWS_PRE, o->len);
	}
	bridge_server_outgoing_free(o);
}

bool bridge_server_mcp_http_open(struct http_conn *c)
{
	struct bridge_server *server = c->base.server;
	c->base.deliver = deliver;
	if (!server->options->mcp)
		return true; /* viewers only: no peer */
	c->link = malloc(sizeof(*c->link));
	if (c->link) {
		*c->link = (struct peer_link){ server, c->base.id };
		c->peer = mcp_peer_create(server->options->mcp, bridge_server_send_to_peer,
					  c->link);
	}
	return c->peer != NULL;
}

void bridge_server_mcp_http_close(struct http_conn *c)
{
	/* A call still running finds its peer closed and drops its reply. */
	mcp_peer_close(c->peer);
	free(c->link);
	c->peer = NULL;
	c->link = NULL;
}
