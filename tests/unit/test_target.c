/* SPDX-License-Identifier: MIT */
#include "test.h"

#include "vnc/target.h"

static void parses_host_and_default_port(void)
{
	struct vnc_target t;
	struct error err;
	ASSERT(vnc_target_parse("vnc://example.org", &t, &err));
	ASSERT_STR_EQ(t.host, "example.org");
	ASSERT_EQ(t.port, 5900);
	ASSERT(!t.is_unix);
	ASSERT(t.password == NULL);
	vnc_target_finish(&t);
}

static void parses_password_port_and_ipv6(void)
{
	struct vnc_target t;
	struct error err;
	ASSERT(vnc_target_parse("vnc://:p%40ss@[::1]:5901", &t, &err));
	ASSERT_STR_EQ(t.host, "::1");
	ASSERT_EQ(t.port, 5901);
	ASSERT_STR_EQ(t.password, "p@ss");
	char where[64];
	vnc_target_describe(&t, where, sizeof(where));
	ASSERT_STR_EQ(where, "[::1]:5901");
	vnc_target_finish(&t);
}

static void parses_unix_sockets(void)
{
	struct vnc_target t;
	struct error err;
	ASSERT(vnc_target_parse("unix:///run/vnc.sock", &t, &err));
	ASSERT(t.is_unix);
	ASSERT_STR_EQ(t.host, "/run/vnc.sock");
	vnc_target_finish(&t);
}

static void refuses_malformed_urls_with_a_reason(void)
{
	struct vnc_target t;
	struct error err;
	ASSERT(!vnc_target_parse("http://x", &t, &err));
	ASSERT_CONTAINS(err.message, "unsupported VNC URL scheme");
	ASSERT(!vnc_target_parse("vnc://host:0", &t, &err));
	ASSERT_CONTAINS(err.message, "1 to 65535");
	ASSERT(!vnc_target_parse("vnc://host:59a", &t, &err));
	ASSERT_CONTAINS(err.message, "1 to 65535");
	ASSERT(!vnc_target_parse("vnc://user:pw@host", &t, &err));
	ASSERT_CONTAINS(err.message, "password only");
	ASSERT(!vnc_target_parse("vnc://:pw@", &t, &err));
	ASSERT_CONTAINS(err.message, "no host");
	ASSERT(!vnc_target_parse("unix://relative/path", &t, &err));
	ASSERT_CONTAINS(err.message, "absolute socket path");
}

static void description_never_shows_the_password(void)
{
	struct vnc_target t;
	char where[64];
	struct error err;
	ASSERT(vnc_target_parse("vnc://:topsecret@host:5999", &t, &err));
	vnc_target_describe(&t, where, sizeof(where));
	ASSERT_STR_EQ(where, "host:5999");
	vnc_target_finish(&t);
}

int main(void)
{
	RUN_TEST(parses_host_and_default_port);
	RUN_TEST(parses_password_port_and_ipv6);
	RUN_TEST(parses_unix_sockets);
	RUN_TEST(refuses_malformed_urls_with_a_reason);
	RUN_TEST(description_never_shows_the_password);
	TEST_EXIT();
}
