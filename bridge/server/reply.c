/* SPDX-License-Identifier: MIT */
/* An HTTP exchange's reply (see reply.h): set from any route, written only
 * in the writable callback, in chunks; an SSE stream's events one per
 * callback. Its end completes the request, so a kept-alive connection
 * starts the next one with its own time. */
#include "bridge/server/reply.h"

#include "bridge/server/conn.h"
#include "bridge/server/limits.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HTTP_CHUNK 65536

void bridge_server_http_reset(struct http_conn *c)
{
	bridge_server_conn_free_queue(&c->base);
	cJSON_Delete(c->mcp.progress_token);
	c->mcp.progress_token = NULL;
	c->mcp.accepts_sse = false;
	c->mcp.streaming = false;
	c->mcp.stream_done = false;
	free(c->body);
	free(c->reply.body);
	c->body = NULL;
	c->body_len = 0;
	c->body_too_large = false;
	c->body_pending = false;
	c->close_after_reply = false;
	c->mcp.sse = false;
	c->mcp.session_id[0] = '\0';
	c->mcp.initializing = false;
	c->mcp.awaiting_reply = false;
	memset(&c->reply, 0, sizeof(c->reply));
}

/* Sets the reply and asks for a writable callback; lws_write happens only
 * there. body is copied. */
void bridge_server_http_reply(struct http_conn *c, int status, const char *content_type,
			      const char *body, size_t len)
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
	c->mcp.awaiting_reply = false;
	/* An early answer to a POST waits until its body has been read. */
	if (!c->body_pending)
		lws_callback_on_writable(c->base.wsi);
}

void bridge_server_http_error(struct http_conn *c, int status, const char *message)
{
	char body[512];
	int n = snprintf(body, sizeof(body), "{\"error\":\"%s\"}\n", message);
	bridge_server_http_reply(c, status, "application/json", body, (size_t)n);
}

/* The end of a request: the next one on this connection gets its own time. */
static int complete(struct http_conn *c)
{
	bool close_now = c->close_after_reply;
	bridge_server_http_reset(c);
	bridge_server_request_done(c->base.server, c->base.wsi);
	if (close_now)
		return -1;
	bridge_server_arm_request_timer(c->base.server, c->base.wsi);
	return lws_http_transaction_completed(c->base.wsi) ? -1 : 0;
}

static int add_header(struct lws *wsi, const char *name, const char *value, unsigned char **p,
		      unsigned char *end)
{
	return lws_add_http_header_by_name(wsi, (const unsigned char *)name,
					   (const unsigned char *)value, (int)strlen(value), p,
					   end);
}

/* An SSE stream: headers without a length (chunked, so the connection
 * can stay), then one queued event per writable callback; after the final
 * one the request is complete. */
static int write_stream(struct http_conn *c)
{
	struct http_reply *r = &c->reply;
	struct lws *wsi = c->base.wsi;
	if (!r->headers_sent) {
		unsigned char buffer[LWS_PRE + 1024];
		unsigned char *start = buffer + LWS_PRE, *p = start,
			      *end = buffer + sizeof(buffer) - 1;
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
	struct outgoing *o = c->base.queue_head;
	if (!o)
		return 0;
	bool last = c->mcp.stream_done && !o->next;
	if (lws_write(wsi, (unsigned char *)o->text + LWS_PRE, o->len,
		      last ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) != (int)o->len)
		return -1;
	c->base.queue_head = o->next;
	if (!c->base.queue_head)
		c->base.queue_tail = NULL;
	c->base.queued_bytes -= o->len;
	bridge_server_outgoing_free(o);
	if (last)
		return complete(c);
	if (c->base.queue_head)
		lws_callback_on_writable(wsi);
	return 0;
}

int bridge_server_http_write(struct http_conn *c)
{
	struct http_reply *r = &c->reply;
	struct lws *wsi = c->base.wsi;
	if (c->mcp.streaming)
		return write_stream(c);
	if (!r->status)
		return 0;
	if (!r->headers_sent) {
		unsigned char buffer[LWS_PRE + 1024];
		unsigned char *start = buffer + LWS_PRE, *p = start,
			      *end = buffer + sizeof(buffer) - 1;
		if (lws_add_http_common_headers(wsi, (unsigned)r->status, r->content_type, r->len,
						&p, end))
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
