/* The MCP protocol engine, independent of transports and of what the tools
 * do: lifecycle (initialize, version negotiation, ping), the tool registry
 * with argument checking, and dispatch of tools/call to a worker pool.
 *
 * A transport creates one mcp_peer per client connection, feeds it framed
 * messages and receives replies through its send function, which may be
 * called from worker threads. */
#ifndef LIZARD_MCP_SERVER_H
#define LIZARD_MCP_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct blob;
struct cJSON;
struct mcp_server;
struct mcp_peer;
struct mcp_call;

/* Runs on a worker thread. args has been checked against the schema. */
typedef void (*mcp_tool_fn)(struct mcp_call *call, const struct cJSON *args, void *userdata);

struct mcp_tool {
	const char *name;
	const char *title;
	const char *description;   /* written for a model */
	const char *input_schema;  /* JSON Schema text, type object */
	/* JSON Schema text of structuredContent, or NULL for tools that
	 * return no data. A tool with one calls mcp_call_structured. */
	const char *output_schema;
	mcp_tool_fn handler;
	bool read_only;            /* changes nothing (annotations.readOnlyHint) */
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

/* Sends one message given as parts to write back to back: a reply with
 * images comes in pieces, so image text is never copied to build it. */
typedef void (*mcp_send_fn)(void *context, const struct iovec *parts, int count);
#define MCP_MAX_CALL_IMAGES 4
#define MCP_MAX_SEND_PARTS (2 * MCP_MAX_CALL_IMAGES + 1)

/* Told about every finished tools/call, for metrics. */
typedef void (*mcp_call_observer)(const char *tool, bool is_error, double seconds,
				  void *userdata);

#define MCP_LATEST_PROTOCOL_VERSION "2025-11-25"

/* Bounds on tools/call requests queued or running: per client (a peer, or
 * the peers sharing a scope) and in all. A call over either is answered at
 * once with a "Server busy" JSON-RPC error; nothing waits for room. */
#define MCP_MAX_CALLS_PER_CLIENT 256
#define MCP_MAX_CALLS 4096

/* MCP logging levels (RFC 5424 severities), least severe first. */
enum mcp_log_level {
	MCP_LOG_DEBUG,
	MCP_LOG_INFO,
	MCP_LOG_NOTICE,
	MCP_LOG_WARNING,
	MCP_LOG_ERROR,
	MCP_LOG_CRITICAL,
	MCP_LOG_ALERT,
	MCP_LOG_EMERGENCY,
};

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

struct mcp_peer *mcp_peer_create(struct mcp_server *server, mcp_send_fn send, void *context);
/* Handles one complete message (not NUL-terminated). */
void mcp_peer_handle(struct mcp_peer *peer, const char *data, size_t len);
/* Waits up to timeout_ms for every tools/call this peer started to finish
 * (and its reply to be sent). True when none is left. */
bool mcp_peer_wait_idle(struct mcp_peer *peer, int timeout_ms);
/* Stops this peer's calls at their next step, as a cancellation does, but
 * each still answers: with an error that says reason (a static string).
 * For a transport that is closing and will not wait long. */
void mcp_peer_give_up(struct mcp_peer *peer, const char *reason);
/* Replies to an oversize message the transport refused to read. */
void mcp_peer_reject_oversize(struct mcp_peer *peer, size_t limit);
/* After this no reply is sent; the peer is freed once its calls finish. */
void mcp_peer_close(struct mcp_peer *peer);
/* Names the client a message comes from when one client speaks through
 * several peers (Streamable HTTP: one POST, one connection, one peer), so
 * that notifications/cancelled reaches calls made in another request. NULL
 * (the default) scopes cancellation to this peer. The string is copied. */
void mcp_peer_set_scope(struct mcp_peer *peer, const char *scope);

/* Result building inside a tool handler. */
__attribute__((format(printf, 2, 3)))
void mcp_call_text(struct mcp_call *call, const char *fmt, ...);
bool mcp_call_image(struct mcp_call *call, const uint8_t *data, size_t len, const char *mime_type);
/* Adds an image already encoded as base64 (standard alphabet), keeping a
 * reference to the blob until the reply is sent. */
bool mcp_call_image_blob(struct mcp_call *call, struct blob *base64, const char *mime_type);
/* Marks the result isError and adds the message: for bad arguments and
 * failed actions, phrased so a model can correct itself. */
__attribute__((format(printf, 2, 3)))
void mcp_call_fail(struct mcp_call *call, const char *fmt, ...);
bool mcp_call_failed(const struct mcp_call *call);
const char *mcp_call_tool_name(const struct mcp_call *call);

/* The tool's data, checked by clients against its output_schema: sent as
 * structuredContent and, for clients that show text, as JSON text. Takes
 * ownership of object. An error result (mcp_call_fail) drops it. */
void mcp_call_structured(struct mcp_call *call, struct cJSON *object);

/* Whether the request carried a progressToken. */
bool mcp_call_wants_progress(const struct mcp_call *call);
/* Sends notifications/progress for this call when it carried a
 * progressToken; progress must grow from one call to the next (the caller
 * picks its unit: bytes, steps), total < 0 means unknown, message may be
 * NULL. Any thread; a no-op without a token. */
void mcp_call_progress(struct mcp_call *call, double progress, double total,
		       const char *message);

/* True once the client cancelled this request (notifications/cancelled).
 * Long tools look at it between steps and stop early; a cancelled call
 * sends no reply. */
bool mcp_call_cancelled(const struct mcp_call *call);

#endif
