/* SPDX-License-Identifier: MIT */
/* An RFB relay between a VNC server and one RFB client (noVNC over a
 * WebSocket), byte streams in, byte streams out, no I/O of its own.
 *
 * The relay does both handshakes itself: with the server as a client
 * (security None, or VNC authentication with the session's password, so
 * the client never learns it), and with the client as a server offering
 * None (the caller has already authorised it). Then the server's bytes
 * pass through untouched, and the client's are parsed message by message:
 * a view-only relay drops input (keys, pointer, clipboard, desktop size,
 * power) so view-only holds for any RFB client, and a message it cannot
 * check ends the relay rather than pass unchecked. */
#ifndef LIZARD_VNC_RELAY_H
#define LIZARD_VNC_RELAY_H

#include "vnc/png.h" /* struct vnc_bytes */

#include "util/error.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vnc_relay;

/* password may be NULL (then the server must offer None). */
struct vnc_relay *vnc_relay_create(bool view_only, const char *password);
void vnc_relay_destroy(struct vnc_relay *relay);

/* Feed bytes as they arrive. False, with a message, when the peer broke
 * the protocol or the server refused us: close both sides. */
bool vnc_relay_from_server(struct vnc_relay *relay, const uint8_t *data, size_t len,
			   struct error *err);
bool vnc_relay_from_client(struct vnc_relay *relay, const uint8_t *data, size_t len,
			   struct error *err);

/* Bytes waiting to go out; after writing n of them, call _sent. */
struct vnc_bytes *vnc_relay_to_server(struct vnc_relay *relay);
struct vnc_bytes *vnc_relay_to_client(struct vnc_relay *relay);
void vnc_relay_sent(struct vnc_bytes *bytes, size_t n);

/* Client messages dropped so far (view only). */
unsigned long vnc_relay_dropped(const struct vnc_relay *relay);

#endif
