/* SPDX-License-Identifier: MIT */
/* The structs behind the MCP engine, shared by server.c (registry,
 * lifecycle, dispatch), peer.c (a client connection) and call.c (a call's
 * result and reply); types only, not public: callers see the opaque
 * structs of server.h. The function types of the public headers
 * (mcp_group_fn, mcp_call_observer, mcp_send_fn) are spelled out here, as
 * including those headers would close a circle between their modules and
 * the files that include this one. */
#ifndef LIZARD_MCP_STATE_H
#define LIZARD_MCP_STATE_H

#include "mcp/types.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/uio.h>

struct blob;
struct cJSON;
struct registered_tool; /* server.c's */

struct mcp_server {
	char *name, *version, *instructions;
	struct registered_tool *tools;
	size_t tool_count;
	struct cJSON *tool_list; /* the tools/list "tools" array, built as tools come */
	/* An mcp_group_fn. */
	bool (*group_fn)(const char *tool, const struct cJSON *args, char *group, size_t group_size,
			 void *userdata);
	void *group_userdata;
	/* An mcp_call_observer. */
	void (*observer)(const char *tool, bool is_error, double seconds, void *userdata);
	void *observer_userdata;
	struct mcp_workers *workers;
	/* Calls queued or running, for notifications/cancelled and for the
	 * bounds on them. */
	pthread_mutex_t calls_lock;
	struct mcp_call *calls;
	size_t call_count;
	/* Live peers, for notifications/message. */
	pthread_mutex_t peers_lock;
	struct mcp_peer *peers;
};

struct mcp_peer {
	struct mcp_server *server;
	/* An mcp_send_fn. */
	void (*send)(void *context, const struct iovec *parts, int count);
	void *context;
	pthread_mutex_t lock;
	int refs;
	bool closed;
	char *scope;                  /* see mcp_peer_set_scope; NULL: this peer alone */
	int calls_running;            /* this peer's calls not yet finished */
	pthread_cond_t idle;          /* signalled when calls_running drops to 0 */
	bool initialized;             /* initialize answered: log messages may go out */
	bool unlisted;                /* the server went first and forgot it */
	enum mcp_log_level log_level; /* the least severe message it gets */
	struct mcp_peer *next;        /* in the server's list of peers */
};

struct mcp_call {
	struct mcp_peer *peer;
	const struct registered_tool *tool;
	struct cJSON *id;
	struct cJSON *arguments;
	struct cJSON *content;
	bool is_error;
	/* Base64 image data goes out beside the printed reply rather than
	 * through cJSON, which would copy megabytes and scan them for characters
	 * to escape that base64 never has. The content holds a marker in its
	 * place. */
	struct blob *images[MCP_MAX_CALL_IMAGES];
	int image_count;
	struct cJSON *structured;
	struct cJSON *progress_token; /* params._meta.progressToken, or NULL */
	atomic_bool cancelled;
	/* Set with cancelled when the transport gives up: answer with this
	 * error instead of staying silent. */
	const char *_Atomic given_up;
	char *scope;           /* the peer's scope when the call came, or NULL */
	struct mcp_call *next; /* in the server's list of calls */
};

#endif
