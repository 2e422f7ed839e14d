/* SPDX-License-Identifier: MIT */
/* An HTTP connection's exchange: a request's state reset between
 * requests, its reply (status, type, body, a few headers) set by whichever
 * route answers, and the writing of it (or of an SSE stream of events),
 * which happens only in the writable callback. The service thread only. */
#ifndef LIZARD_BRIDGE_SERVER_REPLY_H
#define LIZARD_BRIDGE_SERVER_REPLY_H

#include "bridge/server/state.h"

#include <stddef.h>

/* Forgets the request: body, reply, queue, what Streamable HTTP kept. */
void bridge_server_http_reset(struct http_conn *c);
/* Sets the reply and asks for a writable callback; body is copied. An
 * answer to a POST whose body is still coming waits for it. */
void bridge_server_http_reply(struct http_conn *c, int status, const char *content_type,
			      const char *body, size_t len);
/* A JSON error reply: {"error": message}. */
void bridge_server_http_error(struct http_conn *c, int status, const char *message);
/* LWS_CALLBACK_HTTP_WRITEABLE: writes the next piece of the reply or the
 * stream; once it is all written the request is complete. lws's return. */
int bridge_server_http_write(struct http_conn *c);

#endif
