/* SPDX-License-Identifier: MIT */
/* The port proxy's thread: its connections, the first head of each, the
 * checks, the dial into the sandbox and the poll loop (see port_proxy.h). */
#include "bridge/server/port_proxy.h"

#include "bridge/context.h"
#include "bridge/server/options.h"
#include "bridge/server/port_conn.h"
#include "bridge/server/port_head.h"
#include "bridge/server/port_reply.h"
#include "bridge/server/port_route.h"
#include "bridge/server/state.h"
#include "bridge/session/ports.h"
#include "bridge/session/registry.h"
#include "bridge/session/session.h"
#include "util/clock.h"
#include "util/log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* An answer of ours must be read within this, or the connection goes. */
#define ANSWER_FLUSH_MS 5000
/* How often a dial the init had no room for is tried again. */
#define REDIAL_MS 20

struct incoming {
	int fd;
	struct bridge_address peer;
	struct incoming *next;
};

/* Unauthorized connections per client address. */
struct address_count {
	struct bridge_address address;
	int count;
};

struct port_proxy {
	struct bridge_server *server;
	const struct bridge_server_options *options;
	pthread_t thread;
	int wake_fd;
	atomic_bool stopping, routes_changed;
	atomic_int held;
	pthread_mutex_t lock; /* incoming and handoffs */
	struct incoming *incoming;
	struct port_handoff *handoffs;
	struct address_count *unauthorized; /* under lock */
	size_t unauthorized_len, unauthorized_cap;
	struct port_conn *conns; /* the thread's own */
	int head_timeout_ms, idle_ms, upgraded_idle_ms, max_per_session;
};

static void wake(struct port_proxy *p)
{
	uint64_t one = 1;
	if (write(p->wake_fd, &one, sizeof(one)) != sizeof(one))
		log_debug("port proxy: cannot wake its thread");
}

static void on_ports_changed(void *context)
{
	struct port_proxy *p = context;
	atomic_store(&p->routes_changed, true);
	wake(p);
}

/* Under p->lock. */
static struct address_count *count_of(struct port_proxy *p, const struct bridge_address *a)
{
	for (size_t i = 0; i < p->unauthorized_len; i++)
		if (bridge_address_equal(&p->unauthorized[i].address, a))
			return &p->unauthorized[i];
	return NULL;
}

static bool count_unauthorized(struct port_proxy *p, const struct bridge_address *a)
{
	if (a->family == 0)
		return true; /* a UNIX socket: only the total applies */
	pthread_mutex_lock(&p->lock);
	struct address_count *entry = count_of(p, a);
	if (!entry && p->unauthorized_len == p->unauthorized_cap) {
		size_t cap = p->unauthorized_cap ? p->unauthorized_cap * 2 : 64;
		struct address_count *grown = realloc(p->unauthorized, cap * sizeof(*grown));
		if (grown) {
			p->unauthorized = grown;
			p->unauthorized_cap = cap;
		}
	}
	if (!entry && p->unauthorized_len < p->unauthorized_cap) {
		entry = &p->unauthorized[p->unauthorized_len++];
		*entry = (struct address_count){ .address = *a };
	}
	if (entry)
		entry->count++;
	pthread_mutex_unlock(&p->lock);
	return entry != NULL;
}

static void uncount_unauthorized(struct port_proxy *p, const struct bridge_address *a)
{
	if (a->family == 0)
		return;
	pthread_mutex_lock(&p->lock);
	struct address_count *entry = count_of(p, a);
	if (entry && --entry->count == 0)
		*entry = p->unauthorized[--p->unauthorized_len];
	pthread_mutex_unlock(&p->lock);
}

int port_proxy_unauthorized_from(struct port_proxy *p, const struct bridge_address *a)
{
	if (!p)
		return 0;
	pthread_mutex_lock(&p->lock);
	struct address_count *entry = count_of(p, a);
	int count = entry ? entry->count : 0;
	pthread_mutex_unlock(&p->lock);
	return count;
}

void port_proxy_handed_over(struct port_proxy *p, const struct bridge_address *a)
{
	/* Counted by lws from now on (it was adopted first): the total and
	 * the address's count never dip in between. */
	uncount_unauthorized(p, a);
	atomic_fetch_sub(&p->held, 1);
}

void port_proxy_take(struct port_proxy *p, int fd, const struct bridge_address *peer)
{
	struct incoming *in = malloc(sizeof(*in));
	if (!in || !count_unauthorized(p, peer)) {
		free(in);
		close(fd);
		return;
	}
	atomic_fetch_add(&p->held, 1);
	in->fd = fd;
	in->peer = *peer;
	pthread_mutex_lock(&p->lock);
	in->next = p->incoming;
	p->incoming = in;
	pthread_mutex_unlock(&p->lock);
	wake(p);
}

int port_proxy_held(struct port_proxy *p)
{
	return p ? atomic_load(&p->held) : 0;
}

struct port_handoff *port_proxy_next_handoff(struct port_proxy *p)
{
	pthread_mutex_lock(&p->lock);
	struct port_handoff *h = p->handoffs;
	if (h)
		p->handoffs = h->next;
	pthread_mutex_unlock(&p->lock);
	return h;
}

static void describe_peer(struct port_conn *c)
{
	c->peer_len = sizeof(c->peer);
	snprintf(c->client_text, sizeof(c->client_text), "unknown");
	if (getpeername(c->client, (struct sockaddr *)&c->peer, &c->peer_len) != 0)
		return;
	if (c->peer.ss_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)&c->peer)->sin_addr, c->client_text,
			  sizeof(c->client_text));
	else if (c->peer.ss_family == AF_INET6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&c->peer)->sin6_addr, c->client_text,
			  sizeof(c->client_text));
}

static void accept_incoming(struct port_proxy *p, int64_t now)
{
	pthread_mutex_lock(&p->lock);
	struct incoming *list = p->incoming;
	p->incoming = NULL;
	pthread_mutex_unlock(&p->lock);
	while (list) {
		struct incoming *next = list->next;
		fcntl(list->fd, F_SETFL, O_NONBLOCK);
		struct port_conn *c = port_conn_create(list->fd);
		if (!c) {
			close(list->fd);
			atomic_fetch_sub(&p->held, 1);
			uncount_unauthorized(p, &list->peer);
		} else {
			c->address = list->peer;
			c->unauthorized = true;
			c->peer_trusted = list->peer.family != 0 &&
					  bridge_trusted_proxy_match(
						  p->options->trusted_proxies,
						  p->options->trusted_proxy_count, &list->peer);
			describe_peer(c);
			c->last_activity_ms = c->state_since_ms = now;
			c->next = p->conns;
			p->conns = c;
		}
		free(list);
		list = next;
	}
}

/* Back to lws: the daemon's own request. */
static void hand_off(struct port_proxy *p, struct port_conn *c)
{
	struct port_handoff *h = calloc(1, sizeof(*h));
	if (!h) {
		c->dead = true;
		return;
	}
	/* Only peeked at: lws reads the request as if we had never been. */
	int one = 1;
	setsockopt(c->client, SOL_SOCKET, SO_RCVLOWAT, &one, sizeof(one));
	h->fd = c->client;
	c->client = -1;
	h->peer = c->address;
	c->unauthorized = false; /* uncounted once lws has it */
	c->handed_off = true;
	pthread_mutex_lock(&p->lock);
	struct port_handoff **tail = &p->handoffs;
	while (*tail)
		tail = &(*tail)->next;
	*tail = h;
	pthread_mutex_unlock(&p->lock);
	c->dead = true; /* for us: the fd is lws's now */
	lws_cancel_service(p->server->lws);
}

/* Our own answer, then the connection closes once it is read. */
static void answer(struct port_conn *c, int status, const char *message, bool html)
{
	if (!port_conn_relay_buffers(c)) {
		c->dead = true;
		return;
	}
	char *reply = malloc(PORT_REPLY_MAX);
	size_t n = reply ? port_reply_error(reply, status, message, html) : 0;
	/* After what is still going out (a redirect's answer). */
	if (!port_buffer_put(&c->down, reply, n))
		c->dead = true;
	free(reply);
	if (c->pending >= 0)
		close(c->pending);
	c->pending = -1;
	c->state = PORT_ANSWERING;
	c->state_since_ms = clock_monotonic_ms();
}

static bool wants_html(const struct port_request *r)
{
	for (size_t i = 0; r->accept.ptr && i + 9 <= r->accept.len; i++)
		if (strncasecmp(r->accept.ptr + i, "text/html", 9) == 0)
			return true;
	return false;
}

static int session_connections(struct port_proxy *p, const char *session)
{
	int count = 0;
	for (struct port_conn *c = p->conns; c; c = c->next)
		count += !c->dead && (c->state == PORT_DIALING || c->state == PORT_RELAYING) &&
			 strcmp(c->route.session, session) == 0;
	return count;
}

/* A WebSocket's Origin must be a page of this session's own ports (this
 * host name, or another exposed port of the same session): another site's
 * page cannot ride on the cookie (cross-site WebSocket hijacking). */
static bool origin_allowed(struct port_proxy *p, struct bridge_session *s,
			   const struct port_request *r, const struct port_route *route)
{
	if (!r->origin.ptr)
		return true; /* not a browser */
	const char *scheme_end = memmem(r->origin.ptr, r->origin.len, "://", 3);
	if (!scheme_end)
		return false;
	size_t offset = (size_t)(scheme_end + 3 - r->origin.ptr);
	struct port_span host = { r->origin.ptr + offset, r->origin.len - offset };
	if (host.len == r->host.len && strncasecmp(host.ptr, r->host.ptr, host.len) == 0)
		return true;
	struct port_route from;
	return port_route_from_host(host, p->options->public_host, &from) &&
	       strcmp(from.session, route->session) == 0 &&
	       bridge_session_port_exposed(s, from.port);
}

/* The first head of a connection for a port: who it is for and whether
 * it may; then the redirect, or the dial. */
static void authorize(struct port_proxy *p, struct port_conn *c, const struct port_request *r,
		      const struct port_route *route)
{
	bool html = wants_html(r);
	char message[400];
	if (route->port == 0) {
		answer(c, 400,
		       "X-Lizard-Session and X-Lizard-Port do not name a session and a port "
		       "1..65535",
		       html);
		return;
	}
	struct bridge_session *s = bridge_registry_acquire(p->options->registry, route->session,
							   NULL);
	if (!s) {
		snprintf(message, sizeof(message), "no session %s (it ended, or never was)",
			 route->session);
		answer(c, 404, message, html);
		return;
	}
	int status = 0;
	if (!bridge_session_port_exposed(s, route->port)) {
		snprintf(message, sizeof(message),
			 "port %d of session %s is not exposed; expose_port opens it", route->port,
			 route->session);
		status = 404;
	} else if (!r->token.ptr) {
		snprintf(message, sizeof(message),
			 "this service needs the session's access token: open the url expose_port "
			 "gave, or send it in the %s header",
			 BRIDGE_PORT_TOKEN_HEADER);
		status = 401;
	} else if (!bridge_session_token_matches(s, r->token.ptr, r->token.len)) {
		snprintf(message, sizeof(message), "the access token is not this session's");
		status = 401;
	} else if (r->upgrade.ptr && !origin_allowed(p, s, r, route)) {
		snprintf(message, sizeof(message),
			 "a WebSocket from another site's page (its Origin is none of this "
			 "session's exposed ports)");
		status = 403;
	} else if (session_connections(p, route->session) >= p->max_per_session) {
		snprintf(message, sizeof(message),
			 "session %s has %d connections to its ports already; close some first",
			 route->session, p->max_per_session);
		status = 429;
	}
	if (status) {
		bridge_registry_release(p->options->registry, s);
		answer(c, status, message, html);
		return;
	}
	if (r->token_in_query && !r->upgrade.ptr &&
	    (port_span_is(r->method, "GET") || port_span_is(r->method, "HEAD"))) {
		/* A browser: the token becomes a cookie of this host name, and
		 * the address bar loses it. */
		bridge_registry_release(p->options->registry, s);
		char *location = malloc(r->target.len + 1);
		char *reply = malloc(PORT_REPLY_MAX);
		size_t n = 0;
		if (location && reply && port_conn_relay_buffers(c)) {
			port_head_clean_target(r, location, r->target.len + 1);
			if (!location[0] || location[0] == '?') {
				/* "?x=1" alone is not a path: keep it relative to "/". */
				memmove(location + 1, location, strlen(location) + 1);
				location[0] = '/';
			}
			n = port_reply_redirect(reply, location, r->token.ptr, r->token.len);
		}
		if (n && port_buffer_put(&c->down, reply, n)) {
			port_buffer_consume(&c->in, r->head_len);
			c->state_since_ms = clock_monotonic_ms(); /* the next head's time */
		} else
			c->dead = true;
		free(location);
		free(reply);
		return;
	}
	bridge_session_access_token(s, c->token, sizeof(c->token));
	c->public_host = p->options->public_host;
	struct error err;
	bool dialling = bridge_session_dial_port(s, route->port, &c->pending, &err);
	bridge_registry_release(p->options->registry, s);
	bool queue_full = !dialling && err.code == ENOBUFS;
	if (!dialling && !queue_full) {
		answer(c, err.code == EAGAIN ? 503 : 502, err.message, html);
		return;
	}
	c->route = *route;
	c->state = PORT_DIALING;
	c->redial = queue_full;
	c->answer_html = html;
	uncount_unauthorized(p, &c->address);
	c->unauthorized = false;
	c->state_since_ms = clock_monotonic_ms();
}

/* A dial the sandbox's init had no room for, tried again. The proxy never
 * waits for that room: one stopped init would hold every session's
 * connections behind it. */
static void redial(struct port_proxy *p, struct port_conn *c)
{
	struct bridge_session *s = bridge_registry_acquire(p->options->registry, c->route.session,
							   NULL);
	struct error err = { 0 };
	bool dialling = s && bridge_session_dial_port(s, c->route.port, &c->pending, &err);
	bridge_registry_release(p->options->registry, s);
	if (!dialling && s && err.code == ENOBUFS)
		return; /* still no room */
	c->redial = false;
	if (!s)
		c->dead = true; /* check_routes would say the same */
	else if (!dialling)
		answer(c, err.code == EAGAIN ? 503 : 502, err.message, c->answer_html);
}

static bool loose_port_host(struct port_proxy *p, const struct port_conn *c)
{
	/* A head too malformed to parse: is it for a port all the same? */
	const char *data = c->in.data + c->in.start;
	size_t len = port_buffer_len(&c->in);
	for (size_t i = 0; i + 6 < len; i++) {
		if (data[i] == '\n' && strncasecmp(data + i + 1, "host:", 5) == 0) {
			size_t start = i + 6, end = start;
			while (end < len && data[end] != '\r' && data[end] != '\n')
				end++;
			while (start < end && data[start] == ' ')
				start++;
			struct port_route route;
			return port_route_from_host((struct port_span){ data + start, end - start },
						    p->options->public_host, &route);
		}
	}
	return false;
}

/* The first len bytes peeked at, read for real; the socket wakes its
 * poll for every byte again. */
static bool take_peeked(struct port_conn *c, size_t len)
{
	int one = 1;
	setsockopt(c->client, SOL_SOCKET, SO_RCVLOWAT, &one, sizeof(one));
	char scratch[4096];
	for (size_t done = 0; done < len;) {
		size_t want = len - done < sizeof(scratch) ? len - done : sizeof(scratch);
		ssize_t n = read(c->client, scratch, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			c->dead = true;
			return false;
		}
		done += (size_t)n;
	}
	c->in.start = 0;
	c->in.end = len;
	return true;
}

/* Looks at what the client sent without taking it off the socket, so that
 * a request for the daemon goes to lws untouched. Until more than that
 * has come, poll does not wake for it (SO_RCVLOWAT). */
static void peek_read(struct port_conn *c)
{
	ssize_t n;
	while ((n = recv(c->client, c->in.data, c->in.cap, MSG_PEEK)) < 0 && errno == EINTR)
		;
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return;
	if (n <= 0) {
		c->client_eof = true;
		c->dead = true;
		return;
	}
	c->in.start = 0;
	c->in.end = (size_t)n;
	int more = (int)n + 1;
	setsockopt(c->client, SOL_SOCKET, SO_RCVLOWAT, &more, sizeof(more));
}

/* A connection still reading its first head. */
static void peek(struct port_proxy *p, struct port_conn *c)
{
	struct port_request r;
	const char *why;
	enum port_head_result result = port_head_parse(c->in.data + c->in.start,
						       port_buffer_len(&c->in), &r, &why);
	if (result == PORT_HEAD_INCOMPLETE) {
		if (c->client_eof)
			c->dead = true;
		return;
	}
	struct port_route route;
	if (result == PORT_HEAD_OK && port_route_find(&r, p->options->public_host, &route)) {
		/* Ours: the head is taken off the socket for real. */
		if (!take_peeked(c, r.head_len))
			return;
		authorize(p, c, &r, &route);
		return;
	}
	if (result != PORT_HEAD_OK && loose_port_host(p, c)) {
		answer(c, result == PORT_HEAD_TOO_LARGE ? 431 : 400,
		       result == PORT_HEAD_TOO_LARGE ? "the request head is over 16 KiB" : why,
		       false);
		return;
	}
	/* Not for a port: unless a redirect of ours is still going out. */
	if (port_buffer_len(&c->down) == 0)
		hand_off(p, c);
	else
		c->dead = true;
}

static void dialled(struct port_proxy *p, struct port_conn *c)
{
	struct error err;
	int fd = bridge_session_dial_finish(c->pending, c->route.port, &err);
	close(c->pending);
	c->pending = -1;
	if (fd < 0) {
		char message[600];
		if (err.code == ECONNREFUSED)
			snprintf(message, sizeof(message),
				 "the sandbox is running, but nothing listens on port %d",
				 c->route.port);
		else
			snprintf(message, sizeof(message), "%s", err.message);
		answer(c, 502, message, false);
		return;
	}
	if (!port_conn_relay_buffers(c)) {
		close(fd);
		c->dead = true;
		return;
	}
	(void)p;
	/* Bytes are relayed as they come: Nagle would hold a small write back
	 * for the peer's delayed ACK (40 ms per answer). */
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(c->client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->upstream = fd;
	c->state = PORT_RELAYING;
	c->flow = PORT_FLOW_HEAD;
	c->last_activity_ms = c->state_since_ms = clock_monotonic_ms();
	port_conn_forward(c);
}

/* Connections through a port taken back or a session gone: closed. */
static void check_routes(struct port_proxy *p)
{
	for (struct port_conn *c = p->conns; c; c = c->next) {
		if (c->dead || (c->state != PORT_DIALING && c->state != PORT_RELAYING))
			continue;
		struct bridge_session *s = bridge_registry_acquire(p->options->registry,
								   c->route.session, NULL);
		bool open = s && bridge_session_port_exposed(s, c->route.port);
		bridge_registry_release(p->options->registry, s);
		if (!open) {
			c->dead = true;
			c->why_dead = NULL;
		}
	}
}

static int64_t deadline_of(const struct port_proxy *p, const struct port_conn *c)
{
	switch (c->state) {
	case PORT_PEEKING:
		/* The whole head in that time, however slowly it trickles. */
		return c->state_since_ms + p->head_timeout_ms;
	case PORT_DIALING:
		return c->state_since_ms + PORT_PROXY_DIAL_TIMEOUT_MS;
	case PORT_ANSWERING:
		return c->state_since_ms + ANSWER_FLUSH_MS;
	case PORT_RELAYING:
		return c->last_activity_ms + (c->upgraded ? p->upgraded_idle_ms : p->idle_ms);
	}
	return c->last_activity_ms;
}

static void expire(struct port_proxy *p, struct port_conn *c, int64_t now)
{
	if (now < deadline_of(p, c))
		return;
	if (c->state == PORT_DIALING && c->redial) {
		c->redial = false;
		answer(c, 503, "the sandbox's init took no request in time (stopped, or busy)",
		       c->answer_html);
	} else if (c->state == PORT_DIALING)
		answer(c, 504, "the sandbox did not open the connection in time", false);
	else
		c->dead = true;
}

/* What each descriptor of a connection waits for. */
static void interest(const struct port_conn *c, short events[3])
{
	events[0] = events[1] = events[2] = 0;
	bool reading = (c->state == PORT_PEEKING || c->state == PORT_RELAYING) && !c->client_eof;
	if (c->state == PORT_ANSWERING && c->client_shut)
		events[0] |= POLLIN; /* drained and dropped */
	if (reading && c->in.cap - port_buffer_len(&c->in) > 0)
		events[0] |= POLLIN;
	if (reading && c->state == PORT_PEEKING)
		events[0] |= POLLRDHUP; /* SO_RCVLOWAT hides a FIN from POLLIN */
	if (c->down.data && port_buffer_len(&c->down) > 0)
		events[0] |= POLLOUT;
	if (c->upstream >= 0) {
		if (!c->upstream_eof && c->down.cap - port_buffer_len(&c->down) > 0)
			events[1] |= POLLIN;
		if (port_buffer_len(&c->up) > 0)
			events[1] |= POLLOUT;
	}
	if (c->pending >= 0)
		events[2] |= POLLIN;
}

/* After bytes moved: half-closes and ends. */
static void settle(struct port_conn *c)
{
	if (c->state == PORT_ANSWERING && port_buffer_len(&c->down) == 0 && !c->client_shut) {
		/* Closing with what the client still sends unread would reset
		 * the connection, and the client could lose our answer: say we
		 * are done and read until it is too (or ANSWER_FLUSH_MS). */
		shutdown(c->client, SHUT_WR);
		c->client_shut = true;
		return;
	}
	if (c->state != PORT_RELAYING)
		return;
	if (c->upstream_eof && port_buffer_len(&c->down) == 0) {
		if (c->flow == PORT_FLOW_REFUSED)
			answer(c, c->refused_status, c->refused_message, c->refused_html);
		else
			c->dead = true;
		return;
	}
	if (c->flow == PORT_FLOW_REFUSED && !c->upstream_shut && port_buffer_len(&c->up) == 0) {
		/* The service finishes what it was asked, then sees the end. */
		shutdown(c->upstream, SHUT_WR);
		c->upstream_shut = true;
	}
	if (c->flow == PORT_FLOW_CLOSING && !c->upstream_shut) {
		/* The declined upgrade's answer is the last. */
		shutdown(c->upstream, SHUT_WR);
		c->upstream_shut = true;
	}
	if (c->client_eof && !c->upstream_shut && port_buffer_len(&c->up) == 0) {
		shutdown(c->upstream, SHUT_WR);
		c->upstream_shut = true;
	}
}

static void service(struct port_proxy *p, struct port_conn *c, const short revents[3], int64_t now)
{
	bool eof;
	if (revents[2])
		dialled(p, c);
	if ((revents[0] & (POLLIN | POLLHUP | POLLERR | POLLRDHUP)) && c->state == PORT_PEEKING) {
		peek_read(c);
		if (revents[0] & (POLLRDHUP | POLLHUP | POLLERR))
			c->client_eof = true;
		c->last_activity_ms = now;
	} else if ((revents[0] & (POLLIN | POLLHUP | POLLERR)) && c->state == PORT_ANSWERING) {
		char scratch[16384];
		ssize_t n = read(c->client, scratch, sizeof(scratch));
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			c->dead = true;
	} else if (revents[0] & (POLLIN | POLLHUP | POLLERR)) {
		if (!port_conn_read(c->client, &c->in, &eof)) {
			c->client_eof = true;
			if (!eof)
				c->dead = true;
		}
		c->last_activity_ms = now;
	}
	if (revents[1] & (POLLIN | POLLHUP | POLLERR)) {
		if (!port_conn_read_answer(c, &eof)) {
			c->upstream_eof = true;
			if (!eof)
				c->dead = true;
		}
		/* A service that writes its head and its body apart (Python's
		 * http.server) waits, under Nagle, for our ACK of the first
		 * before it sends the second: ACK at once, not 40 ms later. */
		int one = 1;
		setsockopt(c->upstream, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof(one));
		c->last_activity_ms = now;
	}
	if (c->state == PORT_PEEKING && !c->dead)
		peek(p, c);
	if (c->state == PORT_RELAYING && !c->dead)
		port_conn_forward(c);
	if ((revents[0] & POLLOUT) && !port_conn_write(c->client, &c->down))
		c->dead = true;
	if ((revents[1] & POLLOUT) && !c->dead && !port_conn_write(c->upstream, &c->up))
		c->dead = true;
	if (revents[0] & POLLOUT || revents[1] & POLLOUT)
		c->last_activity_ms = now;
	/* Room made upstream: more of what the client sent can go. */
	if (c->state == PORT_RELAYING && !c->dead)
		port_conn_forward(c);
	if (!c->dead)
		settle(c);
}

static void reap(struct port_proxy *p)
{
	for (struct port_conn **link = &p->conns; *link;) {
		struct port_conn *c = *link;
		if (!c->dead) {
			link = &c->next;
			continue;
		}
		if (c->why_dead)
			log_info("port proxy: closing a connection to %s: %s",
				 c->route.session[0] ? c->route.session : "a port", c->why_dead);
		*link = c->next;
		if (c->unauthorized)
			uncount_unauthorized(p, &c->address);
		/* A handoff stays held until lws has it (port_proxy_handed_over),
		 * so that the daemon's cap never sees it twice or not at all. */
		if (!c->handed_off)
			atomic_fetch_sub(&p->held, 1);
		port_conn_destroy(c);
	}
}

static void *run(void *arg)
{
	struct port_proxy *p = arg;
	size_t capacity = 0;
	struct pollfd *fds = NULL;
	while (!atomic_load(&p->stopping)) {
		int64_t now = clock_monotonic_ms();
		accept_incoming(p, now);
		if (atomic_exchange(&p->routes_changed, false))
			check_routes(p);
		reap(p);
		size_t count = 1;
		for (struct port_conn *c = p->conns; c; c = c->next)
			count += 3;
		if (count > capacity) {
			struct pollfd *grown = realloc(fds, count * sizeof(*fds));
			if (grown)
				fds = grown;
			if (!grown) {
				log_warn("port proxy: out of memory");
				struct timespec pause = { 0, 100 * 1000000L };
				nanosleep(&pause, NULL);
				continue;
			}
			capacity = count;
		}
		fds[0] = (struct pollfd){ .fd = p->wake_fd, .events = POLLIN };
		size_t n = 1;
		int64_t next_deadline = now + 1000;
		for (struct port_conn *c = p->conns; c; c = c->next) {
			bool waiting = c->redial && c->state == PORT_DIALING && !c->dead;
			if (waiting)
				redial(p, c);
			if (waiting && c->redial && now + REDIAL_MS < next_deadline)
				next_deadline = now + REDIAL_MS;
			short events[3];
			interest(c, events);
			/* Only descriptors that exist: poll refuses more entries
			 * than the descriptor limit. */
			int fd_of[3] = { c->client, c->upstream, c->pending };
			for (int k = 0; k < 3; k++) {
				c->poll_at[k] = fd_of[k] >= 0 ? (int)n : -1;
				if (fd_of[k] >= 0)
					fds[n++] = (struct pollfd){ .fd = fd_of[k],
								    .events = events[k] };
			}
			int64_t deadline = deadline_of(p, c);
			if (deadline < next_deadline)
				next_deadline = deadline;
		}
		int timeout = next_deadline > now ? (int)(next_deadline - now) : 0;
		if (poll(fds, (nfds_t)n, timeout) < 0 && errno != EINTR) {
			log_warn("port proxy: poll: %s", strerror(errno));
			struct timespec pause = { 0, 100 * 1000000L };
			nanosleep(&pause, NULL);
			continue;
		}
		if (fds[0].revents) {
			uint64_t value;
			if (read(p->wake_fd, &value, sizeof(value)) < 0)
				log_debug("port proxy: cannot read its wake-up");
		}
		now = clock_monotonic_ms();
		for (struct port_conn *c = p->conns; c; c = c->next) {
			short revents[3] = { 0, 0, 0 };
			for (int k = 0; k < 3; k++)
				if (c->poll_at[k] >= 0)
					revents[k] = fds[c->poll_at[k]].revents;
			if (!c->dead && (revents[0] || revents[1] || revents[2]))
				service(p, c, revents, now);
			if (!c->dead)
				expire(p, c, now);
		}
	}
	free(fds);
	return NULL;
}

struct port_proxy *port_proxy_start(struct bridge_server *server)
{
	struct port_proxy *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	const struct bridge_server_options *o = server->options;
	p->server = server;
	p->options = o;
	p->head_timeout_ms = (o->request_timeout_s > 0 ? o->request_timeout_s
						       : BRIDGE_SERVER_REQUEST_TIMEOUT_S) *
			     1000;
	p->idle_ms = (o->port_idle_timeout_s > 0 ? o->port_idle_timeout_s : PORT_PROXY_IDLE_S) *
		     1000;
	p->upgraded_idle_ms = (o->port_upgraded_idle_timeout_s > 0 ? o->port_upgraded_idle_timeout_s
								   : PORT_PROXY_UPGRADED_IDLE_S) *
			      1000;
	if (p->upgraded_idle_ms < p->idle_ms)
		p->upgraded_idle_ms = p->idle_ms;
	p->max_per_session = o->port_max_session_connections > 0
				     ? o->port_max_session_connections
				     : PORT_PROXY_MAX_SESSION_CONNECTIONS;
	pthread_mutex_init(&p->lock, NULL);
	p->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (p->wake_fd < 0 || pthread_create(&p->thread, NULL, run, p) != 0) {
		log_error("cannot start the port proxy: %s", strerror(errno));
		if (p->wake_fd >= 0)
			close(p->wake_fd);
		pthread_mutex_destroy(&p->lock);
		free(p);
		return NULL;
	}
	bridge_session_set_port_watch(on_ports_changed, p);
	return p;
}

void port_proxy_stop(struct port_proxy *p)
{
	if (!p)
		return;
	bridge_session_set_port_watch(NULL, NULL);
	atomic_store(&p->stopping, true);
	wake(p);
	pthread_join(p->thread, NULL);
	accept_incoming(p, 0);
	while (p->conns) {
		struct port_conn *next = p->conns->next;
		port_conn_destroy(p->conns);
		p->conns = next;
	}
	for (struct port_handoff *h; (h = port_proxy_next_handoff(p));) {
		close(h->fd);
		free(h);
	}
	close(p->wake_fd);
	pthread_mutex_destroy(&p->lock);
	free(p->unauthorized);
	free(p);
}
