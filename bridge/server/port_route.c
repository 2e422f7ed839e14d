/* SPDX-License-Identifier: MIT */
/* Routing requests to exposed ports (see port_route.h). */
#include "bridge/server/port_route.h"

#include <string.h>
#include <strings.h>

static bool parse_port(const char *p, size_t len, int *port)
{
	if (len == 0 || len > 5 || p[0] == '0')
		return false;
	int n = 0;
	for (size_t i = 0; i < len; i++) {
		if (p[i] < '0' || p[i] > '9')
			return false;
		n = n * 10 + (p[i] - '0');
	}
	if (n < 1 || n > 65535)
		return false;
	*port = n;
	return true;
}

/* Session ids are lower-case letters, digits and '-' (registry.h); a
 * browser lower-cases host names anyway. */
static bool take_session(const char *p, size_t len, struct port_route *route)
{
	if (len == 0 || len >= sizeof(route->session))
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = p[i] >= 'A' && p[i] <= 'Z' ? (char)(p[i] - 'A' + 'a') : p[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'))
			return false;
		route->session[i] = c;
	}
	route->session[len] = '\0';
	return true;
}

bool port_route_from_host(struct port_span host, const char *public_host, struct port_route *route)
{
	memset(route, 0, sizeof(*route));
	const char *name = public_host ? public_host : "localhost";
	const char *name_colon = strchr(name, ':');
	size_t name_len = name_colon ? (size_t)(name_colon - name) : strlen(name);
	if (!host.ptr)
		return false;
	/* The Host's port is the daemon's (or the public proxy's): ignored. */
	size_t len = host.len;
	const char *colon = memchr(host.ptr, ':', host.len);
	if (colon)
		len = (size_t)(colon - host.ptr);
	if (len > 0 && host.ptr[len - 1] == '.')
		len--; /* "3000-s-1.localhost." is the same name */
	if (len <= name_len + 1 || host.ptr[len - name_len - 1] != '.' ||
	    strncasecmp(host.ptr + len - name_len, name, name_len) != 0)
		return false;
	size_t label_len = len - name_len - 1;
	const char *dash = memchr(host.ptr, '-', label_len);
	return dash && parse_port(host.ptr, (size_t)(dash - host.ptr), &route->port) &&
	       take_session(dash + 1, label_len - (size_t)(dash + 1 - host.ptr), route);
}

bool port_route_find(const struct port_request *r, const char *public_host,
		     struct port_route *route)
{
	if (port_route_from_host(r->host, public_host, route))
		return true;
	memset(route, 0, sizeof(*route));
	if (!r->session.ptr || !r->port.ptr)
		return false;
	/* Named in headers: ours, whether or not they make sense (port 0:
	 * they do not, and the answer says so). */
	route->by_headers = true;
	if (!parse_port(r->port.ptr, r->port.len, &route->port) ||
	    !take_session(r->session.ptr, r->session.len, route))
		route->port = 0;
	return true;
}
