/* SPDX-License-Identifier: MIT */
/* A request head on its way to an exposed port: parsed strictly (a proxy
 * that reads a head one way while the service reads it another can be
 * smuggled past), then written out again for the service without what is
 * ours: the access token (header, query parameter or cookie) and the
 * routing headers; with X-Forwarded-For, -Host and -Proto set by us, and
 * the Host passed on. Pure code without sockets or libwebsockets, so the
 * unit tests drive it directly. */
#ifndef LIZARD_BRIDGE_PORT_HEAD_H
#define LIZARD_BRIDGE_PORT_HEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The longest request head accepted (request line and headers). */
#define PORT_HEAD_MAX 16384
/* What the rewrite may add to it. */
#define PORT_HEAD_GROWTH 512

/* A piece of the head: pointer into it and length; ptr NULL when absent. */
struct port_span {
	const char *ptr;
	size_t len;
};

struct port_request {
	struct port_span method, target, version;
	struct port_span host, origin, accept, upgrade;
	struct port_span session, port;   /* the routing headers */
	struct port_span forwarded_for;   /* the client's X-Forwarded-For */
	struct port_span forwarded_proto; /* and X-Forwarded-Proto */
	/* The access token, from wherever it came first. */
	struct port_span token;
	bool token_in_header, token_in_query, token_in_cookie;
	bool chunked;
	bool has_length;
	uint64_t content_length;
	size_t head_len; /* through the blank line */
};

enum port_head_result {
	PORT_HEAD_INCOMPLETE, /* no blank line yet (and under PORT_HEAD_MAX) */
	PORT_HEAD_OK,
	PORT_HEAD_TOO_LARGE,
	PORT_HEAD_BAD,
};

/* Parses the head at the start of data. On PORT_HEAD_BAD *why says what is
 * wrong with it, for a 400. */
enum port_head_result port_head_parse(const char *data, size_t len, struct port_request *r,
				      const char **why);
/* Writes the head the service gets into out (size at least r->head_len +
 * PORT_HEAD_GROWTH); returns its length. client is the peer's address as
 * text, for X-Forwarded-For: appended to the chain the request carries
 * when the peer is a trusted proxy (keep_chain), the whole of it
 * otherwise (a client's own header could say anything). X-Forwarded-Proto
 * is http, or https when a trusted proxy says so (its TLS in front). */
size_t port_head_rewrite(const char *data, const struct port_request *r, const char *client,
			 bool keep_chain, char *out, size_t size);
/* The target without the token parameter (for a redirect's Location);
 * returns its length. out has r->target.len + 1 bytes at least. */
size_t port_head_clean_target(const struct port_request *r, char *out, size_t size);

/* True when the spans are equal ignoring ASCII case. */
bool port_span_is(struct port_span span, const char *text);

#endif
