/* SPDX-License-Identifier: MIT */
/* Where a VNC server is: parsed from vnc://[:PASSWORD@]HOST[:PORT] or
 * unix:///path/to/socket. */
#ifndef LIZARD_VNC_TARGET_H
#define LIZARD_VNC_TARGET_H

#include "util/error.h"
#include <stdbool.h>
#include <stddef.h>

struct vnc_target {
	char *host; /* host name, IPv4/IPv6 literal, or socket path */
	int port;   /* TCP port; 0 for UNIX sockets */
	bool is_unix;
	char *password; /* NULL when none was given */
};

/* Fills target from url. On failure returns false and writes a message that
 * names the problem and the accepted forms into err. */
bool vnc_target_parse(const char *url, struct vnc_target *target, struct error *err);
/* Takes a copy of password, replacing any from the URL. */
bool vnc_target_set_password(struct vnc_target *target, const char *password);
/* host:port or the socket path, for messages. Never includes the password. */
void vnc_target_describe(const struct vnc_target *target, char *out, size_t out_size);
void vnc_target_finish(struct vnc_target *target);

#endif
