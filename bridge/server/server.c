#include "bridge/server/state.h"

#include "bridge/context.h"
#include "bridge/viewer/hub.h"
#include "mcp/server.h"
#include "util/log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

void bridge_server_track(struct bridge_server *server, struct connection *c, struct lws *wsi,
			 bool websocket)
{
	c->id = ++server->next_connection_id;
	c->wsi = wsi;
	c->server = server;
	c->websocket = websocket;
	c->next_live = server->live;
	server->live = c;
}

void bridge_server_untrack(struct bridge_server *server, struct connection *c)
{
	for (struct connection **p = &server->live; *p; p = &(*p)->next_live) {
		if (*p == c) {
			*p = c->next_live;
			break;
		}
	}
	c->id = 0;
}

static struct connection *find_connection(struct bridge_server *server, uint64_t id)
{
	for (struct connection *c = server->live; c; c = c->next_live)
		if (c->id == id)
			return c;
	return NULL;
}

void bridge_server_post(struct bridge_server *server, uint64_t connection,
			const struct iovec *parts, int count)
{
	size_t len = 0;
	for (int i = 0; i < count; i++)
		len += parts[i].iov_len;
	struct outgoing *o = calloc(1, sizeof(*o));
	char *copy = malloc(LWS_PRE + len + 1);
	if (!o || !copy) {
		free(o);
		free(copy);
		log_error("out of memory queueing a reply");
		return;
	}
	char *p = copy + LWS_PRE;
	for (int i = 0; i < count; i++) {
		memcpy(p, parts[i].iov_base, parts[i].iov_len);
		p += parts[i].iov_len;
	}
	*p = '\0';
	o->connection = connection;
	o->text = copy;
	o->len = len;
	pthread_mutex_lock(&server->outbox_lock);
	if (server->outbox_tail)
		server->outbox_tail->next = o;
	else
		server->outbox_head = o;
	server->outbox_tail = o;
	pthread_mutex_unlock(&server->outbox_lock);
	lws_cancel_service(server->lws);
}

void bridge_server_send_to_peer(void *context, const struct iovec *parts, int count)
{
	struct peer_link *link = context;
	bridge_server_post(link->server, link->connection, parts, count);
}

static void free_outgoing(struct outgoing *o)
{
	free(o->text);
	free(o);
}

void bridge_server_enqueue(struct connection *c, struct outgoing *o)
{
	if (c->queued_bytes + o->len > BRIDGE_SERVER_MAX_QUEUED_BYTES) {
		/* It does not read: it goes, the others are not held up. */
		free_outgoing(o);
		bridge_server_kill(c, "more than 64 MiB of replies queued: the client does not "
				      "read them");
		return;
	}
	o->next = NULL;
	if (c->queue_tail)
		c->queue_tail->next = o;
	else
		c->queue_head = o;
	c->queue_tail = o;
	c->queued_bytes += o->len;
	lws_callback_on_writable(c->wsi);
}

void bridge_server_free_queue(struct connection *c)
{
	while (c->queue_head) {
		struct outgoing *next = c->queue_head->next;
		free_outgoing(c->queue_head);
		c->queue_head = next;
	}
	c->queue_tail = NULL;
	c->queued_bytes = 0;
}

/* Service thread: hands queued replies to their connections; replies for
 * connections that are gone are dropped. */
static void drain_outbox(struct bridge_server *server)
{
	pthread_mutex_lock(&server->outbox_lock);
	struct outgoing *o = server->outbox_head;
	server->outbox_head = server->outbox_tail = NULL;
	pthread_mutex_unlock(&server->outbox_lock);
	while (o) {
		struct outgoing *next = o->next;
		o->next = NULL;
		struct connection *c = find_connection(server, o->connection);
		if (!c || c->kicked) {
			free_outgoing(o);
		} else if (c->websocket) {
			bridge_server_enqueue(c, o);
		} else {
			bridge_server_http_deliver(c, o);
		}
		o = next;
	}
}

enum ws_collect bridge_server_collect(struct connection *c, const void *in, size_t len,
				      size_t limit)
{
	if (c->message_len + len > limit) {
		static const char reason[] = "message too large";
		lws_close_reason(c->wsi, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, (unsigned char *)reason,
				 sizeof(reason) - 1);
		log_info("closing a WebSocket: message over %zu bytes", limit);
		return WS_MESSAGE_TOO_LARGE;
	}
	char *grown = realloc(c->message, c->message_len + len + 1);
	if (!grown)
		return WS_MESSAGE_TOO_LARGE;
	memcpy(grown + c->message_len, in, len);
	grown[c->message_len + len] = '\0';
	c->message = grown;
	c->message_len += len;
	if (!lws_is_final_fragment(c->wsi) || lws_remaining_packet_payload(c->wsi) > 0)
		return WS_MESSAGE_PARTIAL;
	return WS_MESSAGE_COMPLETE;
}

void bridge_server_message_done(struct connection *c)
{
	free(c->message);
	c->message = NULL;
	c->message_len = 0;
}

static bool equal_constant_time(const char *a, size_t a_len, const char *b, size_t b_len)
{
	/* Every byte of the longer one is looked at, whatever matches. */
	size_t n = a_len > b_len ? a_len : b_len;
	volatile unsigned char diff = (unsigned char)(a_len != b_len);
	for (size_t i = 0; i < n; i++)
		diff |= (unsigned char)((i < a_len ? a[i] : 0) ^ (i < b_len ? b[i] : 0));
	return diff == 0;
}

bool bridge_server_authorized(struct bridge_server *server, struct lws *wsi, bool allow_query)
{
	const char *key = server->options->api_key;
	char value[512];
	bool ok = false;
	int len = lws_hdr_copy(wsi, value, sizeof(value), WSI_TOKEN_HTTP_AUTHORIZATION);
	if (len > 7 && strncasecmp(value, "Bearer ", 7) == 0)
		ok = equal_constant_time(value + 7, (size_t)len - 7, key, strlen(key));
	if (!ok && allow_query) {
		/* The result points into value, just past "access_token=". */
		const char *token = lws_get_urlarg_by_name(wsi, "access_token=", value, sizeof(value));
		if (token)
			ok = equal_constant_time(token, strlen(token), key, strlen(key));
	}
	memset(value, 0, sizeof(value));
	return ok;
}

bool bridge_server_origin_allowed(struct lws *wsi)
{
	char origin[256], host[256];
	int origin_len = lws_hdr_copy(wsi, origin, sizeof(origin), WSI_TOKEN_ORIGIN);
	if (origin_len <= 0)
		return true; /* not a browser, or a same-origin GET */
	int host_len = lws_hdr_copy(wsi, host, sizeof(host), WSI_TOKEN_HOST);
	if (host_len <= 0)
		return false;
	const char *after_scheme = strstr(origin, "://");
	return after_scheme && strcasecmp(after_scheme + 3, host) == 0;
}

void bridge_server_kill(struct connection *c, const char *why)
{
	if (c->kicked)
		return;
	c->kicked = true;
	log_info("closing a connection: %s", why);
	/* Closed on the loop's next turn, whether or not it can be written to. */
	lws_set_timeout(c->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
}

/* Splits a Host header into name and port (0 when absent, -1 when not a
 * port). A bracketed IPv6 literal keeps its brackets off. */
static void split_host(char *host, const char **name, int *port)
{
	char *colon = NULL;
	*port = 0;
	if (host[0] == '[') {
		char *close = strchr(host, ']');
		if (!close) {
			*port = -1;
			*name = host;
			return;
		}
		*close = '\0';
		*name = host + 1;
		if (close[1] == ':')
			colon = close + 1;
		else if (close[1] != '\0')
			*port = -1;
	} else {
		*name = host;
		colon = strchr(host, ':');
		if (colon)
			*colon = '\0';
	}
	if (colon) {
		char *end;
		long p = strtol(colon + 1, &end, 10);
		*port = colon[1] && !*end && p > 0 && p <= 65535 ? (int)p : -1;
	}
}

bool bridge_server_host_allowed(struct bridge_server *server, struct lws *wsi)
{
	/* No page can name a UNIX socket: nothing to rebind. */
	if (server->unix_socket)
		return true;
	char host[256];
	if (lws_hdr_copy(wsi, host, sizeof(host), WSI_TOKEN_HOST) <= 0)
		return false;
	const char *name;
	int port;
	split_host(host, &name, &port);
	if (port < 0)
		return false;
	/* The name decides, not the port: a rebinding page reaches us under a
	 * name it controls, whatever the port, while an SSH or proxy forward
	 * (localhost:9000 -> here) keeps our name with another port. An
	 * address literal means the page's own origin is that address. */
	const struct bridge_server_options *o = server->options;
	for (size_t i = 0; i < o->allowed_host_count; i++)
		if (strcasecmp(name, o->allowed_hosts[i]) == 0)
			return true;
	unsigned char addr[16];
	return strcasecmp(name, "localhost") == 0 || inet_pton(AF_INET, name, addr) == 1 ||
	       inet_pton(AF_INET6, name, addr) == 1;
}

/* Viewers whose hub has news, or that must go: a revoked one that does not
 * read goes at once, not when it can be written to. */
static void wake_viewers(struct bridge_server *server)
{
	for (struct connection *c = server->live; c; c = c->next_live) {
		if (!c->viewer_socket || c->kicked)
			continue;
		if (c->viewer && !c->leaving && bridge_viewer_role(c->viewer) == BRIDGE_VIEWER_NONE) {
			if (lws_send_pipe_choked(c->wsi)) {
				bridge_server_kill(c, "viewer link revoked or session ended");
				continue;
			}
			/* It is told why first, if that goes out within a second. */
			c->leaving = true;
			lws_set_timeout(c->wsi, PENDING_TIMEOUT_USER_OK, 1);
		}
		lws_callback_on_writable(c->wsi);
	}
}

static int route_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user,
			  void *in, size_t len)
{
	struct bridge_server *server = lws_context_user(lws_get_context(wsi));
	switch (reason) {
	case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
		drain_outbox(server);
		wake_viewers(server);
		return 0;
	case LWS_CALLBACK_FILTER_NETWORK_CONNECTION:
		/* user is the accepted address here, not a connection */
		return bridge_server_filter_accept(server, user);
	case LWS_CALLBACK_WSI_CREATE:
		bridge_server_wsi_created(server, wsi);
		return 0;
	case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE: {
		/* A WebSocket counts for its client for as long as it lives. */
		const char *why;
		int refused = bridge_server_attribute_request(server, wsi, &why);
		if (!refused)
			return 0;
		/* >0: answered here; lws completes the transaction. */
		return lws_return_http_status(wsi, (unsigned)refused, why) ? -1 : 1;
	}
	case LWS_CALLBACK_WSI_DESTROY:
		bridge_server_wsi_destroyed(server, wsi);
		return 0;
	default:
		return bridge_server_http_callback(wsi, reason, user, in, len);
	}
}

/* A peer can make libwebsockets complain once per connection, or once per
 * loop turn when descriptors run out: at most 20 lines per 10 s get through,
 * and how many did not is said. */
static void log_from_lws(int level, const char *line)
{
	static long window;
	static int lines, suppressed;
	if (strstr(line, "accept: errno"))
		bridge_server_note_accept_failure();
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec - window >= 10) {
		if (suppressed)
			log_warn("libwebsockets: %d more messages suppressed", suppressed);
		window = now.tv_sec;
		lines = suppressed = 0;
	}
	if (++lines > 20) {
		suppressed++;
		return;
	}
	char text[512];
	snprintf(text, sizeof(text), "%s", line);
	text[strcspn(text, "\r\n")] = '\0';
	if (level & LLL_ERR)
		log_warn("libwebsockets: %s", text);
	else
		log_debug("libwebsockets: %s", text);
}

/* Parses "ADDR:PORT" / "[V6]:PORT" into iface and port, or a path. */
static bool parse_listen(const char *listen, char *iface, size_t iface_size, int *port,
			 bool *unix_socket)
{
	*unix_socket = listen[0] == '/' || strncmp(listen, "unix:", 5) == 0;
	if (*unix_socket) {
		const char *path = strncmp(listen, "unix:", 5) == 0 ? listen + 5 : listen;
		if (path[0] != '/' || strlen(path) >= 100)
			return false;
		snprintf(iface, iface_size, "%s", path);
		*port = 0;
		return true;
	}
	const char *colon = strrchr(listen, ':');
	if (!colon)
		return false;
	char *end;
	long p = strtol(colon + 1, &end, 10);
	if (*end || p < 1 || p > 65535)
		return false;
	const char *host = listen;
	size_t host_len = (size_t)(colon - listen);
	if (host_len >= 2 && host[0] == '[' && host[host_len - 1] == ']') {
		host++;
		host_len -= 2;
	}
	if (host_len == 0 || host_len >= iface_size)
		return false;
	memcpy(iface, host, host_len);
	iface[host_len] = '\0';
	*port = (int)p;
	return true;
}

/* Viewer hubs and running calls outlive bridge_server_run (sessions end
 * after it returns), so what they use of it must too: the link base stays,
 * and a loop that is gone is not woken. One server per process. */
static pthread_mutex_t waker_lock = PTHREAD_MUTEX_INITIALIZER;
static struct lws_context *waker_target;

static void wake_loop(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&waker_lock);
	if (waker_target)
		lws_cancel_service(waker_target);
	pthread_mutex_unlock(&waker_lock);
}

static void set_waker_target(struct lws_context *lws)
{
	pthread_mutex_lock(&waker_lock);
	waker_target = lws;
	pthread_mutex_unlock(&waker_lock);
}

void bridge_server_viewer_links(const char *listen, struct bridge_viewer_links *links)
{
	bool unix_socket = listen[0] == '/' || strncmp(listen, "unix:", 5) == 0;
	snprintf(links->base_url, sizeof(links->base_url), "%s%s", unix_socket ? "unix:" : "http://",
		 listen);
	links->headroom = LWS_PRE;
	links->wake = wake_loop;
	links->wake_context = NULL;
}

struct stop_watch {
	struct bridge_server *server;
	int fd;
};

/* Waits for the stop signal and wakes the loop, which cannot poll our fd. */
static void *watch_stop(void *arg)
{
	struct stop_watch *w = arg;
	struct pollfd pfd = { .fd = w->fd, .events = POLLIN };
	while (poll(&pfd, 1, -1) < 0 && errno == EINTR)
		;
	w->server->stopping = true;
	lws_cancel_service(w->server->lws);
	return NULL;
}

int bridge_server_run(const struct bridge_server_options *options)
{
	char iface[128];
	int port;
	bool unix_socket;
	if (!parse_listen(options->listen, iface, sizeof(iface), &port, &unix_socket)) {
		log_error("--listen '%s' is not ADDR:PORT, [IPV6]:PORT or an absolute socket path",
			  options->listen);
		return 1;
	}
	if (!unix_socket && strcmp(iface, "127.0.0.1") != 0 && strcmp(iface, "::1") != 0 &&
	    strcmp(iface, "localhost") != 0)
		log_warn("listening on %s: reachable beyond this machine; the API key is all that "
			 "protects the desktops",
			 iface);

	struct bridge_server server = { .options = options, .unix_socket = unix_socket };
	if (!bridge_server_limits_init(&server))
		return 1;
	pthread_mutex_init(&server.outbox_lock, NULL);
	lws_set_log_level(LLL_ERR | LLL_WARN, log_from_lws);

	static const struct lws_protocols protocols[] = {
		{ "http", route_callback, sizeof(struct connection), 0, 0, NULL, 0 },
		{ "mcp", bridge_server_ws_callback, sizeof(struct connection), 65536, 0, NULL, 0 },
		{ "lizard-viewer", bridge_server_viewer_callback, sizeof(struct connection), 4096, 0,
		  NULL, 0 },
		{ "lizard-rfb", bridge_server_rfb_callback, sizeof(struct connection), 65536, 0, NULL,
		  0 },
		{ "lizard-vnc-raw", bridge_server_vnc_raw_callback, 0, 65536, 0, NULL, 0 },
		{ NULL, NULL, 0, 0, 0, NULL, 0 },
	};
	struct lws_context_creation_info info;
	memset(&info, 0, sizeof(info));
	info.port = unix_socket ? 0 : port;
	info.iface = iface;
	info.protocols = protocols;
	info.user = &server;
	if (unix_socket) {
		info.options |= LWS_SERVER_OPTION_UNIX_SOCK;
		unlink(iface);
	}
	info.vhost_name = "lizard-bridge";
	info.server_string = "lizard-bridge";
	info.timeout_secs = 30;
	info.ka_time = 0;

	server.lws = lws_create_context(&info);
	if (!server.lws) {
		log_error("cannot listen on %s (in use, or not an address of this machine?)",
			  options->listen);
		pthread_mutex_destroy(&server.outbox_lock);
		bridge_server_limits_finish(&server);
		return 1;
	}
	bridge_server_find_listener(&server, port, unix_socket ? iface : NULL);
	struct stop_watch watch = { &server, options->stop_fd };
	pthread_t watcher;
	if (pthread_create(&watcher, NULL, watch_stop, &watch) != 0) {
		lws_context_destroy(server.lws);
		pthread_mutex_destroy(&server.outbox_lock);
		bridge_server_limits_finish(&server);
		return 1;
	}
	/* Hubs wake the loop when they have news. */
	set_waker_target(server.lws);
	log_info("serving MCP on %s%s/mcp (WebSocket and Streamable HTTP)",
		 unix_socket ? "unix:" : "http://", options->listen);

	while (!server.stopping) {
		if (lws_service(server.lws, 0) < 0)
			break;
		bridge_server_shed_backlog(&server);
	}

	if (!server.stopping)
		pthread_cancel(watcher); /* the loop failed; nobody will signal it */
	pthread_join(watcher, NULL);
	set_waker_target(NULL);
	lws_context_destroy(server.lws);
	pthread_mutex_lock(&server.outbox_lock);
	struct outgoing *o = server.outbox_head;
	server.outbox_head = server.outbox_tail = NULL;
	pthread_mutex_unlock(&server.outbox_lock);
	while (o) {
		struct outgoing *next = o->next;
		free_outgoing(o);
		o = next;
	}
	pthread_mutex_destroy(&server.outbox_lock);
	bridge_server_limits_finish(&server);
	if (unix_socket)
		unlink(iface);
	return 0;
}
