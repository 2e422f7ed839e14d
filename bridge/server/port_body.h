/* SPDX-License-Identifier: MIT */
/* Where a request body ends, so that the next request's head is read as
 * one: Content-Length bytes, or chunked coding (sizes, data, trailers)
 * followed byte by byte without keeping any of it. Pure code; the unit
 * tests drive it directly. */
#ifndef LIZARD_BRIDGE_PORT_BODY_H
#define LIZARD_BRIDGE_PORT_BODY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum port_body_state {
	PORT_BODY_DONE,
	PORT_BODY_LENGTH,     /* remaining bytes of a Content-Length body */
	PORT_BODY_CHUNK_SIZE, /* in a chunk-size line */
	PORT_BODY_CHUNK_DATA, /* remaining bytes of a chunk */
	PORT_BODY_CHUNK_END,  /* the CRLF after a chunk's data */
	PORT_BODY_TRAILER,    /* trailer lines, up to the blank one */
	PORT_BODY_BAD,
};

struct port_body {
	enum port_body_state state;
	uint64_t remaining;
	size_t line_len; /* of the size or trailer line so far */
	bool size_seen;  /* a hex digit in this size line */
	bool in_extension;
	int crlf; /* CHUNK_END: bytes of CRLF seen */
};

/* A body of length bytes, or chunked. */
void port_body_start(struct port_body *body, bool chunked, uint64_t length);
/* How many of the len bytes at data belong to the body; stops where it
 * ends (state DONE) or where it is malformed (state BAD). */
size_t port_body_advance(struct port_body *body, const char *data, size_t len);

#endif
