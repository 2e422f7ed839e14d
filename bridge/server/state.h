/* Shared by the server files. Everything here runs on the service thread
 * except bridge_server_post(), which any thread may call. */
#ifndef LIZARD_BRIDGE_SERVER_INTERNAL_H
#define LIZARD_BRIDGE_SERVER_INTERNAL_H

#include "bridge/server/forwarded.h"
#include "bridge/server/server.h"

#include <libwebsockets.h>
#include <stdbool.h>
#include <stdint.h>

struct bridge_session;
struct bridge_viewer;
struct bridge_viewer_message;
struct mcp_peer;
struct cJSON;

/* A message waiting to be written to a connection. */
struct outgoing {
	uint64_t connection;
	char *text; /* LWS_PRE bytes of headroom, then len bytes */
	size_t len, sent;
	struct outgoing *next;
};

struct http_reply {
	int status;
	const char *content_type;
	char session_header[48]; /* Mcp-Session-Id to send, or "" */
	const char *extra_header_name;  /* e.g. "allow:" or "www-authenticate:" */
	const char *extra_header_value;
	char *body; /* LWS_PRE headroom, like outgoing */
	size_t len, sent;
	bool headers_sent;
};

/* Per connection, HTTP or WebSocket (lws per-session data). */
struct connection {
	uint64_t id;
	struct lws *wsi;
	struct bridge_server *server;
	bool websocket;
	struct mcp_peer *peer;
	struct peer_link *link;

	/* HTTP request in progress */
	char *body;
	size_t body_len;
	bool body_too_large;
	bool body_pending; /* a POST whose body has not all arrived yet */
	bool close_after_reply;
	bool sse;         /* the client accepts only text/event-stream */
	bool accepts_sse; /* text/event-stream among what it accepts */
	struct cJSON *progress_token; /* the request's _meta.progressToken */
	bool streaming;   /* answering as an SSE stream (chunked) */
	bool stream_done; /* the final event is queued */
	char session_id[40];
	bool initializing;
	bool awaiting_reply;
	struct http_reply reply;

	/* Viewer WebSocket */
	bool viewer_socket;
	struct bridge_session *viewer_session;
	struct bridge_viewer *viewer;
	struct bridge_viewer_message *sending;
	size_t sending_offset;
	/* Written, but permessage-deflate may still be reading it: libwebsockets
	 * drains the compressor from the caller's buffer before the next
	 * writeable callback, so it is released there. */
	struct bridge_viewer_message *written;
	char *notice;    /* a JSON text frame to send, then maybe close */
	bool close_after_notice;
	bool leaving;    /* revoked or ended: told why, closed within 1 s */

	/* noVNC relay WebSocket (server_rfb.c) */
	struct rfb_link *rfb;

	/* WebSocket; the queue also holds an SSE stream's events */
	char *message;
	size_t message_len;
	struct outgoing *queue_head, *queue_tail;
	size_t queued_bytes; /* bounded: BRIDGE_SERVER_MAX_QUEUED_BYTES */
	bool kicked;         /* being closed; nothing more is queued */

	struct connection *next_live;
};

/* What a peer's send function needs to find its connection again. */
struct peer_link {
	struct bridge_server *server;
	uint64_t connection;
};

struct accepted;

struct bridge_server {
	const struct bridge_server_options *options;
	struct lws_context *lws;
	uint64_t next_connection_id;
	struct connection *live; /* service thread only */
	pthread_mutex_t outbox_lock;
	struct outgoing *outbox_head, *outbox_tail;
	bool stopping;

	bool unix_socket; /* no Host check: no page can name one */

	/* Connection caps (server_limits.c), service thread only. */
	struct accepted *accepted;
	int accepted_count, max_connections, max_peer_connections;
	bool accept_pending;
	struct bridge_address pending_peer;
	int listen_fd, reserve_fd;
	int refused;
	long refusal_logged_at;
};

/* Queues a message (its parts copied, joined) for a connection and wakes
 * the loop. Any thread. */
void bridge_server_post(struct bridge_server *server, uint64_t connection,
			const struct iovec *parts, int count);
/* An mcp_send_fn over bridge_server_post; context is a struct peer_link. */
void bridge_server_send_to_peer(void *context, const struct iovec *parts, int count);

/* Appends o to c's write queue and asks for a writable callback; over
 * BRIDGE_SERVER_MAX_QUEUED_BYTES o is dropped and c killed. Takes o. */
void bridge_server_enqueue(struct connection *c, struct outgoing *o);
void bridge_server_free_queue(struct connection *c);

void bridge_server_track(struct bridge_server *server, struct connection *c, struct lws *wsi,
			 bool websocket);
void bridge_server_untrack(struct bridge_server *server, struct connection *c);

enum ws_collect { WS_MESSAGE_PARTIAL, WS_MESSAGE_COMPLETE, WS_MESSAGE_TOO_LARGE };
/* Appends a received fragment to c->message; says whether the message is
 * whole, or over limit (then it closes with 1009). The caller frees
 * c->message after handling a complete one (bridge_server_message_done). */
enum ws_collect bridge_server_collect(struct connection *c, const void *in, size_t len,
				      size_t limit);
void bridge_server_message_done(struct connection *c);

/* Authorization: the API key from the Authorization header, or (when
 * allow_query) from ?access_token=. Constant time, nothing logged. */
bool bridge_server_authorized(struct bridge_server *server, struct lws *wsi, bool allow_query);
/* False when an Origin header names another site than this server. */
bool bridge_server_origin_allowed(struct lws *wsi);

/* False when the Host header names something else than this server: the
 * DNS rebinding guard (/mcp, /viewer, /view, /metrics). */
bool bridge_server_host_allowed(struct bridge_server *server, struct lws *wsi);
/* Closes a connection from outside its own callbacks, at once. */
void bridge_server_kill(struct connection *c, const char *why);

/* server_limits.c */
bool bridge_server_limits_init(struct bridge_server *server);
void bridge_server_limits_finish(struct bridge_server *server);
void bridge_server_find_listener(struct bridge_server *server, int port, const char *path);
/* LWS_CALLBACK_FILTER_NETWORK_CONNECTION: nonzero refuses the connection. */
int bridge_server_filter_accept(struct bridge_server *server,
				const struct lws_filter_network_conn_args *filter);
void bridge_server_wsi_created(struct bridge_server *server, struct lws *wsi);
void bridge_server_wsi_destroyed(struct bridge_server *server, struct lws *wsi);
/* A request's head has been read: a connection from a trusted proxy now
 * counts for the client its X-Forwarded-For names, until the request is
 * done. 0 lets it go on; otherwise the HTTP status to refuse it with
 * (400: the header names no client; 429: that client is at its cap), and
 * *why says why for the reply body. */
int bridge_server_attribute_request(struct bridge_server *server, struct lws *wsi,
				    const char **why);
/* The request is answered: a trusted proxy's connection, kept alive for its
 * next request, counts for no client meanwhile. */
void bridge_server_request_done(struct bridge_server *server, struct lws *wsi);
/* The time one HTTP request may take from now (LWS_CALLBACK_TIMER). */
void bridge_server_arm_request_timer(struct bridge_server *server, struct lws *wsi);
/* Any thread's log hook: lws could not accept (out of descriptors). */
void bridge_server_note_accept_failure(void);
/* Service thread, after each loop turn: sheds the backlog after a failed
 * accept so the loop does not spin. */
void bridge_server_shed_backlog(struct bridge_server *server);

int bridge_server_viewer_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user,
				  void *in, size_t len);
/* Serves the viewer page for GET /view/<session>. */
void bridge_server_viewer_page(struct connection *c);
void bridge_server_http_reply(struct connection *c, int status, const char *content_type,
			      const char *body, size_t len);

/* noVNC: the page for GET /novnc/<session>, its files from Debian's novnc
 * package for GET /novnc-files/<path>, the RFB WebSocket on /rfb/<session>
 * and the relay's own raw connection to the VNC server. */
void bridge_server_novnc_page(struct connection *c);
void bridge_server_novnc_file(struct connection *c, const char *path);
int bridge_server_rfb_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user,
			       void *in, size_t len);
int bridge_server_vnc_raw_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user,
				   void *in, size_t len);

int bridge_server_http_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user,
				void *in, size_t len);
int bridge_server_ws_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user,
			      void *in, size_t len);
/* Hands a reply to the HTTP connection waiting for it. */
void bridge_server_http_deliver(struct connection *c, struct outgoing *o);

#endif
