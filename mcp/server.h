/* SPDX-License-Identifier: MIT */
/* The MCP protocol engine, independent of transports and of what the tools
 * do: lifecycle (initialize, version negotiation, ping), the tool registry
 * with argument checking, and dispatch of tools/call to a worker pool.
 *
 * A transport creates one mcp_peer per client connection, feeds it framed
 * messages and receives replies through its send function, which may be
 * called from worker threads. The peer (peer.h) and the result a tool
 * builds (call.h) are modules of their own below this one; this header
 * includes them, so it stays the one a transport or a tool includes. */
#ifndef LIZARD_MCP_SERVER_H
#define LIZARD_MCP_SERVER_H

#include "mcp/call.h"
#include "mcp/peer.h"
#include "mcp/types.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct cJSON;
struct mcp_server;
struct mcp_peer;
struct mcp_call;

/* Runs on a worker thread. args has been checked against the schema. */
typedef void (*mcp_tool_fn)(struct mcp_call *call, const struct cJSON *args, void *userdata);

struct mcp_tool {
	const char *name;
	const char *title;
	const char *description;  /* written for a model */
	const char *input_schema; /* JSON Schema text, type object */
	/* JSON Schema text of structuredContent, or NULL for tools that
	 * return no data. A tool with one calls mcp_call_structured. */
	const char *output_schema;
	mcp_tool_fn handler;
	bool read_only; /* changes nothing (annotations.readOnlyHint) */
	/* Runs in its group's lane: one at a time, in arrival order (input to
	 * one desktop). Others run side by side and may overtake. */
	bool ordered;
	/* Bounded, short work that waits on nothing for long (a screenshot,
	 * session management): never held up by long calls (workers.h). */
	bool quick;
};

/* Names the group a call belongs to (for the bridge, its desktop), for its
 * lane and its group's bound on long calls. Returns false for none. */
typedef bool (*mcp_group_fn)(const char *tool, const struct cJSON *args, char *group,
			     size_t group_size, void *userdata);

/* Told about every finished tools/call, for metrics. */
typedef void (*mcp_call_observer)(const char *tool, bool is_error, double seconds, void *userdata);

#define MCP_LATEST_PROTOCOL_VERSION "2025-11-25"

/* Bounds on tools/call requests queued or running: per client (a peer, or
 * the peers sharing a scope) and in all. A call over either is answered at
 * once with a "Server busy" JSON-RPC error; nothing waits for room. */
#define MCP_MAX_CALLS_PER_CLIENT 256
#define MCP_MAX_CALLS 4096

/* Tool calls run on a pool with these bounds (workers.h); each client
 * (a peer, or the peers sharing a scope) is an owner there. */
struct mcp_workers_limits;
struct mcp_server *mcp_server_create(const char *name, const char *version,
				     const char *instructions,
				     const struct mcp_workers_limits *limits);
/* Marks every call queued or running as cancelled, as if each client had
 * sent notifications/cancelled: for shutdown. */
void mcp_server_cancel_all(struct mcp_server *server);
/* Finishes queued calls, then frees. NULL is fine. */
void mcp_server_destroy(struct mcp_server *server);
/* The tool's strings must outlive the server. False when the schema text is
 * not a JSON object or memory runs out. */
bool mcp_server_add_tool(struct mcp_server *server, const struct mcp_tool *tool, void *userdata);
void mcp_server_set_group_function(struct mcp_server *server, mcp_group_fn fn, void *userdata);
void mcp_server_set_observer(struct mcp_server *server, mcp_call_observer fn, void *userdata);
/* Sends notifications/message to every initialized, open peer whose level
 * (logging/setLevel; warning until it sets one) is at or below level.
 * logger may be NULL. Any thread. */
void mcp_server_log(struct mcp_server *server, enum mcp_log_level level, const char *logger,
		    const char *message);
/* Whether version is one this server speaks. */
bool mcp_protocol_version_supported(const char *version);

/* Handles one complete message (not NUL-terminated). */
void mcp_peer_handle(struct mcp_peer *peer, const char *data, size_t len);
/* Stops this peer's calls at their next step, as a cancellation does, but
 * each still answers: with an error that says reason (a static string).
 * For a transport that is closing and will not wait long. */
void mcp_peer_give_up(struct mcp_peer *peer, const char *reason);
/* Replies to an oversize message the transport refused to read. */
void mcp_peer_reject_oversize(struct mcp_peer *peer, size_t limit);

/* The tool a call is for (results are built through call.h). */
const char *mcp_call_tool_name(const struct mcp_call *call);

#endif
