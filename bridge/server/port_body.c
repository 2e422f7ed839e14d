/* SPDX-License-Identifier: MIT */
/* Request body framing for exposed ports (see port_body.h). */
#include "bridge/server/port_body.h"

/* A chunk-size line or trailer line longer than this is refused. */
#define LINE_MAX_BYTES 4096

void port_body_start(struct port_body *body, bool chunked, uint64_t length)
{
	*body = (struct port_body){ .state = chunked  ? PORT_BODY_CHUNK_SIZE
					     : length ? PORT_BODY_LENGTH
						      : PORT_BODY_DONE,
				    .remaining = length };
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* One byte of a chunk-size line: digits, an optional ;extension, CRLF. */
static void size_byte(struct port_body *b, char c)
{
	if (++b->line_len > LINE_MAX_BYTES) {
		b->state = PORT_BODY_BAD;
		return;
	}
	if (c == '\n') {
		if (!b->size_seen) {
			b->state = PORT_BODY_BAD;
			return;
		}
		b->line_len = 0;
		b->size_seen = b->in_extension = false;
		b->state = b->remaining ? PORT_BODY_CHUNK_DATA : PORT_BODY_TRAILER;
		return;
	}
	if (b->in_extension || c == '\r')
		return;
	if (c == ';') {
		b->in_extension = true;
		return;
	}
	int v = hex_value(c);
	if (v < 0 || b->remaining >> 56) {
		b->state = PORT_BODY_BAD; /* not hex, or over 2^60 bytes */
		return;
	}
	b->remaining = b->remaining * 16 + (uint64_t)v;
	b->size_seen = true;
}

/* A byte of the trailer: lines until an empty one. */
static void trailer_byte(struct port_body *b, char c)
{
	if (c == '\n') {
		bool blank = b->line_len == 0;
		b->line_len = 0;
		if (blank)
			b->state = PORT_BODY_DONE;
		return;
	}
	if (c != '\r' && ++b->line_len > LINE_MAX_BYTES)
		b->state = PORT_BODY_BAD;
}

size_t port_body_advance(struct port_body *b, const char *data, size_t len)
{
	size_t used = 0;
	while (used < len && b->state != PORT_BODY_DONE && b->state != PORT_BODY_BAD) {
		if (b->state == PORT_BODY_LENGTH || b->state == PORT_BODY_CHUNK_DATA) {
			size_t take = len - used;
			if ((uint64_t)take > b->remaining)
				take = (size_t)b->remaining;
			used += take;
			b->remaining -= take;
			if (b->remaining == 0)
				b->state = b->state == PORT_BODY_LENGTH ? PORT_BODY_DONE
									: PORT_BODY_CHUNK_END;
			continue;
		}
		char c = data[used++];
		if (b->state == PORT_BODY_CHUNK_SIZE) {
			size_byte(b, c);
		} else if (b->state == PORT_BODY_CHUNK_END) {
			if (c != (b->crlf == 0 ? '\r' : '\n'))
				b->state = PORT_BODY_BAD;
			else if (++b->crlf == 2)
				*b = (struct port_body){ .state = PORT_BODY_CHUNK_SIZE };
		} else {
			trailer_byte(b, c);
		}
	}
	return used;
}
