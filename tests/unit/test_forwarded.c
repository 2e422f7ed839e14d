/* SPDX-License-Identifier: MIT */
/* The client behind trusted proxies: --trusted-proxy values, and which
 * X-Forwarded-For entry names the client whatever a client forges. */
#include "bridge/server/forwarded.h"
#include "test.h"

#include <arpa/inet.h>

static struct bridge_address address(const char *text)
{
	struct bridge_address a = { 0 };
	if (!bridge_address_parse(text, strlen(text), &a))
		fprintf(stderr, "test address '%s' does not parse\n", text);
	return a;
}

/* The client for header, as text ("" when none, "malformed", "empty"). */
static const char *client_of(const char *header, const struct bridge_trusted_proxy *proxies,
			     size_t count)
{
	static char text[INET6_ADDRSTRLEN];
	struct bridge_address client = { 0 };
	switch (bridge_forwarded_client(header, strlen(header), proxies, count, &client)) {
	case BRIDGE_FORWARDED_MALFORMED:
		return "malformed";
	case BRIDGE_FORWARDED_EMPTY:
		return "empty";
	case BRIDGE_FORWARDED_CLIENT:
		break;
	}
	inet_ntop(client.family, client.bytes, text, sizeof(text));
	return text;
}

static void trusted_proxy_values(void)
{
	struct bridge_trusted_proxy p;
	ASSERT(bridge_trusted_proxy_parse("127.0.0.1", &p));
	ASSERT_EQ(p.prefix, 32);
	ASSERT(bridge_trusted_proxy_parse("::1", &p));
	ASSERT_EQ(p.prefix, 128);
	ASSERT_EQ(p.network.family, AF_INET6);
	/* Host bits past the prefix do not matter. */
	ASSERT(bridge_trusted_proxy_parse("10.1.2.3/8", &p));
	ASSERT_EQ(p.prefix, 8);
	struct bridge_address ten = address("10.0.0.0");
	ASSERT(bridge_address_equal(&p.network, &ten));
	ASSERT(bridge_trusted_proxy_parse("fd00::/8", &p));
	ASSERT(bridge_trusted_proxy_parse("0.0.0.0/0", &p));
	/* An IPv4-mapped IPv6 address is the IPv4 one. */
	ASSERT(bridge_trusted_proxy_parse("::ffff:127.0.0.2", &p));
	ASSERT_EQ(p.network.family, AF_INET);
	ASSERT_EQ(p.prefix, 32);
	const char *bad[] = { "",        "localhost", "127.0.0.1:80", "[::1]",       "10.0.0.0/33",
			      "::/129",  "10.0.0.0/", "10.0.0.0/-1",  "10.0.0.0/8x", "1.2.3",
			      "1.2.3.4 " };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (bridge_trusted_proxy_parse(bad[i], &p))
			FAIL_AT("'%s' was taken as a trusted proxy", bad[i]);
}

static void networks_match_their_addresses_only(void)
{
	struct bridge_trusted_proxy proxies[2];
	ASSERT(bridge_trusted_proxy_parse("10.20.0.0/16", &proxies[0]));
	ASSERT(bridge_trusted_proxy_parse("fd00:1::/32", &proxies[1]));
	struct bridge_address in = address("10.20.255.1"), out = address("10.21.0.1"),
			      v6_in = address("fd00:1:ffff::5"), v6_out = address("fd00:2::5"),
			      mapped = address("::ffff:10.20.3.4");
	ASSERT(bridge_trusted_proxy_match(proxies, 2, &in));
	ASSERT(!bridge_trusted_proxy_match(proxies, 2, &out));
	ASSERT(bridge_trusted_proxy_match(proxies, 2, &v6_in));
	ASSERT(!bridge_trusted_proxy_match(proxies, 2, &v6_out));
	ASSERT(bridge_trusted_proxy_match(proxies, 2, &mapped));
	ASSERT(!bridge_trusted_proxy_match(proxies, 0, &in));
}

static void the_rightmost_untrusted_entry_is_the_client(void)
{
	struct bridge_trusted_proxy proxies[2];
	ASSERT(bridge_trusted_proxy_parse("127.0.0.2", &proxies[0]));
	ASSERT(bridge_trusted_proxy_parse("10.0.0.0/8", &proxies[1]));
	ASSERT_STR_EQ(client_of("203.0.113.9", proxies, 2), "203.0.113.9");
	/* What the client wrote itself, left of its real address, is ignored,
	 * even when it is garbage. */
	ASSERT_STR_EQ(client_of("1.1.1.1, 203.0.113.9", proxies, 2), "203.0.113.9");
	ASSERT_STR_EQ(client_of("not an address,203.0.113.9", proxies, 2), "203.0.113.9");
	/* Hops through our own proxies are skipped. */
	ASSERT_STR_EQ(client_of("198.51.100.1, 203.0.113.9, 10.1.1.1, 127.0.0.2", proxies, 2),
		      "203.0.113.9");
	ASSERT_STR_EQ(client_of("2001:db8::7,\t::ffff:10.3.3.3", proxies, 2), "2001:db8::7");
	/* Only our proxies: the leftmost is the client. */
	ASSERT_STR_EQ(client_of("10.9.9.9, 127.0.0.2", proxies, 2), "10.9.9.9");
	/* Empty list elements are allowed and skipped. */
	ASSERT_STR_EQ(client_of(" , 203.0.113.9 ,, ", proxies, 2), "203.0.113.9");
	ASSERT_STR_EQ(client_of(" , ,", proxies, 2), "empty");
	ASSERT_STR_EQ(client_of("", proxies, 2), "empty");
}

static void garbage_where_the_client_should_be_is_malformed(void)
{
	struct bridge_trusted_proxy proxy;
	ASSERT(bridge_trusted_proxy_parse("127.0.0.2", &proxy));
	const char *bad[] = {
		"unknown",
		"203.0.113.9:4711",
		"[2001:db8::7]",
		"203.0.113.9, 127.0.0.2 x",
		"1.1.1.1, evil.example",
		"203.0.113.9 203.0.113.8",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (strcmp(client_of(bad[i], &proxy, 1), "malformed") != 0)
			FAIL_AT("'%s' gave client %s", bad[i], client_of(bad[i], &proxy, 1));
}

int main(void)
{
	RUN_TEST(trusted_proxy_values);
	RUN_TEST(networks_match_their_addresses_only);
	RUN_TEST(the_rightmost_untrusted_entry_is_the_client);
	RUN_TEST(garbage_where_the_client_should_be_is_malformed);
	return test_failures ? 1 : 0;
}
