/* HTTP on the server: /healthz, /metrics, and MCP's Streamable HTTP
 * transport on /mcp (2025-11-25): POST one JSON-RPC message, answered with
 * JSON (or one SSE event when the client accepts only that); 202 for
 * notifications and responses; Mcp-Session-Id issued at initialize and
 * required after; DELETE ends the MCP session; GET is 405. A request with a
 * progressToken from a client that accepts text/event-stream turns into an
 * SSE stream at its first progress notification: chunked, each notification
 * an event, then the response, then the stream ends (the connection stays
 * for the next request). */
#include "bridge/server/state.h"

#include "bridge/server/metrics.h"
#include "mcp/jsonrpc.h"
#include "mcp/server.h"
#include "util/log.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#define MAX_MCP_SESSIONS 1024
#define HTTP_CHUNK 65536

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
		memmove(mcp_sessions[0], mcp_sessions[1], sizeof(mcp_sessions[0]) * (MAX_MCP_SESSIONS - 1));
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

static void reset_request(struct connection *c)
{
	bridge_server_free_queue(c);
	cJSON_Delete(c->progress_token);
	c->progress_token = NULL;
	c->accepts_sse = false;
	c->streaming = false;
	c->stream_done = false;
	free(c->body);
	free(c->reply.body);
	c->body = NULL;
	c->body_len = 0;
	c->body_too_large = false;
	c->body_pending = false;
	c->close_after_reply = false;
	c->sse = false;
	c->session_id[0] = '\0';
	c->initializing = false;
	c->awaiting_reply = false;
	memset(&c->reply, 0, sizeof(c->reply));
}

/* Sets the reply and asks for a writable callback; lws_write happens only
 * there. body is copied. */
static void reply(struct connection *c, int status, const char *content_type, const char *body,
		  size_t len)
{
	free(c->reply.body);
	c->reply.status = status;
	c->reply.content_type = content_type;
	c->reply.body = malloc(LWS_PRE + len + 1);
	c->reply.len = c->reply.body ? len : 0;
	if (c->reply.body && len)
		memcpy(c->reply.body + LWS_PRE, body, len);
	c->reply.sent = 0;
	c->reply.headers_sent = false;
	c->awaiting_reply = false;
	/* An early answer to a POST waits until its body has been read. */
	if (!c->body_pending)
		lws_callback_on_writable(c->wsi);
}

void bridge_server_http_reply(struct connection *c, int status, const char *content_type,
			      const char *body, size_t len)
{
	reply(c, status, content_type, body, len);
}

static void reply_error(struct connection *c, int status, const char *message)
{
	char body[512];
	int n = snprintf(body, sizeof(body), "{\"error\":\"%s\"}\n", message);
	reply(c, status, "application/json", body, (size_t)n);
}


static int custom_header(struct lws *wsi, const char *name, char *out, int size)
{
	int len = lws_hdr_custom_copy(wsi, out, size, name, (int)strlen(name));
	if (len < 0)
		out[0] = '\0';
	return len;
}

static void serve_metrics(struct connection *c)
{
	const struct bridge_server_options *o = c->server->options;
	char *text = bridge_metrics_render(o->metrics, o->registry);
	if (!text) {
		reply_error(c, 500, "out of memory");
		return;
	}
	reply(c, 200, "text/plain; version=0.0.4", text, strlen(text));
	free(text);
}

/* LWS_CALLBACK_HTTP: routing, auth and the checks that need no body. */
static int begin_request(struct connection *c, const char *uri)
{
	struct lws *wsi = c->wsi;
	reset_request(c);
	c->body_pending = method_is(wsi, WSI_TOKEN_POST_URI);
	/* First: a client over its cap behind a proxy gets nothing else. */
	const char *why;
	int refused = bridge_server_attribute_request(c->server, wsi, &why);
	if (refused) {
		/* At once and then closed: a body trickled after a refusal would
		 * hold the proxy's connection for a client over its cap. */
		c->body_pending = false;
		c->close_after_reply = true;
		reply_error(c, refused, why);
		return 0;
	}
	if (strcmp(uri, "/healthz") == 0) {
		reply(c, 200, "application/json", "{\"status\":\"ok\"}\n", 16);
		return 0;
	}
	if (!bridge_server_host_allowed(c->server, wsi)) {
		reply_error(c, 403, "Host header not allowed: use localhost or an address, or "
				    "start the server with --allowed-host NAME");
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
		reply_error(c, 404, "not found; MCP is served on /mcp");
		return 0;
	}
	if (!bridge_server_origin_allowed(wsi)) {
		reply_error(c, 403, "Origin not allowed");
		return 0;
	}
	if (!bridge_server_authorized(c->server, wsi, false)) {
		c->reply.extra_header_name = "www-authenticate:";
		c->reply.extra_header_value = "Bearer";
		reply_error(c, 401, "missing or wrong API key; send Authorization: Bearer <key>");
		return 0;
	}

	char version[64];
	if (custom_header(wsi, "mcp-protocol-version:", version, sizeof(version)) > 0 &&
	    !mcp_protocol_version_supported(version)) {
		reply_error(c, 400, "unsupported MCP-Protocol-Version");
		return 0;
	}
	custom_header(wsi, "mcp-session-id:", c->session_id, sizeof(c->session_id));

	if (method_is(wsi, WSI_TOKEN_DELETE_URI)) {
		int index = c->session_id[0] ? find_mcp_session(c->session_id) : -1;
		if (index < 0) {
			reply_error(c, 404, "unknown MCP session");
			return 0;
		}
		memmove(mcp_sessions[index], mcp_sessions[index + 1],
			sizeof(mcp_sessions[0]) * (size_t)(mcp_session_count - index - 1));
		mcp_session_count--;
		reply(c, 200, "application/json", "{}\n", 3);
		return 0;
	}
	if (!method_is(wsi, WSI_TOKEN_POST_URI)) {
		c->reply.extra_header_name = "allow:";
		c->reply.extra_header_value = "POST, DELETE";
		reply_error(c, 405, "use POST for messages, DELETE to end the MCP session, or a "
				    "WebSocket upgrade with subprotocol mcp");
		return 0;
	}

	char length[32];
	if (lws_hdr_copy(wsi, length, sizeof(length), WSI_TOKEN_HTTP_CONTENT_LENGTH) <= 0) {
		/* libwebsockets 4.1 cannot read chunked request bodies: say so
		 * and close, rather than misread the chunks as requests. */
		c->body_pending = false;
		c->close_after_reply = true;
		reply_error(c, 411, "send the message with a Content-Length");
		return 0;
	}
	if (strtoull(length, NULL, 10) > c->server->options->max_message) {
		reply_error(c, 413, "message too large");
		return 0;
	}
	char accept[256];
	if (lws_hdr_copy(wsi, accept, sizeof(accept), WSI_TOKEN_HTTP_ACCEPT) > 0) {
		c->accepts_sse = strstr(accept, "text/event-stream") != NULL;
		c->sse = c->accepts_sse && !strstr(accept, "application/json");
	}
	return 0; /* the body follows */
}

static void append_body(struct connection *c, const void *data, size_t len)
{
	/* Already answered (401, 404, 413...): read and dropped, not kept. */
	if (c->body_too_large || c->reply.status)
		return;
	if (c->body_len + len > c->server->options->max_message) {
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
static void finish_request(struct connection *c)
{
	if (c->body_too_large) {
		reply_error(c, 413, "message too large");
		return;
	}
	struct jsonrpc_message msg;
	jsonrpc_parse(c->body ? c->body : "", c->body_len, &msg);
	bool initialize = msg.kind == JSONRPC_REQUEST && strcmp(msg.method, "initialize") == 0;
	if (msg.kind == JSONRPC_REQUEST && c->accepts_sse) {
		const cJSON *meta = cJSON_GetObjectItemCaseSensitive(msg.params, "_meta");
		const cJSON *token = cJSON_GetObjectItemCaseSensitive(meta, "progressToken");
		/* Without memory for it the reply is plain JSON, as before. */
		if (jsonrpc_is_id(token))
			c->progress_token = plain_token(token);
	}
	enum jsonrpc_kind kind = msg.kind;
	jsonrpc_message_finish(&msg);

	if (kind != JSONRPC_INVALID && !initialize) {
		if (!c->session_id[0]) {
			reply_error(c, 400, "Mcp-Session-Id header required (from initialize)");
			return;
		}
		if (find_mcp_session(c->session_id) < 0) {
			reply_error(c, 404, "unknown MCP session; initialize again");
			return;
		}
	}
	if (initialize) {
		new_mcp_session(c->session_id);
		c->initializing = true;
	}
	/* Several POSTs of one client share its MCP session: a cancellation
	 * in one names a call made in another. */
	mcp_peer_set_scope(c->peer, c->session_id[0] ? c->session_id : NULL);
	if (kind == JSONRPC_NOTIFICATION || kind == JSONRPC_RESPONSE) {
		mcp_peer_handle(c->peer, c->body, c->body_len);
		reply(c, 202, "application/json", "", 0);
		return;
	}
	c->awaiting_reply = true;
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
static bool is_our_progress(const struct connection *c, const struct outgoing *o)
{
	if (!c->progress_token)
		return false;
	cJSON *root = cJSON_Parse(o->text + LWS_PRE);
	const cJSON *method = cJSON_GetObjectItemCaseSensitive(root, "method");
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(root, "params");
	bool ours = cJSON_IsString(method) &&
		    strcmp(method->valuestring, "notifications/progress") == 0 &&
		    cJSON_Compare(cJSON_GetObjectItemCaseSensitive(params, "progressToken"),
				  c->progress_token, true);
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
	int n = snprintf(framed + LWS_PRE, size - LWS_PRE, "%zx\r\nevent: message\ndata: %s\n\n\r\n%s",
			 event_len, o->text + LWS_PRE, last ? end_of_body : "");
	free(o->text);
	o->text = framed;
	o->len = (size_t)n;
	o->sent = 0;
	return true;
}

static void drop(struct outgoing *o)
{
	free(o->text);
	free(o);
}

/* A notification or the reply for a request answered as an SSE stream. */
static void stream(struct connection *c, struct outgoing *o, bool last)
{
	if (!frame_event(o, last)) {
		drop(o);
		bridge_server_kill(c, "out of memory for an SSE event");
		return;
	}
	if (!c->streaming) {
		c->streaming = true;
		c->reply.status = 200;
		c->reply.content_type = "text/event-stream";
		c->reply.headers_sent = false;
		if (c->initializing)
			snprintf(c->reply.session_header, sizeof(c->reply.session_header), "%s",
				 c->session_id);
	}
	if (last) {
		c->stream_done = true;
		c->awaiting_reply = false;
		/* The client gets its full time to read the rest. */
		bridge_server_arm_request_timer(c->server, c->wsi);
	}
	bridge_server_enqueue(c, o);
}

void bridge_server_http_deliver(struct connection *c, struct outgoing *o)
{
	if (!c->awaiting_reply) {
		drop(o);
		return;
	}
	if (is_notification(o)) {
		if (c->accepts_sse && is_our_progress(c, o))
			stream(c, o, false);
		else
			drop(o);
		return;
	}
	if (c->streaming) {
		stream(c, o, true);
		return;
	}
	/* The client gets its full time to read the reply, however long the
	 * call took. */
	bridge_server_arm_request_timer(c->server, c->wsi);
	/* Errors without an id (unparsable, invalid) are the request's fault. */
	bool bad_request = strstr(o->text + LWS_PRE, "\"id\":null,\"error\"") != NULL;
	if (c->initializing)
		snprintf(c->reply.session_header, sizeof(c->reply.session_header), "%s",
			 c->session_id);
	if (c->sse) {
		char *event = malloc(o->len + 32);
		if (event) {
			int n = snprintf(event, o->len + 32, "event: message\ndata: %s\n\n",
					 o->text + LWS_PRE);
			reply(c, bad_request ? 400 : 200, "text/event-stream", event, (size_t)n);
			free(event);
		}
	} else {
		reply(c, bad_request ? 400 : 200, "application/json", o->text + LWS_PRE, o->len);
	}
	drop(o);
}

/* The end of a request: the next one on this connection gets its own time. */
static int complete(struct connection *c)
{
	bool close_now = c->close_after_reply;
	reset_request(c);
	bridge_server_request_done(c->server, c->wsi);
	if (close_now)
		return -1;
	bridge_server_arm_request_timer(c->server, c->wsi);
	return lws_http_transaction_completed(c->wsi) ? -1 : 0;
}

static int add_header(struct lws *wsi, const char *name, const char *value, unsigned char **p,
		      unsigned char *end)
{
	return lws_add_http_header_by_name(wsi, (const unsigned char *)name,
					   (const unsigned char *)value, (int)strlen(value), p, end);
}

/* An SSE stream: headers without a length (chunked, so the connection
 * can stay), then one queued event per writable callback; after the final
 * one the request is complete. */
static int write_stream(struct connection *c)
{
	struct http_reply *r = &c->reply;
	struct lws *wsi = c->wsi;
	if (!r->headers_sent) {
		unsigned char buffer[LWS_PRE + 1024];
		unsigned char *start = buffer + LWS_PRE, *p = start, *end = buffer + sizeof(buffer) - 1;
		if (lws_add_http_header_status(wsi, 200, &p, end) ||
		    add_header(wsi, "content-type:", "text/event-stream", &p, end) ||
		    add_header(wsi, "cache-control:", "no-cache", &p, end) ||
		    add_header(wsi, "transfer-encoding:", "chunked", &p, end) ||
		    (r->session_header[0] &&
		     add_header(wsi, "mcp-session-id:", r->session_header, &p, end)) ||
		    lws_finalize_write_http_header(wsi, start, &p, end))
			return -1;
		r->headers_sent = true;
		lws_callback_on_writable(wsi);
		return 0;
	}
	struct outgoing *o = c->queue_head;
	if (!o)
		return 0;
	bool last = c->stream_done && !o->next;
	if (lws_write(wsi, (unsigned char *)o->text + LWS_PRE, o->len,
		      last ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) != (int)o->len)
		return -1;
	c->queue_head = o->next;
	if (!c->queue_head)
		c->queue_tail = NULL;
	c->queued_bytes -= o->len;
	drop(o);
	if (last)
		return complete(c);
	if (c->queue_head)
		lws_callback_on_writable(wsi);
	return 0;
}

static int write_reply(struct connection *c)
{
	struct http_reply *r = &c->reply;
	struct lws *wsi = c->wsi;
	if (c->streaming)
		return write_stream(c);
	if (!r->status)
		return 0;
	if (!r->headers_sent) {
		unsigned char buffer[LWS_PRE + 1024];
		unsigned char *start = buffer + LWS_PRE, *p = start, *end = buffer + sizeof(buffer) - 1;
		if (lws_add_http_common_headers(wsi, (unsigned)r->status, r->content_type, r->len, &p,
						end))
			return -1;
		if (r->session_header[0] &&
		    add_header(wsi, "mcp-session-id:", r->session_header, &p, end))
			return -1;
		if (r->extra_header_name &&
		    add_header(wsi, r->extra_header_name, r->extra_header_value, &p, end))
			return -1;
		if (lws_finalize_write_http_header(wsi, start, &p, end))
			return -1;
		r->headers_sent = true;
		if (r->len > 0) {
			lws_callback_on_writable(wsi);
			return 0;
		}
	} else {
		size_t chunk = r->len - r->sent > HTTP_CHUNK ? HTTP_CHUNK : r->len - r->sent;
		bool last = r->sent + chunk == r->len;
		/* Each chunk needs LWS_PRE writable bytes before it: the
		 * headroom, then bytes already sent. */
		if (lws_write(wsi, (unsigned char *)r->body + LWS_PRE + r->sent, chunk,
			      last ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) != (int)chunk)
			return -1;
		r->sent += chunk;
		if (!last) {
			lws_callback_on_writable(wsi);
			return 0;
		}
	}
	return complete(c);
}

static void open_connection(struct connection *c, struct lws *wsi)
{
	struct bridge_server *server = lws_context_user(lws_get_context(wsi));
	bridge_server_track(server, c, wsi, false);
	c->link = malloc(sizeof(*c->link));
	if (c->link) {
		*c->link = (struct peer_link){ server, c->id };
		c->peer = mcp_peer_create(server->options->mcp, bridge_server_send_to_peer, c->link);
	}
}

static void close_connection(struct connection *c)
{
	/* A connection that closes before sending a request (a port scan, a
	 * TCP health probe) has no per-connection memory at all. */
	if (!c || !c->server)
		return;
	/* A call still running finds its peer closed and drops its reply. */
	mcp_peer_close(c->peer);
	free(c->link);
	reset_request(c);
	bridge_server_untrack(c->server, c);
	c->server = NULL;
	c->peer = NULL;
	c->link = NULL;
}

int bridge_server_http_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user,
				void *in, size_t len)
{
	struct connection *c = user;

	switch (reason) {
	case LWS_CALLBACK_HTTP:
		if (!c->server)
			open_connection(c, wsi);
		if (!c->peer)
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
			finish_request(c);
		return 0;
	case LWS_CALLBACK_HTTP_WRITEABLE:
		return write_reply(c);
	case LWS_CALLBACK_TIMER:
		/* The request's time is up. A call still running is our time,
		 * not the client's: that one waits for its reply, streamed
		 * progress or not. */
		if (c && c->server && c->awaiting_reply) {
			bridge_server_arm_request_timer(c->server, wsi);
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
