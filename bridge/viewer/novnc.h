/* SPDX-License-Identifier: MIT */
/* A noVNC viewer's RFB relay, in bytes (the network is the caller's): both
 * handshakes and the view-only filter of vnc/relay.c, with where the
 * session's VNC server is, copied from its target. */
#ifndef LIZARD_BRIDGE_VIEWER_NOVNC_H
#define LIZARD_BRIDGE_VIEWER_NOVNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

struct bridge_novnc;
struct vnc_target;

/* NULL when out of memory. The target is copied. */
struct bridge_novnc *bridge_novnc_create(const struct vnc_target *target, bool view_only);
void bridge_novnc_destroy(struct bridge_novnc *relay);

/* Where to connect: a UNIX socket's path, or a host and port. */
bool bridge_novnc_is_unix(const struct bridge_novnc *relay);
const char *bridge_novnc_host(const struct bridge_novnc *relay);
int bridge_novnc_port(const struct bridge_novnc *relay);

/* Bytes as they arrive; false, with a message, when a side broke the
 * protocol or the server refused us: close both sides. */
bool bridge_novnc_from_client(struct bridge_novnc *relay, const uint8_t *data, size_t len,
			      struct error *err);
bool bridge_novnc_from_server(struct bridge_novnc *relay, const uint8_t *data, size_t len,
			      struct error *err);

/* What waits to be written to each side; after writing n of it, _sent. */
const uint8_t *bridge_novnc_to_client(struct bridge_novnc *relay, size_t *len);
const uint8_t *bridge_novnc_to_server(struct bridge_novnc *relay, size_t *len);
void bridge_novnc_client_sent(struct bridge_novnc *relay, size_t n);
void bridge_novnc_server_sent(struct bridge_novnc *relay, size_t n);

#endif
