/* SPDX-License-Identifier: MIT */
/* Which exposed port a request is for: the Host <port>-<session>.<name>
 * (name: "localhost", or --public-host's name; the Host's own port is not
 * looked at), or, for clients that cannot resolve such a name, the
 * X-Lizard-Session and X-Lizard-Port headers. Pure code. */
#ifndef LIZARD_BRIDGE_PORT_ROUTE_H
#define LIZARD_BRIDGE_PORT_ROUTE_H

#include "bridge/server/port_head.h"

#include <stdbool.h>
#include <stddef.h>

struct port_route {
	int port;
	char session[64];
	bool by_headers; /* named by the headers, not the Host */
};

/* public_host: --public-host NAME[:PORT], or NULL for localhost. False
 * when the request is not for an exposed port at all (it is the daemon's
 * own: /mcp, a viewer, /metrics). Routing headers that name no valid
 * session and port give true with port 0. */
bool port_route_find(const struct port_request *request, const char *public_host,
		     struct port_route *route);
/* The same from a Host value alone. */
bool port_route_from_host(struct port_span host, const char *public_host, struct port_route *route);

#endif
