/* SPDX-License-Identifier: MIT */
/* What peers that have not authenticated can hold: connections in total and
 * per client address, checked as libwebsockets accepts each one (before a
 * byte is read), with the total kept below the descriptor limit; and what
 * happens when descriptors run out anyway. libwebsockets 4.1 then logs
 * "accept: errno 24" and returns with the connection still in the listen
 * backlog, so its next poll wakes at once: a busy loop that floods the log.
 * We keep one spare descriptor; after a failed accept the loop frees it,
 * takes what waits in the backlog, closes it, and opens the spare again, so
 * the loop sleeps. A trusted proxy (--trusted-proxy) speaks for many
 * clients: its connections pass the per-address check at accept, counting
 * only toward the total, and once a request's head names its client
 * (X-Forwarded-For, forwarded.h) the connection counts for that client
 * until the request is answered, or for its whole life when it becomes a
 * WebSocket. A kept-alive proxy connection between requests counts for
 * nobody, and its next request may be another client's. */
#include "bridge/server/limits.h"

#include "bridge/server/options.h"
#include "bridge/server/port_proxy.h"
#include "bridge/server/state.h"

#include "util/clock.h"
#include "util/log.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* Raising the soft limit further would only grow libwebsockets' tables,
 * which are sized by it. */
#define FD_LIMIT_WANTED 65536
/* At most this many waiting connections are shed per loop turn. */
#define SHED_BATCH 256

struct accepted {
	struct lws *wsi;
	/* Whom the per-address cap counts it for; family 0: nobody (a UNIX
	 * socket, or a trusted proxy's between requests). */
	struct bridge_address client;
	bool from_trusted_proxy;
};

/* Set by the log hook (the service thread, inside lws_service). */
static atomic_bool accept_failed;

void bridge_server_note_accept_failure(void)
{
	atomic_store(&accept_failed, true);
}

static rlim_t raise_fd_limit(void)
{
	struct rlimit limit;
	if (getrlimit(RLIMIT_NOFILE, &limit) != 0)
		return 1024;
	rlim_t wanted = limit.rlim_max == RLIM_INFINITY || limit.rlim_max > FD_LIMIT_WANTED
				? FD_LIMIT_WANTED
				: limit.rlim_max;
	if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < wanted) {
		struct rlimit raised = { wanted, limit.rlim_max };
		if (setrlimit(RLIMIT_NOFILE, &raised) == 0)
			limit.rlim_cur = wanted;
	}
	return limit.rlim_cur == RLIM_INFINITY ? FD_LIMIT_WANTED : limit.rlim_cur;
}

bool bridge_server_limits_init(struct bridge_server *server)
{
	const struct bridge_server_options *o = server->options;
	rlim_t fds = raise_fd_limit();
	/* Half the descriptors for connections, half for everything else:
	 * sessions, their VNC sockets and processes, files. And no more than
	 * half of FD_SETSIZE: libvncclient waits on its socket with select(),
	 * which cannot take a descriptor number of FD_SETSIZE or more, and a new
	 * socket gets the lowest free number, above every connection's if need
	 * be. */
	rlim_t budget_fds = fds / 2 < FD_SETSIZE / 2 ? fds / 2 : FD_SETSIZE / 2;
	int budget = (int)budget_fds;
	int wanted = o->max_connections > 0 ? o->max_connections : BRIDGE_SERVER_MAX_CONNECTIONS;
	server->max_connections = wanted < budget ? wanted : budget;
	if (server->max_connections < wanted)
		log_warn("at most %d connections (the descriptor limit is %llu, and VNC "
			 "sockets must stay under %d)",
			 server->max_connections, (unsigned long long)fds, FD_SETSIZE);
	server->max_peer_connections = o->max_peer_connections > 0
					       ? o->max_peer_connections
					       : BRIDGE_SERVER_MAX_PEER_CONNECTIONS;
	server->accepted = calloc((size_t)server->max_connections, sizeof(*server->accepted));
	server->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	server->listen_fd = -1;
	if (!server->accepted || server->reserve_fd < 0) {
		log_error("cannot set up connection limits: %s", strerror(errno));
		bridge_server_limits_finish(server);
		return false;
	}
	return true;
}

void bridge_server_limits_finish(struct bridge_server *server)
{
	free(server->accepted);
	server->accepted = NULL;
	if (server->reserve_fd >= 0)
		close(server->reserve_fd);
	server->reserve_fd = -1;
}

/* Our listening socket: the one socket that accepts, on our port or path.
 * Looked for once, right after libwebsockets made it. */
void bridge_server_find_listener(struct bridge_server *server, int port, const char *path)
{
	for (int fd = 0; fd < 4096; fd++) {
		int listening = 0;
		socklen_t len = sizeof(listening);
		if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || !listening)
			continue;
		struct sockaddr_storage addr;
		len = sizeof(addr);
		if (getsockname(fd, (struct sockaddr *)&addr, &len) != 0)
			continue;
		bool ours = false;
		if (addr.ss_family == AF_INET)
			ours = ntohs(((struct sockaddr_in *)&addr)->sin_port) == port;
		else if (addr.ss_family == AF_INET6)
			ours = ntohs(((struct sockaddr_in6 *)&addr)->sin6_port) == port;
		else if (addr.ss_family == AF_UNIX && path)
			ours = strcmp(((struct sockaddr_un *)&addr)->sun_path, path) == 0;
		if (ours) {
			server->listen_fd = fd;
			return;
		}
	}
	log_warn("cannot find the listening socket; running out of descriptors may make the "
		 "loop busy");
}

static void peer_of(const struct sockaddr_storage *addr, struct bridge_address *peer)
{
	memset(peer, 0, sizeof(*peer));
	if (addr->ss_family == AF_INET) {
		peer->family = AF_INET;
		memcpy(peer->bytes, &((const struct sockaddr_in *)addr)->sin_addr, 4);
	} else if (addr->ss_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)addr)->sin6_addr;
		if (IN6_IS_ADDR_V4MAPPED(a)) {
			peer->family = AF_INET;
			memcpy(peer->bytes, a->s6_addr + 12, 4);
		} else {
			peer->family = AF_INET6;
			memcpy(peer->bytes, a->s6_addr, 16);
		}
	}
	/* UNIX sockets: no address; only the total cap applies. */
}

/* Connections that count for client, other than except. */
static int connections_of(const struct bridge_server *server, const struct bridge_address *client,
			  const struct lws *except)
{
	int count = 0;
	for (int i = 0; i < server->accepted_count; i++)
		count += server->accepted[i].wsi != except &&
			 bridge_address_equal(&server->accepted[i].client, client);
	return count;
}

static struct accepted *find_accepted(struct bridge_server *server, const struct lws *wsi)
{
	for (int i = 0; i < server->accepted_count; i++)
		if (server->accepted[i].wsi == wsi)
			return &server->accepted[i];
	return NULL;
}

static bool trusted_proxy(const struct bridge_server *server, const struct bridge_address *peer)
{
	const struct bridge_server_options *o = server->options;
	return peer->family != 0 &&
	       bridge_trusted_proxy_match(o->trusted_proxies, o->trusted_proxy_count, peer);
}

/* Notes once per interval how many were refused since the last note, so a
 * flood of refusals is one line, not one each. */
static void note_refusal(struct bridge_server *server, const char *why)
{
	server->refused++;
	int64_t now_s = clock_monotonic_ms() / 1000;
	if (now_s - server->refusal_logged_at < 10 && server->refusal_logged_at != 0)
		return;
	log_warn("refused %d connection%s (%s)", server->refused, server->refused == 1 ? "" : "s",
		 why);
	server->refused = 0;
	server->refusal_logged_at = now_s;
}

int bridge_server_filter_accept(struct bridge_server *server,
				const struct lws_filter_network_conn_args *filter)
{
	struct bridge_address peer;
	peer_of(&filter->cli_addr, &peer);
	/* The port proxy's connections count too: each takes descriptors. */
	if (server->accepted_count + port_proxy_held(server->ports) >= server->max_connections) {
		note_refusal(server, "the server is at its connection cap");
		return 1;
	}
	/* A trusted proxy's clients are told apart once their requests come. */
	if (peer.family != 0 && !trusted_proxy(server, &peer) &&
	    connections_of(server, &peer, NULL) +
			    port_proxy_unauthorized_from(server->ports, &peer) >=
		    server->max_peer_connections) {
		note_refusal(server, "a peer address at its connection cap");
		return 1;
	}
	/* The connection's wsi is made next, in the same call from lws. */
	server->pending_peer = peer;
	server->accept_pending = true;
	return 0;
}

void bridge_server_wsi_created(struct bridge_server *server, struct lws *wsi)
{
	if (!server->accept_pending)
		return; /* not an accepted connection (the loop's own) */
	server->accept_pending = false;
	if (server->accepted_count >= server->max_connections)
		return; /* cannot happen: the filter checked */
	struct accepted *a = &server->accepted[server->accepted_count++];
	*a = (struct accepted){ .wsi = wsi, .client = server->pending_peer };
	if (trusted_proxy(server, &server->pending_peer)) {
		a->from_trusted_proxy = true;
		a->client.family = 0;
	}
	bridge_server_arm_request_timer(server, wsi);
}

void bridge_server_wsi_destroyed(struct bridge_server *server, struct lws *wsi)
{
	struct accepted *a = find_accepted(server, wsi);
	if (a)
		*a = server->accepted[--server->accepted_count];
}

int bridge_server_attribute_request(struct bridge_server *server, struct lws *wsi, const char **why)
{
	struct accepted *a = find_accepted(server, wsi);
	if (!a || !a->from_trusted_proxy)
		return 0; /* counted by its own address since it was accepted */
	a->client.family = 0;
	char header[BRIDGE_FORWARDED_MAX + 1];
	int len = lws_hdr_copy(wsi, header, sizeof(header), WSI_TOKEN_X_FORWARDED_FOR);
	if (len == 0)
		return 0; /* the proxy's own request: it counts for nobody */
	if (len < 0) {
		*why = "X-Forwarded-For is longer than 1024 bytes";
		return 400;
	}
	struct bridge_address client;
	const struct bridge_server_options *o = server->options;
	if (bridge_forwarded_client(header, (size_t)len, o->trusted_proxies, o->trusted_proxy_count,
				    &client) != BRIDGE_FORWARDED_CLIENT) {
		*why = "X-Forwarded-For from a trusted proxy does not end in a client's IP address";
		return 400;
	}
	if (trusted_proxy(server, &client))
		return 0; /* one of our proxies, on its own behalf */
	if (connections_of(server, &client, wsi) >= server->max_peer_connections) {
		note_refusal(server, "a client behind a trusted proxy at its connection cap");
		*why = "too many connections from your address at once; finish some first";
		return 429;
	}
	a->client = client;
	return 0;
}

void bridge_server_request_done(struct bridge_server *server, struct lws *wsi)
{
	struct accepted *a = find_accepted(server, wsi);
	if (a && a->from_trusted_proxy)
		a->client.family = 0;
}

void bridge_server_arm_request_timer(struct bridge_server *server, struct lws *wsi)
{
	int seconds = server->options->request_timeout_s > 0 ? server->options->request_timeout_s
							     : BRIDGE_SERVER_REQUEST_TIMEOUT_S;
	lws_set_timer_usecs(wsi, (lws_usec_t)seconds * LWS_US_PER_SEC);
}

void bridge_server_shed_backlog(struct bridge_server *server)
{
	if (!atomic_exchange(&accept_failed, false) || server->listen_fd < 0)
		return;
	if (server->reserve_fd >= 0)
		close(server->reserve_fd);
	int shed = 0;
	bool starved = false;
	struct pollfd pfd = { .fd = server->listen_fd, .events = POLLIN };
	while (shed < SHED_BATCH && poll(&pfd, 1, 0) > 0) {
		int fd = accept4(server->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			starved = errno == EMFILE || errno == ENFILE;
			break;
		}
		close(fd);
		shed++;
	}
	server->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (starved) {
		/* Not even the spare could be had back: the backlog cannot be
		 * emptied, and the next poll would wake at once. Pause instead of
		 * spinning until something lets a descriptor go. */
		struct timespec pause = { 0, 50 * 1000000L };
		nanosleep(&pause, NULL);
	}
	server->refused += shed > 0 ? shed - 1 : 0;
	note_refusal(server, "out of file descriptors");
}
