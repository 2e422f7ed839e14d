/* SPDX-License-Identifier: MIT */
/* Where `call` reaches the daemon: an HTTP address or a UNIX socket, and a
 * connection there. */
#ifndef LIZARD_BRIDGE_CLIENT_ENDPOINT_H
#define LIZARD_BRIDGE_CLIENT_ENDPOINT_H

#include "util/error.h"
#include <stdbool.h>
#include <stddef.h>

struct endpoint {
	bool unix_socket;
	char host[256];
	char port[8];
	char path[256]; /* socket path, or the HTTP path */
};

/* A connected socket (receive timeout set), or -1 with a message. */
int client_connect(const struct endpoint *e, struct error *err);

/* Parses http://HOST[:PORT][/PATH] or unix:/path into e (path /mcp unless
 * the URL names one); false when it is neither. */
bool client_endpoint_parse(const char *url, struct endpoint *e);

#endif
