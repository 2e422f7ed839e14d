/* Shared by the call client's files; not part of any public surface. */
#ifndef LIZARD_BRIDGE_CLIENT_INTERNAL_H
#define LIZARD_BRIDGE_CLIENT_INTERNAL_H

#include "util/error.h"
#include <stdbool.h>
#include <stddef.h>

struct cJSON;

struct endpoint {
	bool unix_socket;
	char host[256];
	char port[8];
	char path[256]; /* socket path, or the HTTP path */
};

/* A connected socket (receive timeout set), or -1 with a message. */
int client_connect(const struct endpoint *e, struct error *err);

/* `call exec`: over WebSocket, so output chunks (progress notifications)
 * print as they arrive; returns the command's exit code, or 1 for a tool
 * error and 2 for transport failures. Takes ownership of args. */
int client_exec(const struct endpoint *e, const char *url, const char *key, struct cJSON *args);

#endif
