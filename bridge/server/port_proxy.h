/* SPDX-License-Identifier: MIT */
/* The port proxy: requests for <port>-<session>.localhost go to a service
 * inside that session's sandbox, and never to /mcp, a viewer or /metrics.
 *
 * Debian's libwebsockets 4.1 has no HTTP proxy, and a proxy must see each
 * request head as the client sent it, headers lws does not know included.
 * So the relay never goes through lws's HTTP parser: every accepted
 * connection is taken from lws as it is accepted (port_front.c), before a
 * byte is read; this thread peeks at the first request head (MSG_PEEK,
 * bounded in size and time, woken by SO_RCVLOWAT only when more came) and
 * either keeps the connection, when the Host names an exposed port, or
 * hands it back to lws untouched (lws_adopt_socket_vhost), which serves it
 * as if it had accepted it itself. (lws 4.1's adopt with a read buffer
 * loops on a POST whose body comes later, so nothing is read before the
 * choice.) A kept connection is checked (session, port, access token),
 * then a connection is dialled inside the session's network namespace
 * (session/ports.h, sandbox/port.h) and the two are relayed by
 * port_conn.c on this thread's own poll loop, so a slow service or client
 * never holds up the daemon's loop.
 *
 * Bounds: connections in total (shared with the daemon's cap), per
 * session, head size and time, idle time (10 minutes after an Upgrade),
 * fixed buffers per connection. When a session ends or a port is taken
 * back, every connection through it closes at once. */
#ifndef LIZARD_BRIDGE_PORT_PROXY_H
#define LIZARD_BRIDGE_PORT_PROXY_H

#include "bridge/server/forwarded.h"

#include <stdbool.h>
#include <stddef.h>

struct bridge_server;
struct port_proxy;

#define PORT_PROXY_MAX_SESSION_CONNECTIONS 256
#define PORT_PROXY_IDLE_S 120
#define PORT_PROXY_UPGRADED_IDLE_S 600
#define PORT_PROXY_DIAL_TIMEOUT_MS 10000

/* Starts the proxy's thread; NULL (logged) when it cannot. */
struct port_proxy *port_proxy_start(struct bridge_server *server);
/* Stops the thread and closes every connection it holds. NULL is fine. */
void port_proxy_stop(struct port_proxy *proxy);

/* The service thread: a freshly accepted connection from peer (the proxy
 * takes fd, and closes it when it cannot). */
void port_proxy_take(struct port_proxy *proxy, int fd, const struct bridge_address *peer);
/* Connections the proxy holds now, for the daemon's total cap. */
int port_proxy_held(struct port_proxy *proxy);
/* Of those, the ones from peer that are not authorized for a port yet
 * (still being read, or on their way back to lws): they count for the
 * per-address cap as lws's own connections do. */
int port_proxy_unauthorized_from(struct port_proxy *proxy, const struct bridge_address *peer);
/* The service thread, once lws adopted a handoff: it counts as lws's. */
void port_proxy_handed_over(struct port_proxy *proxy, const struct bridge_address *peer);

/* A connection that is not for a port, going back to lws. */
struct port_handoff {
	int fd;
	struct bridge_address peer;
	struct port_handoff *next;
};
/* The service thread: the next one, or NULL; the caller frees it and owns
 * fd. */
struct port_handoff *port_proxy_next_handoff(struct port_proxy *proxy);

#endif
