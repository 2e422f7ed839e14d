/* SPDX-License-Identifier: MIT */
/* Who a request is from when it comes through a reverse proxy: the
 * trusted proxies named with --trusted-proxy (an address or a network), and
 * the client an X-Forwarded-For header names. Each proxy appends the
 * address it got the request from, so only the right end of the list is
 * written by proxies we trust; everything left of it came from the client
 * and may be forged. The client is therefore the rightmost entry that is
 * not itself a trusted proxy (nginx's real_ip_recursive, Express's trust
 * proxy), and nothing left of it is even parsed. Pure code without
 * libwebsockets, so the unit tests drive it directly. */
#ifndef LIZARD_BRIDGE_FORWARDED_H
#define LIZARD_BRIDGE_FORWARDED_H

#include <stdbool.h>
#include <stddef.h>

/* An IPv4 or IPv6 address; IPv4-mapped IPv6 addresses are kept as IPv4,
 * so a dual-stack socket and a plain one name a client alike. family 0:
 * no address (a UNIX socket, or not known yet). */
struct bridge_address {
	int family; /* AF_INET, AF_INET6 or 0 */
	unsigned char bytes[16];
};

/* One --trusted-proxy: an address (prefix 32 or 128) or a network. */
struct bridge_trusted_proxy {
	struct bridge_address network; /* bits past prefix are zero */
	int prefix;
};

/* The longest X-Forwarded-For looked at: about 25 IPv6 hops. */
#define BRIDGE_FORWARDED_MAX 1024

bool bridge_address_equal(const struct bridge_address *a, const struct bridge_address *b);
/* An address literal of len bytes ("10.0.0.5", "::1", no brackets or port). */
bool bridge_address_parse(const char *text, size_t len, struct bridge_address *out);

/* "ADDR" or "ADDR/PREFIX" (e.g. "127.0.0.1", "::1", "10.0.0.0/8"). Host bits
 * past the prefix are cleared. */
bool bridge_trusted_proxy_parse(const char *text, struct bridge_trusted_proxy *out);
bool bridge_trusted_proxy_match(const struct bridge_trusted_proxy *proxies, size_t count,
				const struct bridge_address *address);

enum bridge_forwarded {
	BRIDGE_FORWARDED_CLIENT,    /* *client is set */
	BRIDGE_FORWARDED_MALFORMED, /* an entry we had to read is not an address */
	BRIDGE_FORWARDED_EMPTY,     /* only commas and spaces */
};

/* The client an X-Forwarded-For value of len bytes names, given the
 * trusted proxies: the rightmost entry that is not one of them, or the
 * leftmost entry when all are (a chain of our own proxies). Empty list
 * elements are skipped, as HTTP lists allow. */
enum bridge_forwarded bridge_forwarded_client(const char *header, size_t len,
					      const struct bridge_trusted_proxy *proxies,
					      size_t count, struct bridge_address *client);

#endif
