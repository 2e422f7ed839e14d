/* SPDX-License-Identifier: MIT */
/* What the server is started with, and its fixed bounds: types only, for
 * main and every file of the server. */
#ifndef LIZARD_BRIDGE_SERVER_OPTIONS_H
#define LIZARD_BRIDGE_SERVER_OPTIONS_H

#include <stddef.h>

struct bridge_metrics;
struct bridge_registry;
struct bridge_trusted_proxy;
struct mcp_server;

struct bridge_server_options {
	const char *listen;  /* "ADDR:PORT", "[v6]:PORT" or a UNIX socket path */
	const char *api_key; /* required on /mcp */
	/* NULL: viewers only (the stdio bridge's --viewer): no /mcp, no
	 * /metrics, MCP is the stdio channel. */
	struct mcp_server *mcp;
	struct bridge_registry *registry; /* the sessions viewers and metrics see */
	struct bridge_metrics *metrics;
	size_t max_message; /* HTTP body / WebSocket message limit */
	int stop_fd;        /* readable: shut down */
	int ready_fd;       /* when > 0, a byte is written to it once listening */

	/* Host header names accepted besides localhost and IP literals
	 * (--allowed-host): the DNS rebinding guard. */
	const char *const *allowed_hosts;
	size_t allowed_host_count;
	/* Caps; 0 for the defaults. The total is kept under half the
	 * descriptor limit and half of FD_SETSIZE whatever is asked. */
	int max_connections;
	int max_peer_connections;
	int request_timeout_s; /* one HTTP request, headers to last body byte */
	/* Peers whose X-Forwarded-For names the client (--trusted-proxy):
	 * their connections count for that client, not for them. */
	const struct bridge_trusted_proxy *trusted_proxies;
	size_t trusted_proxy_count;
	/* --public-host NAME[:PORT]: exposed ports are <port>-<session>.NAME;
	 * NULL: <port>-<session>.localhost. */
	const char *public_host;
	/* Exposed ports (port_proxy.h); 0 for the defaults. */
	int port_idle_timeout_s;          /* a connection without a byte either way */
	int port_upgraded_idle_timeout_s; /* the same once upgraded (a WebSocket) */
	int port_max_session_connections; /* open to one session's ports at once */
};

#define BRIDGE_SERVER_MAX_CONNECTIONS 512
#define BRIDGE_SERVER_MAX_PEER_CONNECTIONS 64
#define BRIDGE_SERVER_REQUEST_TIMEOUT_S 30
/* A viewer socket that has not sent a valid link by then is closed. */
#define BRIDGE_SERVER_VIEWER_JOIN_MS 5000
/* Replies waiting for one WebSocket client that does not read. */
#define BRIDGE_SERVER_MAX_QUEUED_BYTES (64u << 20)

#endif
