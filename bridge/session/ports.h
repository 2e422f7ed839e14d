/* SPDX-License-Identifier: MIT */
/* A session's exposed ports (expose_port): which ports of its sandbox may be
 * reached through the daemon's port proxy, and the session's access token
 * that every request to them must carry. The token is made with the
 * session and dies with it; compared in constant time, never logged. The
 * proxy (bridge/server/port_*.c) learns through a watch that a port was
 * taken back or a session ended, and closes what went through them. */
#ifndef LIZARD_BRIDGE_SESSION_PORTS_H
#define LIZARD_BRIDGE_SESSION_PORTS_H

#include "util/error.h"

#include <stdbool.h>
#include <stddef.h>

struct bridge_session;
struct cJSON;

#define BRIDGE_SESSION_MAX_PORTS 32
#define BRIDGE_SESSION_TOKEN_LEN 43 /* base64url of 32 random bytes */

/* Makes the session's access token; false when the system has no
 * randomness to give. Called once, when the session is made. */
bool bridge_session_ports_init(struct bridge_session *session, struct error *err);

/* Adds port (1..65535) to the exposed ones; exposing one twice is fine.
 * False with a message for attached sessions (no sandbox to reach) and
 * beyond BRIDGE_SESSION_MAX_PORTS. */
bool bridge_session_expose_port(struct bridge_session *session, int port, struct error *err);
/* Takes it back (false with a message when it was not exposed); open
 * connections to it close. */
bool bridge_session_unexpose_port(struct bridge_session *session, int port, struct error *err);
bool bridge_session_port_exposed(struct bridge_session *session, int port);
/* Copies the token (size > BRIDGE_SESSION_TOKEN_LEN). */
void bridge_session_access_token(struct bridge_session *session, char *out, size_t size);
/* Whether token (len bytes, not NUL-terminated) is the session's, in
 * constant time for tokens of the right length. */
bool bridge_session_token_matches(struct bridge_session *session, const char *token, size_t len);
/* session_info's access_token and exposed_ports. */
void bridge_session_describe_ports(struct bridge_session *session, struct cJSON *info);

/* Dials port inside the session's sandbox (sandbox/port.h): *pending
 * becomes readable when the answer is there, then dial_finish gives the
 * connected socket. Fails with a message a person can act on: the session
 * has no sandbox, is not ready, or is paused (err->code EAGAIN), or its
 * init has no room for the request now (ENOBUFS: try again shortly). */
bool bridge_session_dial_port(struct bridge_session *session, int port, int *pending,
			      struct error *err);
/* -1 with err (err->code ECONNREFUSED: nothing listens on the port). */
int bridge_session_dial_finish(int pending, int port, struct error *err);

/* One watcher for the process (the port proxy), told on any thread, with
 * no lock held, when a port is taken back or a session ends. NULL stops
 * it; returns once no call of the previous one runs. */
void bridge_session_set_port_watch(void (*fn)(void *context), void *context);
/* For session.c: tells the watcher. */
void bridge_session_ports_changed(void);

#endif
