/* SPDX-License-Identifier: MIT */
/* The port proxy's pure parts: which requests are for an exposed port,
 * request heads parsed strictly and rewritten without what is ours, body
 * framing that finds where a request ends, and the proxy's own answers. */
#include "bridge/server/port_body.h"
#include "bridge/server/port_head.h"
#include "bridge/server/port_reply.h"
#include "bridge/server/port_route.h"
#include "test.h"

static struct port_span span(const char *text)
{
	return (struct port_span){ text, strlen(text) };
}

static enum port_head_result parse(const char *head, struct port_request *r)
{
	const char *why;
	return port_head_parse(head, strlen(head), r, &why);
}

static void host_names_route_to_port_and_session(void)
{
	struct port_route route;
	ASSERT(port_route_from_host(span("3000-s-1a2b3c4d.localhost:7070"), NULL, &route));
	ASSERT_EQ(route.port, 3000);
	ASSERT_STR_EQ(route.session, "s-1a2b3c4d");
	ASSERT(port_route_from_host(span("8080-S-AB.LOCALHOST"), NULL, &route));
	ASSERT_STR_EQ(route.session, "s-ab");
	ASSERT(port_route_from_host(span("80-s-1.box.example.com"), "box.example.com:8443",
				    &route));
	ASSERT_EQ(route.port, 80);
	static const char *const not_ports[] = { "localhost:7070",      "127.0.0.1:7070",
						 "s-1.localhost",       "0-s-1.localhost",
						 "70000-s-1.localhost", "3000-.localhost",
						 "3000-s-1.localhostx", "3000-s-1.evil.example",
						 "x3000-s-1.localhost", "3000-s/1.localhost" };
	for (size_t i = 0; i < sizeof(not_ports) / sizeof(not_ports[0]); i++)
		if (port_route_from_host(span(not_ports[i]), NULL, &route))
			FAIL_AT("'%s' routed to port %d", not_ports[i], route.port);
}

static void routing_headers_name_port_and_session_for_clients_without_dns(void)
{
	struct port_request r;
	ASSERT_EQ(parse("GET / HTTP/1.1\r\nHost: 127.0.0.1:7070\r\nX-Lizard-Session: s-1\r\n"
			"X-Lizard-Port: 3000\r\n\r\n",
			&r),
		  PORT_HEAD_OK);
	struct port_route route;
	ASSERT(port_route_find(&r, NULL, &route));
	ASSERT(route.by_headers);
	ASSERT_EQ(route.port, 3000);
	ASSERT_EQ(parse("GET / HTTP/1.1\r\nHost: x\r\nX-Lizard-Session: s-1\r\n"
			"X-Lizard-Port: 99999\r\n\r\n",
			&r),
		  PORT_HEAD_OK);
	ASSERT(port_route_find(&r, NULL, &route));
	ASSERT_EQ(route.port, 0); /* ours, and answered 400 */
	ASSERT_EQ(parse("POST /mcp HTTP/1.1\r\nHost: localhost:7070\r\n\r\n", &r), PORT_HEAD_OK);
	ASSERT(!port_route_find(&r, NULL, &route));
}

static void the_token_comes_from_header_url_or_cookie(void)
{
	struct port_request r;
	ASSERT_EQ(parse("GET /a?x=1&lizard_access_token=TOK&y=2 HTTP/1.1\r\nHost: h\r\n\r\n", &r),
		  PORT_HEAD_OK);
	ASSERT(r.token_in_query);
	ASSERT_EQ(r.token.len, 3);
	ASSERT(memcmp(r.token.ptr, "TOK", 3) == 0);
	ASSERT_EQ(
		parse("GET / HTTP/1.1\r\nHost: h\r\nCookie: a=1; lizard_access_token=C; b=2\r\n\r\n",
		      &r),
		PORT_HEAD_OK);
	ASSERT(r.token_in_cookie);
	ASSERT_EQ(r.token.len, 1);
	ASSERT_EQ(parse("GET /?lizard_access_token=Q HTTP/1.1\r\nHost: h\r\nCookie: "
			"lizard_access_token=C\r\nX-Lizard-Access-Token: H\r\n\r\n",
			&r),
		  PORT_HEAD_OK);
	ASSERT(r.token_in_header);
	ASSERT_EQ(r.token.ptr[0], 'H');
}

static void heads_that_could_be_read_two_ways_are_refused(void)
{
	struct port_request r;
	static const char *const bad[] = {
		"GET / HTTP/1.1\nHost: h\n\n",
		"GET / HTTP/1.1\r\nHost: h\r\n folded\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
		"GET / HTTP/1.1\r\n\r\n",
		"GET /a b HTTP/1.1\r\nHost: h\r\n\r\n",
		"GET / HTTP/2.0\r\nHost: h\r\n\r\n",
		"GET / HTTP/1.1\r\nHo st: h\r\n\r\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (parse(bad[i], &r) != PORT_HEAD_BAD)
			FAIL_AT("head %zu was accepted", i);
	ASSERT_EQ(parse("GET / HTTP/1.1\r\nHost: h\r\n", &r), PORT_HEAD_INCOMPLETE);
	char big[PORT_HEAD_MAX + 10];
	memset(big, 'a', sizeof(big));
	memcpy(big, "GET / HTTP/1.1\r\nX: ", 19);
	const char *why;
	ASSERT_EQ(port_head_parse(big, sizeof(big), &r, &why), PORT_HEAD_TOO_LARGE);
}

static void the_rewrite_drops_token_cookie_and_routing_and_sets_forwarded(void)
{
	const char *head = "POST /p?lizard_access_token=T&k=v HTTP/1.1\r\n"
			   "Host: 3000-s-1.localhost:7070\r\n"
			   "X-Lizard-Access-Token: T\r\n"
			   "X-Lizard-Session: s-1\r\n"
			   "Cookie: lizard_access_token=T; theirs=1\r\n"
			   "X-Forwarded-For: 6.6.6.6\r\n"
			   "Content-Length: 3\r\n"
			   "Custom: kept\r\n\r\n";
	struct port_request r;
	ASSERT_EQ(parse(head, &r), PORT_HEAD_OK);
	ASSERT(r.has_length);
	ASSERT_EQ(r.content_length, 3);
	char out[PORT_HEAD_MAX + PORT_HEAD_GROWTH];
	size_t n = port_head_rewrite(head, &r, "127.0.0.1", false, out, sizeof(out));
	ASSERT_EQ(n, strlen(out));
	ASSERT_STR_EQ(out, "POST /p?k=v HTTP/1.1\r\n"
			   "Host: 3000-s-1.localhost:7070\r\n"
			   "Cookie: theirs=1\r\n"
			   "Content-Length: 3\r\n"
			   "Custom: kept\r\n"
			   "X-Forwarded-For: 127.0.0.1\r\n"
			   "X-Forwarded-Host: 3000-s-1.localhost:7070\r\n"
			   "X-Forwarded-Proto: http\r\n\r\n");
	const char *only = "GET /?lizard_access_token=T HTTP/1.1\r\nHost: h\r\nCookie: "
			   "lizard_access_token=T\r\n\r\n";
	ASSERT_EQ(parse(only, &r), PORT_HEAD_OK);
	port_head_rewrite(only, &r, "::1", false, out, sizeof(out));
	ASSERT(!strstr(out, "Cookie"));
	ASSERT(!strstr(out, "lizard_access_token"));
	ASSERT_CONTAINS(out, "GET / HTTP/1.1\r\n");
	/* From a trusted proxy the chain it sent is kept, and the proxy
	 * appended; from anyone else it is replaced. */
	ASSERT_EQ(parse(head, &r), PORT_HEAD_OK);
	port_head_rewrite(head, &r, "10.0.0.2", true, out, sizeof(out));
	ASSERT_CONTAINS(out, "X-Forwarded-For: 6.6.6.6, 10.0.0.2\r\n");
	ASSERT(!strstr(out, "X-Forwarded-For: 6.6.6.6\r\n"));
	/* https only when a trusted proxy (its TLS in front) says so. */
	const char *tls = "GET / HTTP/1.1\r\nHost: h\r\nX-Forwarded-Proto: https\r\n\r\n";
	ASSERT_EQ(parse(tls, &r), PORT_HEAD_OK);
	port_head_rewrite(tls, &r, "10.0.0.2", true, out, sizeof(out));
	ASSERT_CONTAINS(out, "X-Forwarded-Proto: https\r\n\r\n");
	ASSERT(!strstr(out, "X-Forwarded-Proto: http\r\n"));
	port_head_rewrite(tls, &r, "127.0.0.1", false, out, sizeof(out));
	ASSERT_CONTAINS(out, "X-Forwarded-Proto: http\r\n\r\n");
	ASSERT(!strstr(out, "https"));
	const char *odd = "GET / HTTP/1.1\r\nHost: h\r\nX-Forwarded-Proto: gopher\r\n\r\n";
	ASSERT_EQ(parse(odd, &r), PORT_HEAD_OK);
	port_head_rewrite(odd, &r, "10.0.0.2", true, out, sizeof(out));
	ASSERT_CONTAINS(out, "X-Forwarded-Proto: http\r\n\r\n");
}

static void bodies_end_where_their_framing_says(void)
{
	struct port_body body;
	port_body_start(&body, false, 5);
	ASSERT_EQ(port_body_advance(&body, "helloGET /", 10), 5);
	ASSERT_EQ(body.state, PORT_BODY_DONE);
	const char *chunked =
		"5;ext=1\r\nhello\r\n10\r\n0123456789abcdef\r\n0\r\nTrailer: x\r\n\r\nNEXT";
	port_body_start(&body, true, 0);
	size_t total = 0;
	/* One byte at a time: any split is the same. */
	for (size_t i = 0; i < strlen(chunked) && body.state != PORT_BODY_DONE; i++)
		total += port_body_advance(&body, chunked + i, 1);
	ASSERT_EQ(body.state, PORT_BODY_DONE);
	ASSERT_EQ(total, strlen(chunked) - 4);
	port_body_start(&body, true, 0);
	port_body_advance(&body, "zz\r\n", 4);
	ASSERT_EQ(body.state, PORT_BODY_BAD);
	port_body_start(&body, true, 0);
	port_body_advance(&body, "3\r\nabcXY", 8);
	ASSERT_EQ(body.state, PORT_BODY_BAD);
	port_body_start(&body, true, 0);
	port_body_advance(&body, "fffffffffffffffffff\r\n", 21);
	ASSERT_EQ(body.state, PORT_BODY_BAD);
}

static void answers_say_what_is_wrong_as_html_or_json(void)
{
	char out[PORT_REPLY_MAX];
	size_t n = port_reply_error(out, 502, "nothing listens on port 9 <script>", false);
	out[n] = '\0';
	ASSERT_CONTAINS(out, "HTTP/1.1 502 Bad Gateway\r\n");
	ASSERT_CONTAINS(out, "{\"error\":\"nothing listens on port 9 script\",\"status\":502}");
	n = port_reply_error(out, 401, "needs the token", true);
	out[n] = '\0';
	ASSERT_CONTAINS(out, "text/html");
	ASSERT_CONTAINS(out, "<p>needs the token</p>");
	n = port_reply_redirect(out, "/a?b=1", "TOK", 3);
	out[n] = '\0';
	ASSERT_CONTAINS(out, "HTTP/1.1 303 See Other\r\nLocation: /a?b=1\r\n");
	ASSERT_CONTAINS(out,
			"Set-Cookie: lizard_access_token=TOK; Path=/; HttpOnly; SameSite=Lax\r\n");
	ASSERT(!strstr(out, "Domain"));
}

int main(void)
{
	RUN_TEST(host_names_route_to_port_and_session);
	RUN_TEST(routing_headers_name_port_and_session_for_clients_without_dns);
	RUN_TEST(the_token_comes_from_header_url_or_cookie);
	RUN_TEST(heads_that_could_be_read_two_ways_are_refused);
	RUN_TEST(the_rewrite_drops_token_cookie_and_routing_and_sets_forwarded);
	RUN_TEST(bodies_end_where_their_framing_says);
	RUN_TEST(answers_say_what_is_wrong_as_html_or_json);
	return test_failures ? 1 : 0;
}
