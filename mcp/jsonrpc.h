/* SPDX-License-Identifier: MIT */
/* JSON-RPC 2.0 framing: classifying incoming messages and building replies. */
#ifndef LIZARD_MCP_JSONRPC_H
#define LIZARD_MCP_JSONRPC_H

#include <stdbool.h>
#include <stddef.h>

struct cJSON;

enum {
	JSONRPC_PARSE_ERROR = -32700,
	JSONRPC_INVALID_REQUEST = -32600,
	JSONRPC_METHOD_NOT_FOUND = -32601,
	JSONRPC_INVALID_PARAMS = -32602,
	JSONRPC_INTERNAL_ERROR = -32603,
	JSONRPC_SERVER_BUSY = -32000, /* a bound on queued calls is reached */
};

enum jsonrpc_kind {
	JSONRPC_REQUEST,      /* method + id: needs a reply */
	JSONRPC_NOTIFICATION, /* method, no id */
	JSONRPC_RESPONSE,     /* result or error: a reply to us */
	JSONRPC_INVALID,      /* reply with the error in *error_code */
};

struct jsonrpc_message {
	enum jsonrpc_kind kind;
	struct cJSON *root;         /* owned */
	const struct cJSON *id;     /* inside root, or NULL */
	const char *method;         /* inside root, or NULL */
	const struct cJSON *params; /* inside root, or NULL */
	int error_code;
	char error_message[160];
};

/* Parses one framed message (not NUL-terminated). Always fills msg; the
 * caller calls jsonrpc_message_finish. */
void jsonrpc_parse(const char *data, size_t len, struct jsonrpc_message *msg);
void jsonrpc_message_finish(struct jsonrpc_message *msg);

/* Whether item can be a request id: a string or a number. Numbers of ids,
 * requestId and progressToken are parsed as raw items holding their exact
 * text, so they echo unchanged; compare ids with cJSON_Compare. */
bool jsonrpc_is_id(const struct cJSON *item);

/* Printed messages (heap strings, caller frees); id may be NULL for null.
 * They take ownership of result and params. Strings that are not valid
 * UTF-8 are repaired (U+FFFD) on the way out. */
char *jsonrpc_result(const struct cJSON *id, struct cJSON *result);
char *jsonrpc_error(const struct cJSON *id, int code, const char *message);
char *jsonrpc_notification(const char *method, struct cJSON *params);
/* Replaces every string in the tree that is not valid UTF-8 by a repaired
 * copy (jsonrpc_result does it itself). */
void jsonrpc_repair_strings(struct cJSON *item);

#endif
