/* SPDX-License-Identifier: MIT */
/* The server's state and what every connection has, shared by the files of
 * bridge/server/; types only. Each protocol keeps its own connection
 * struct, which starts with a struct server_conn: an HTTP connection
 * (struct http_conn, here because the routes, the replies and Streamable
 * HTTP all write it), an MCP WebSocket (mcp_ws.c), a viewer (viewer_ws.c)
 * and a noVNC relay (novnc.c). Everything here belongs to the service
 * thread but the outbox, which any thread may append to under its lock. */
#ifndef LIZARD_BRIDGE_SERVER_STATE_H
#define LIZARD_BRIDGE_SERVER_STATE_H

#include "bridge/server/forwarded.h"

#include <libwebsockets.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bridge_server_options;
struct cJSON;
struct mcp_peer;

/* A message waiting to be written to a connection. */
struct outgoing {
	uint64_t connection;
	char *text; /* LWS_PRE bytes of headroom, then len bytes */
	size_t len, sent;
	struct outgoing *next;
};

enum server_conn_kind {
	SERVER_CONN_HTTP,
	SERVER_CONN_MCP_WS,
	SERVER_CONN_VIEWER,
	SERVER_CONN_NOVNC
};

/* What every connection has (the first member of each protocol's own). */
struct server_conn {
	uint64_t id; /* 0 when not tracked */
	struct lws *wsi;
	struct bridge_server *server; /* NULL once closed */
	enum server_conn_kind kind;
	bool kicked; /* being closed; nothing more is queued */
	/* Writes waiting: a WebSocket's replies, an SSE stream's events;
	 * bounded by BRIDGE_SERVER_MAX_QUEUED_BYTES. */
	struct outgoing *queue_head, *queue_tail;
	size_t queued_bytes;
	/* A WebSocket message being put together from its fragments. */
	char *message;
	size_t message_len;
	/* How a reply from the outbox reaches this connection (conn.h). */
	void (*deliver)(struct server_conn *c, struct outgoing *o);
	struct server_conn *next_live;
};

/* What a peer's send function needs to find its connection again. */
struct peer_link {
	struct bridge_server *server;
	uint64_t connection;
};

struct http_reply {
	int status;
	const char *content_type;
	char session_header[48];       /* Mcp-Session-Id to send, or "" */
	const char *extra_header_name; /* e.g. "allow:" or "www-authenticate:" */
	const char *extra_header_value;
	char *body; /* LWS_PRE headroom, like outgoing */
	size_t len, sent;
	bool headers_sent;
};

/* What a request on /mcp needs beyond any HTTP request (mcp_http.c). */
struct mcp_http_request {
	bool sse;                     /* the client accepts only text/event-stream */
	bool accepts_sse;             /* text/event-stream among what it accepts */
	struct cJSON *progress_token; /* the request's _meta.progressToken */
	bool streaming;               /* answering as an SSE stream (chunked) */
	bool stream_done;             /* the final event is queued */
	char session_id[40];
	bool initializing;
	bool awaiting_reply;
};

/* An HTTP connection: one request at a time (keep-alive), its body and
 * its reply; its MCP peer lives as long as the connection. */
struct http_conn {
	struct server_conn base;
	struct mcp_peer *peer;
	struct peer_link *link;
	char *body;
	size_t body_len;
	bool body_too_large;
	bool body_pending; /* a POST whose body has not all arrived yet */
	bool close_after_reply;
	struct mcp_http_request mcp;
	struct http_reply reply;
};

struct accepted;
struct port_proxy;

struct bridge_server {
	const struct bridge_server_options *options;
	struct lws_context *lws;
	uint64_t next_connection_id;
	struct server_conn *live; /* service thread only */
	pthread_mutex_t outbox_lock;
	struct outgoing *outbox_head, *outbox_tail;
	bool stopping;

	bool unix_socket; /* no Host check: no page can name one */

	/* Connection caps (limits.c), service thread only. */
	struct accepted *accepted;
	int accepted_count, max_connections, max_peer_connections;
	bool accept_pending;
	struct bridge_address pending_peer;
	int listen_fd, reserve_fd;
	int refused;
	long refusal_logged_at;

	/* Exposed ports (port_proxy.h); NULL on a UNIX socket. */
	struct port_proxy *ports;
};

#endif
