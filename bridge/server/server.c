/* SPDX-License-Identifier: MIT */
#include "bridge/server/server.h"

#include "bridge/context.h"
#include "bridge/server/http.h"
#include "bridge/server/limits.h"
#include "bridge/server/mcp_ws.h"
#include "bridge/server/novnc.h"
#include "bridge/server/outbox.h"
#include "bridge/server/port_front.h"
#include "bridge/server/port_proxy.h"
#include "bridge/server/state.h"
#include "bridge/server/viewer_ws.h"
#include "util/clock.h"
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

static int route_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
			  size_t len)
{
	struct bridge_server *server = lws_context_user(lws_get_context(wsi));
	switch (reason) {
	case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
		bridge_server_drain_outbox(server);
		bridge_server_viewer_wake_all(server);
		bridge_server_port_front_adopt(server);
		return 0;
	case LWS_CALLBACK_FILTER_NETWORK_CONNECTION: {
		/* user is the accepted address here, not a connection */
		int refused = bridge_server_filter_accept(server, user);
		return refused ? refused : bridge_server_port_front_take(server, user);
	}
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
	long now_s = (long)(clock_monotonic_ms() / 1000);
	if (now_s - window >= 10) {
		if (suppressed)
			log_warn("libwebsockets: %d more messages suppressed", suppressed);
		window = now_s;
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

/* The address the listener must end up bound to. libwebsockets 4.1 binds
 * an IPv4 iface to every address when it was built with IPv6 (its issue
 * 2290), so an IPv4 address turns IPv6 off for the vhost, and what the
 * socket is bound to is checked after: a daemon asked for loopback never
 * serves on any other address. */
struct listen_address {
	int family; /* AF_INET or AF_INET6 */
	unsigned char bytes[16];
};

static bool parse_listen_address(const char *iface, struct listen_address *a)
{
	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, iface, a->bytes) == 1)
		a->family = AF_INET;
	else if (inet_pton(AF_INET6, iface, a->bytes) == 1)
		a->family = AF_INET6;
	return a->family != 0;
}

static bool listener_bound_as_asked(int fd, const struct listen_address *want, char *bound,
				    size_t size)
{
	struct sockaddr_storage addr;
	socklen_t len = sizeof(addr);
	snprintf(bound, size, "an unknown address");
	if (fd < 0 || getsockname(fd, (struct sockaddr *)&addr, &len) != 0)
		return false;
	struct listen_address have = { .family = addr.ss_family };
	if (addr.ss_family == AF_INET) {
		memcpy(have.bytes, &((struct sockaddr_in *)&addr)->sin_addr, 4);
	} else if (addr.ss_family == AF_INET6) {
		const struct in6_addr *a6 = &((struct sockaddr_in6 *)&addr)->sin6_addr;
		if (IN6_IS_ADDR_V4MAPPED(a6)) {
			have.family = AF_INET;
			memcpy(have.bytes, a6->s6_addr + 12, 4);
		} else {
			memcpy(have.bytes, a6->s6_addr, 16);
		}
	} else {
		return false;
	}
	inet_ntop(have.family, have.bytes, bound, (socklen_t)size);
	return have.family == want->family &&
	       memcmp(have.bytes, want->bytes, have.family == AF_INET ? 4 : 16) == 0;
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

void bridge_server_viewer_links(const char *listen, const char *public_host,
				struct bridge_viewer_links *links)
{
	bool unix_socket = listen[0] == '/' || strncmp(listen, "unix:", 5) == 0;
	snprintf(links->base_url, sizeof(links->base_url), "%s%s",
		 unix_socket ? "unix:" : "http://", listen);
	/* Exposed ports: *.localhost reaches loopback in browsers and curl,
	 * on the daemon's own port; a UNIX socket has no host names. */
	const char *colon = strrchr(listen, ':');
	if (public_host)
		snprintf(links->port_host_suffix, sizeof(links->port_host_suffix), "%s",
			 public_host);
	else if (!unix_socket && colon)
		snprintf(links->port_host_suffix, sizeof(links->port_host_suffix), "localhost%s",
			 colon);
	else
		links->port_host_suffix[0] = '\0';
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
	if (!unix_socket && strcmp(iface, "localhost") == 0)
		snprintf(iface, sizeof(iface), "127.0.0.1");
	struct listen_address want;
	if (!unix_socket && !parse_listen_address(iface, &want)) {
		log_error(
			"--listen '%s': give an IPv4 or IPv6 address (127.0.0.1, [::1], 0.0.0.0), "
			"not a name",
			options->listen);
		return 1;
	}
	if (!unix_socket && strcmp(iface, "127.0.0.1") != 0 && strcmp(iface, "::1") != 0)
		log_warn("listening on %s: reachable beyond this machine; the API key is all that "
			 "protects the desktops",
			 iface);

	struct bridge_server server = { .options = options, .unix_socket = unix_socket };
	if (!bridge_server_limits_init(&server))
		return 1;
	pthread_mutex_init(&server.outbox_lock, NULL);
	lws_set_log_level(LLL_ERR | LLL_WARN, log_from_lws);

	/* HTTP first: it gets the vhost's own callbacks too (route_callback). */
	static struct lws_protocols protocols[6];
	protocols[0] = (struct lws_protocols){ .name = "http",
					       .callback = route_callback,
					       .per_session_data_size = sizeof(struct http_conn) };
	protocols[1] = bridge_server_mcp_ws_protocol;
	protocols[2] = bridge_server_viewer_protocol;
	protocols[3] = bridge_server_novnc_protocol;
	protocols[4] = bridge_server_vnc_raw_protocol;
	protocols[5] = (struct lws_protocols){ .name = NULL };
	struct lws_context_creation_info info;
	memset(&info, 0, sizeof(info));
	info.port = unix_socket ? 0 : port;
	info.iface = iface;
	info.protocols = protocols;
	info.user = &server;
	if (unix_socket) {
		info.options |= LWS_SERVER_OPTION_UNIX_SOCK;
		unlink(iface);
	} else if (want.family == AF_INET) {
		info.options |= LWS_SERVER_OPTION_DISABLE_IPV6;
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
	char bound[INET6_ADDRSTRLEN];
	if (!unix_socket &&
	    !listener_bound_as_asked(server.listen_fd, &want, bound, sizeof(bound))) {
		log_error("asked to listen on %s, the socket is bound to %s; not serving",
			  options->listen, bound);
		lws_context_destroy(server.lws);
		pthread_mutex_destroy(&server.outbox_lock);
		bridge_server_limits_finish(&server);
		return 1;
	}
	struct stop_watch watch = { &server, options->stop_fd };
	pthread_t watcher;
	if (pthread_create(&watcher, NULL, watch_stop, &watch) != 0) {
		lws_context_destroy(server.lws);
		pthread_mutex_destroy(&server.outbox_lock);
		bridge_server_limits_finish(&server);
		return 1;
	}
	/* Exposed ports: their host names never reach the routes here. */
	if (!unix_socket && !(server.ports = port_proxy_start(&server))) {
		pthread_cancel(watcher);
		pthread_join(watcher, NULL);
		lws_context_destroy(server.lws);
		pthread_mutex_destroy(&server.outbox_lock);
		bridge_server_limits_finish(&server);
		return 1;
	}
	/* Hubs wake the loop when they have news. */
	set_waker_target(server.lws);
	if (options->mcp)
		log_info("serving MCP on %s%s/mcp (WebSocket and Streamable HTTP)",
			 unix_socket ? "unix:" : "http://", options->listen);
	else
		log_info("serving viewers on %s%s", unix_socket ? "unix:" : "http://",
			 options->listen);
	if (options->ready_fd > 0 && write(options->ready_fd, "1", 1) != 1)
		log_debug("cannot say the server is listening: %s", strerror(errno));

	while (!server.stopping) {
		if (lws_service(server.lws, 0) < 0)
			break;
		bridge_server_shed_backlog(&server);
	}

	if (!server.stopping)
		pthread_cancel(watcher); /* the loop failed; nobody will signal it */
	pthread_join(watcher, NULL);
	set_waker_target(NULL);
	port_proxy_stop(server.ports);
	server.ports = NULL;
	lws_context_destroy(server.lws);
	bridge_server_drop_outbox(&server);
	pthread_mutex_destroy(&server.outbox_lock);
	bridge_server_limits_finish(&server);
	if (unix_socket)
		unlink(iface);
	return 0;
}
