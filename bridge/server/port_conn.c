/* SPDX-License-Identifier: MIT */
/* One proxied connection's bytes (see port_conn.h). */
#include "bridge/server/port_conn.h"

#include "bridge/server/port_head.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct port_conn *port_conn_create(int client)
{
	struct port_conn *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->in.data = malloc(PORT_HEAD_MAX);
	if (!c->in.data) {
		free(c);
		return NULL;
	}
	c->in.cap = PORT_HEAD_MAX;
	c->client = client;
	c->upstream = c->pending = -1;
	return c;
}

void port_conn_destroy(struct port_conn *c)
{
	if (!c)
		return;
	if (c->client >= 0)
		close(c->client);
	if (c->upstream >= 0)
		close(c->upstream);
	if (c->pending >= 0)
		close(c->pending);
	free(c->in.data);
	free(c->up.data);
	free(c->down.data);
	free(c);
}

static bool make_buffer(struct port_buffer *b, size_t cap)
{
	if (b->data)
		return true;
	b->data = malloc(cap);
	b->cap = b->data ? cap : 0;
	return b->data != NULL;
}

bool port_conn_relay_buffers(struct port_conn *c)
{
	return make_buffer(&c->up, PORT_RELAY_BUFFER) && make_buffer(&c->down, PORT_RELAY_BUFFER);
}

size_t port_buffer_len(const struct port_buffer *b)
{
	return b->end - b->start;
}

void port_buffer_consume(struct port_buffer *b, size_t n)
{
	b->start += n;
	if (b->start == b->end)
		b->start = b->end = 0;
}

size_t port_buffer_space(struct port_buffer *b)
{
	if (b->start > 0 && b->end == b->cap) {
		memmove(b->data, b->data + b->start, b->end - b->start);
		b->end -= b->start;
		b->start = 0;
	}
	return b->cap - b->end;
}

bool port_buffer_put(struct port_buffer *b, const char *data, size_t len)
{
	if (b->start > 0) {
		memmove(b->data, b->data + b->start, b->end - b->start);
		b->end -= b->start;
		b->start = 0;
	}
	if (b->cap - b->end < len)
		return false;
	memcpy(b->data + b->end, data, len);
	b->end += len;
	return true;
}

static bool token_is(const struct port_conn *c, struct port_span token)
{
	size_t want = strlen(c->token);
	if (!token.ptr || token.len != want)
		return false;
	unsigned char diff = 0;
	for (size_t i = 0; i < want; i++)
		diff |= (unsigned char)(token.ptr[i] ^ c->token[i]);
	return diff == 0;
}

/* Whether a later request may go where the connection goes; if not, the
 * connection stops taking requests and says why once the answers in flight
 * are out. */
static bool request_allowed(struct port_conn *c, const struct port_request *r)
{
	struct port_route route;
	bool same = port_route_find(r, c->public_host, &route) && route.port == c->route.port &&
		    strcmp(route.session, c->route.session) == 0;
	if (same && token_is(c, r->token))
		return true;
	c->flow = PORT_FLOW_REFUSED;
	c->refused_html = false;
	for (size_t i = 0; r->accept.ptr && i + 9 <= r->accept.len; i++)
		c->refused_html = c->refused_html || memcmp(r->accept.ptr + i, "text/html", 9) == 0;
	if (!same) {
		c->refused_status = 421;
		snprintf(c->refused_message, sizeof(c->refused_message),
			 "this connection goes to port %d of session %s; open another one for "
			 "another host",
			 c->route.port, c->route.session);
	} else {
		c->refused_status = 401;
		snprintf(c->refused_message, sizeof(c->refused_message),
			 "every request needs the session's access token");
	}
	return false;
}

/* The next head, rewritten into up; false when it cannot go yet (or is
 * bad: then c is dead). */
static bool forward_head(struct port_conn *c)
{
	struct port_request r;
	const char *why;
	const char *data = c->in.data + c->in.start;
	switch (port_head_parse(data, port_buffer_len(&c->in), &r, &why)) {
	case PORT_HEAD_INCOMPLETE:
		return false;
	case PORT_HEAD_TOO_LARGE:
		c->dead = true;
		c->why_dead = "a request head over 16 KiB";
		return false;
	case PORT_HEAD_BAD:
		c->dead = true;
		c->why_dead = why;
		return false;
	case PORT_HEAD_OK:
		break;
	}
	if (!request_allowed(c, &r))
		return false;
	/* The rewritten head goes in whole, or waits for room. */
	port_buffer_space(&c->up);
	if (c->up.cap - port_buffer_len(&c->up) < r.head_len + PORT_HEAD_GROWTH)
		return false;
	char *out = malloc(r.head_len + PORT_HEAD_GROWTH);
	if (!out) {
		c->dead = true;
		c->why_dead = "out of memory";
		return false;
	}
	size_t n = port_head_rewrite(data, &r, c->client_text, c->peer_trusted, out,
				     r.head_len + PORT_HEAD_GROWTH);
	port_buffer_put(&c->up, out, n);
	free(out);
	port_buffer_consume(&c->in, r.head_len);
	if (r.upgrade.ptr) {
		/* WebSocket (or another protocol): raw both ways once the service
		 * says 101 (port_conn_read_answer). */
		c->flow = PORT_FLOW_UPGRADING;
		return true;
	}
	port_body_start(&c->body, r.chunked, r.has_length ? r.content_length : 0);
	c->flow = c->body.state == PORT_BODY_DONE ? PORT_FLOW_HEAD : PORT_FLOW_BODY;
	return true;
}

/* Body bytes as far as the body goes and up has room; false when none
 * moved. */
static bool forward_body(struct port_conn *c)
{
	size_t len = port_buffer_len(&c->in), room = port_buffer_space(&c->up);
	size_t n = len < room ? len : room;
	size_t used = c->flow == PORT_FLOW_RAW
			      ? n
			      : port_body_advance(&c->body, c->in.data + c->in.start, n);
	if (c->flow == PORT_FLOW_BODY && c->body.state == PORT_BODY_BAD) {
		c->dead = true;
		c->why_dead = "a malformed chunked body";
		return false;
	}
	port_buffer_put(&c->up, c->in.data + c->in.start, used);
	port_buffer_consume(&c->in, used);
	if (c->flow == PORT_FLOW_BODY && c->body.state == PORT_BODY_DONE)
		c->flow = PORT_FLOW_HEAD;
	return used > 0;
}

void port_conn_forward(struct port_conn *c)
{
	while (!c->dead && port_buffer_len(&c->in) > 0 &&
	       (c->flow == PORT_FLOW_HEAD || c->flow == PORT_FLOW_BODY ||
		c->flow == PORT_FLOW_RAW)) {
		bool moved = c->flow == PORT_FLOW_HEAD ? forward_head(c) : forward_body(c);
		if (!moved)
			return;
	}
}

bool port_conn_read_answer(struct port_conn *c, bool *eof)
{
	size_t before = port_buffer_len(&c->down);
	bool ok = port_conn_read(c->upstream, &c->down, eof);
	size_t fresh = port_buffer_len(&c->down) - before;
	if (c->flow != PORT_FLOW_UPGRADING || (fresh == 0 && ok))
		return ok;
	/* The first bytes after the upgrade request: its answer's status line
	 * (an answer to an earlier request a client pipelined would come
	 * first, and closes the connection too: the safe side). */
	const char *status = c->down.data + c->down.start + before;
	if (fresh >= 12 &&
	    (memcmp(status, "HTTP/1.1 101", 12) == 0 || memcmp(status, "HTTP/1.0 101", 12) == 0)) {
		c->flow = PORT_FLOW_RAW;
		c->upgraded = true;
	} else {
		c->flow = PORT_FLOW_CLOSING;
	}
	return ok;
}

bool port_conn_read(int fd, struct port_buffer *b, bool *eof)
{
	*eof = false;
	size_t room = port_buffer_space(b);
	if (room == 0)
		return true;
	ssize_t n;
	while ((n = read(fd, b->data + b->end, room)) < 0 && errno == EINTR)
		;
	if (n > 0) {
		b->end += (size_t)n;
		return true;
	}
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return true;
	*eof = n == 0;
	return false;
}

bool port_conn_write(int fd, struct port_buffer *b)
{
	while (port_buffer_len(b) > 0) {
		ssize_t n = send(fd, b->data + b->start, port_buffer_len(b), MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK;
		port_buffer_consume(b, (size_t)n);
	}
	return true;
}
