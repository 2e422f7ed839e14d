/* SPDX-License-Identifier: MIT */
/* What the server and the tools share: types only. main fills them before
 * either starts, and nothing writes them later. */
#ifndef LIZARD_BRIDGE_CONTEXT_H
#define LIZARD_BRIDGE_CONTEXT_H

#include <stddef.h>

/* How start_stream's links reach the server's viewers. */
struct bridge_viewer_links {
	char base_url[192];   /* "http://127.0.0.1:7070"; "" without a server (stdio) */
	size_t headroom;      /* bytes each viewer message keeps free before its data */
	void (*wake)(void *); /* any thread: a session's viewers have news */
	void *wake_context;
	/* expose_port's host names end in this: "localhost" and the daemon's
	 * port (from base_url), or --public-host NAME[:PORT] as given. */
	char port_host_suffix[160];
};

/* How a request to an exposed port names its session's access token
 * (bridge/server/port_*.c checks them, expose_port hands them out): a
 * header for scripts; once in the URL for browsers, which the proxy
 * turns into a cookie of the port's host name. Clients that cannot
 * resolve <port>-<session>.localhost name session and port in headers. */
#define BRIDGE_PORT_TOKEN_HEADER "X-Lizard-Access-Token"
#define BRIDGE_PORT_TOKEN_QUERY "lizard_access_token"
#define BRIDGE_PORT_TOKEN_COOKIE "lizard_access_token"
#define BRIDGE_PORT_SESSION_HEADER "X-Lizard-Session"
#define BRIDGE_PORT_PORT_HEADER "X-Lizard-Port"

#endif
