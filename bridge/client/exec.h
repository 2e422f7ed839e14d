/* SPDX-License-Identifier: MIT */
/* `call exec`: a command's output printed as it arrives. */
#ifndef LIZARD_BRIDGE_CLIENT_EXEC_H
#define LIZARD_BRIDGE_CLIENT_EXEC_H

struct cJSON;
struct endpoint;

/* `call exec`: over WebSocket, so output chunks (progress notifications)
 * print as they arrive; returns the command's exit code, or 1 for a tool
 * error and 2 for transport failures. Takes ownership of args. */
int client_exec(const struct endpoint *e, const char *url, const char *key, struct cJSON *args);

#endif
