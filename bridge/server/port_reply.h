/* SPDX-License-Identifier: MIT */
/* The port proxy's own answers, for requests that never reach the
 * sandbox: what is wrong, as a small HTML page for browsers and JSON for
 * the rest, and the redirect that turns a token in the URL into a cookie.
 * Pure code. */
#ifndef LIZARD_BRIDGE_PORT_REPLY_H
#define LIZARD_BRIDGE_PORT_REPLY_H

#include <stdbool.h>
#include <stddef.h>

/* The largest answer written. */
#define PORT_REPLY_MAX (16384 + 1024) /* a redirect carries the target back */

/* status with message; closes the connection after it. Returns the length
 * written to out (PORT_REPLY_MAX bytes). */
size_t port_reply_error(char *out, int status, const char *message, bool html);
/* 303 to location (the same URL without the token) that sets the cookie:
 * HttpOnly, no Domain (this host name only), SameSite=Lax. Kept alive. */
size_t port_reply_redirect(char *out, const char *location, const char *token, size_t token_len);

#endif
