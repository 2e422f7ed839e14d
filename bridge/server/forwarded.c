/* SPDX-License-Identifier: MIT */
#include "bridge/server/forwarded.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

/* Longer than any address literal ("ffff:...:255.255.255.255" is 45). */
#define LITERAL_MAX 64

bool bridge_address_equal(const struct bridge_address *a, const struct bridge_address *b)
{
	return a->family == b->family && memcmp(a->bytes, b->bytes, sizeof(a->bytes)) == 0;
}

bool bridge_address_parse(const char *text, size_t len, struct bridge_address *out)
{
	char literal[LITERAL_MAX];
	if (len == 0 || len >= sizeof(literal))
		return false;
	memcpy(literal, text, len);
	literal[len] = '\0';
	memset(out, 0, sizeof(*out));
	if (inet_pton(AF_INET, literal, out->bytes) == 1) {
		out->family = AF_INET;
		return true;
	}
	struct in6_addr v6;
	if (inet_pton(AF_INET6, literal, &v6) != 1)
		return false;
	if (IN6_IS_ADDR_V4MAPPED(&v6)) {
		out->family = AF_INET;
		memcpy(out->bytes, v6.s6_addr + 12, 4);
	} else {
		out->family = AF_INET6;
		memcpy(out->bytes, v6.s6_addr, 16);
	}
	return true;
}

static int address_bits(const struct bridge_address *a)
{
	return a->family == AF_INET ? 32 : 128;
}

/* Clears every bit of a past the first prefix bits. */
static void keep_prefix(struct bridge_address *a, int prefix)
{
	for (int bit = prefix; bit < address_bits(a); bit++)
		a->bytes[bit / 8] &= (unsigned char)~(0x80u >> (bit % 8));
}

bool bridge_trusted_proxy_parse(const char *text, struct bridge_trusted_proxy *out)
{
	const char *slash = strchr(text, '/');
	size_t len = slash ? (size_t)(slash - text) : strlen(text);
	if (!bridge_address_parse(text, len, &out->network))
		return false;
	out->prefix = address_bits(&out->network);
	if (slash) {
		char *end;
		long prefix = strtol(slash + 1, &end, 10);
		if (end == slash + 1 || *end || prefix < 0 || prefix > out->prefix)
			return false;
		out->prefix = (int)prefix;
	}
	keep_prefix(&out->network, out->prefix);
	return true;
}

bool bridge_trusted_proxy_match(const struct bridge_trusted_proxy *proxies, size_t count,
				const struct bridge_address *address)
{
	for (size_t i = 0; i < count; i++) {
		if (proxies[i].network.family != address->family)
			continue;
		struct bridge_address masked = *address;
		keep_prefix(&masked, proxies[i].prefix);
		if (bridge_address_equal(&masked, &proxies[i].network))
			return true;
	}
	return false;
}

static bool optional_whitespace(char c)
{
	return c == ' ' || c == '\t';
}

enum bridge_forwarded bridge_forwarded_client(const char *header, size_t len,
					      const struct bridge_trusted_proxy *proxies,
					      size_t count, struct bridge_address *client)
{
	bool found = false;
	size_t end = len;
	/* From the right: each entry is [start, stop) once trimmed. */
	while (end > 0) {
		size_t start = end;
		while (start > 0 && header[start - 1] != ',')
			start--;
		size_t stop = end;
		size_t next = start > 0 ? start - 1 : 0;
		while (start < stop && optional_whitespace(header[start]))
			start++;
		while (stop > start && optional_whitespace(header[stop - 1]))
			stop--;
		if (stop > start) {
			struct bridge_address entry;
			if (!bridge_address_parse(header + start, stop - start, &entry))
				return BRIDGE_FORWARDED_MALFORMED;
			*client = entry;
			found = true;
			if (!bridge_trusted_proxy_match(proxies, count, &entry))
				return BRIDGE_FORWARDED_CLIENT;
		}
		end = next;
	}
	/* Every entry was one of our proxies: the leftmost is the closest we
	 * know to the client. */
	return found ? BRIDGE_FORWARDED_CLIENT : BRIDGE_FORWARDED_EMPTY;
}
