/* SPDX-License-Identifier: MIT */
/* Request heads for exposed ports (see port_head.h). Strict where the
 * framing is decided: bare LF, folded lines, a header without a name,
 * Content-Length together with Transfer-Encoding, two lengths that differ
 * and any coding but a final "chunked" are refused rather than guessed. */
#include "bridge/server/port_head.h"

#include "bridge/context.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

bool port_span_is(struct port_span span, const char *text)
{
	return span.ptr && span.len == strlen(text) && strncasecmp(span.ptr, text, span.len) == 0;
}

static bool is_token_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static struct port_span trim(const char *p, size_t len)
{
	while (len && (*p == ' ' || *p == '\t'))
		p++, len--;
	while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
		len--;
	return (struct port_span){ p, len };
}

/* The next pair of a separator-separated list (a query, a Cookie header)
 * from *at on, trimmed; false at the end. */
static bool next_pair(struct port_span list, char separator, size_t *at, struct port_span *pair)
{
	if (*at >= list.len)
		return false;
	size_t end = *at;
	while (end < list.len && list.ptr[end] != separator)
		end++;
	*pair = trim(list.ptr + *at, end - *at);
	*at = end + 1;
	return true;
}

static bool pair_named(struct port_span pair, const char *name)
{
	size_t name_len = strlen(name);
	return pair.len > name_len && memcmp(pair.ptr, name, name_len) == 0 &&
	       pair.ptr[name_len] == '=';
}

/* The value of the pair called name. */
static bool find_pair(struct port_span list, char separator, const char *name,
		      struct port_span *value)
{
	struct port_span pair;
	for (size_t at = 0; next_pair(list, separator, &at, &pair);) {
		if (pair_named(pair, name)) {
			size_t skip = strlen(name) + 1;
			*value = (struct port_span){ pair.ptr + skip, pair.len - skip };
			return true;
		}
	}
	return false;
}

static struct port_span query_of(const struct port_request *r)
{
	const char *q = memchr(r->target.ptr, '?', r->target.len);
	if (!q)
		return (struct port_span){ NULL, 0 };
	return (struct port_span){ q + 1, r->target.len - (size_t)(q + 1 - r->target.ptr) };
}

static bool parse_length(struct port_span value, uint64_t *out)
{
	if (value.len == 0 || value.len > 18)
		return false;
	uint64_t n = 0;
	for (size_t i = 0; i < value.len; i++) {
		if (value.ptr[i] < '0' || value.ptr[i] > '9')
			return false;
		n = n * 10 + (uint64_t)(value.ptr[i] - '0');
	}
	*out = n;
	return true;
}

static bool parse_request_line(const char *line, size_t len, struct port_request *r)
{
	const char *sp1 = memchr(line, ' ', len);
	if (!sp1 || sp1 == line)
		return false;
	const char *rest = sp1 + 1;
	const char *sp2 = memchr(rest, ' ', len - (size_t)(rest - line));
	if (!sp2 || sp2 == rest)
		return false;
	r->method = (struct port_span){ line, (size_t)(sp1 - line) };
	r->target = (struct port_span){ rest, (size_t)(sp2 - rest) };
	r->version = (struct port_span){ sp2 + 1, len - (size_t)(sp2 + 1 - line) };
	for (size_t i = 0; i < r->method.len; i++)
		if (!is_token_char(line[i]))
			return false;
	for (size_t i = 0; i < r->target.len; i++)
		if ((unsigned char)rest[i] <= ' ' || rest[i] == 0x7f)
			return false;
	return port_span_is(r->version, "HTTP/1.1") || port_span_is(r->version, "HTTP/1.0");
}

/* One header line; false with *why when it makes the head unacceptable. */
static bool take_header(struct port_request *r, struct port_span name, struct port_span value,
			const char **why)
{
	struct port_span found;
	if (port_span_is(name, "host")) {
		if (r->host.ptr)
			return *why = "two Host headers", false;
		r->host = value;
	} else if (port_span_is(name, "origin")) {
		r->origin = value;
	} else if (port_span_is(name, "x-forwarded-for")) {
		r->forwarded_for = value;
	} else if (port_span_is(name, "x-forwarded-proto")) {
		r->forwarded_proto = value;
	} else if (port_span_is(name, "accept")) {
		r->accept = value;
	} else if (port_span_is(name, "upgrade")) {
		r->upgrade = value;
	} else if (port_span_is(name, BRIDGE_PORT_SESSION_HEADER)) {
		r->session = value;
	} else if (port_span_is(name, BRIDGE_PORT_PORT_HEADER)) {
		r->port = value;
	} else if (port_span_is(name, BRIDGE_PORT_TOKEN_HEADER)) {
		r->token = value;
		r->token_in_header = true;
	} else if (port_span_is(name, "cookie")) {
		if (!r->token_in_header && !r->token_in_cookie &&
		    find_pair(value, ';', BRIDGE_PORT_TOKEN_COOKIE, &found)) {
			r->token = found;
			r->token_in_cookie = true;
		}
	} else if (port_span_is(name, "content-length")) {
		uint64_t n;
		if (!parse_length(value, &n) || (r->has_length && n != r->content_length))
			return *why = "a Content-Length that is not one number", false;
		r->has_length = true;
		r->content_length = n;
	} else if (port_span_is(name, "transfer-encoding")) {
		if (!port_span_is(value, "chunked") || r->chunked)
			return *why = "a Transfer-Encoding other than chunked", false;
		r->chunked = true;
	}
	return true;
}

enum port_head_result port_head_parse(const char *data, size_t len, struct port_request *r,
				      const char **why)
{
	memset(r, 0, sizeof(*r));
	*why = "a malformed request head";
	size_t limit = len < PORT_HEAD_MAX ? len : PORT_HEAD_MAX;
	bool first = true;
	for (size_t i = 0; i < limit;) {
		const char *lf = memchr(data + i, '\n', limit - i);
		if (!lf)
			break;
		size_t end = (size_t)(lf - data);
		if (end == i || data[end - 1] != '\r')
			return *why = "a line that does not end in CRLF", PORT_HEAD_BAD;
		const char *line = data + i;
		size_t line_len = end - 1 - i;
		i = end + 1;
		if (first) {
			first = false;
			if (!parse_request_line(line, line_len, r))
				return *why = "a malformed request line", PORT_HEAD_BAD;
			continue;
		}
		if (line_len == 0) {
			r->head_len = i;
			if (!r->host.ptr || r->host.len == 0)
				return *why = "no Host header", PORT_HEAD_BAD;
			if (r->chunked && r->has_length)
				return *why = "both Content-Length and Transfer-Encoding",
				       PORT_HEAD_BAD;
			/* A token in the URL is newer than the cookie: it wins. */
			struct port_span found;
			if (!r->token_in_header &&
			    find_pair(query_of(r), '&', BRIDGE_PORT_TOKEN_QUERY, &found)) {
				r->token = found;
				r->token_in_query = true;
				r->token_in_cookie = false;
			}
			return PORT_HEAD_OK;
		}
		const char *colon = memchr(line, ':', line_len);
		if (!colon || colon == line)
			return *why = "a header line without a name", PORT_HEAD_BAD;
		struct port_span name = { line, (size_t)(colon - line) };
		for (size_t k = 0; k < name.len; k++)
			if (!is_token_char(name.ptr[k]))
				return *why = "a header name with a character it cannot have",
				       PORT_HEAD_BAD;
		struct port_span value = trim(colon + 1, line_len - name.len - 1);
		for (size_t k = 0; k < value.len; k++)
			if (value.ptr[k] == '\0' || value.ptr[k] == '\r')
				return *why = "a header value with a control character",
				       PORT_HEAD_BAD;
		if (!take_header(r, name, value, why))
			return PORT_HEAD_BAD;
	}
	return len >= PORT_HEAD_MAX ? PORT_HEAD_TOO_LARGE : PORT_HEAD_INCOMPLETE;
}

/* Appends text, keeping out a NUL-terminated string within size. */
static void put(char *out, size_t size, size_t *used, const char *text, size_t len)
{
	if (*used + len >= size)
		len = *used < size ? size - 1 - *used : 0;
	memcpy(out + *used, text, len);
	*used += len;
	out[*used] = '\0';
}

/* A list of pairs without the one named name (a query, a cookie). */
static void put_without(char *out, size_t size, size_t *used, struct port_span list, char separator,
			const char *name, bool *any)
{
	struct port_span pair;
	for (size_t at = 0; next_pair(list, separator, &at, &pair);) {
		if (pair_named(pair, name) || pair.len == 0)
			continue;
		if (*any)
			put(out, size, used, separator == ';' ? "; " : "&",
			    separator == ';' ? 2 : 1);
		put(out, size, used, pair.ptr, pair.len);
		*any = true;
	}
}

size_t port_head_clean_target(const struct port_request *r, char *out, size_t size)
{
	size_t used = 0;
	out[0] = '\0';
	struct port_span query = query_of(r);
	size_t path_len = query.ptr ? (size_t)(query.ptr - 1 - r->target.ptr) : r->target.len;
	put(out, size, &used, r->target.ptr, path_len);
	if (!query.ptr)
		return used;
	size_t mark = used;
	bool any = false;
	put(out, size, &used, "?", 1);
	put_without(out, size, &used, query, '&', BRIDGE_PORT_TOKEN_QUERY, &any);
	if (!any) {
		used = mark; /* nothing left of the query */
		out[used] = '\0';
	}
	return used;
}

static bool dropped_header(struct port_span name)
{
	static const char *const ours[] = { BRIDGE_PORT_TOKEN_HEADER, BRIDGE_PORT_SESSION_HEADER,
					    BRIDGE_PORT_PORT_HEADER,  "x-forwarded-for",
					    "x-forwarded-host",       "x-forwarded-proto" };
	for (size_t i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
		if (port_span_is(name, ours[i]))
			return true;
	return false;
}

size_t port_head_rewrite(const char *data, const struct port_request *r, const char *client,
			 bool keep_chain, char *out, size_t size)
{
	size_t used = 0;
	out[0] = '\0';
	put(out, size, &used, r->method.ptr, r->method.len);
	put(out, size, &used, " ", 1);
	used += port_head_clean_target(r, out + used, size - used);
	put(out, size, &used, " ", 1);
	put(out, size, &used, r->version.ptr, r->version.len);
	put(out, size, &used, "\r\n", 2);
	const char *p = memchr(data, '\n', r->head_len) + 1;
	const char *end = data + r->head_len - 2; /* the blank line */
	while (p < end) {
		const char *lf = memchr(p, '\n', (size_t)(end - p));
		size_t line_len = (size_t)(lf - p) - 1;
		const char *colon = memchr(p, ':', line_len);
		struct port_span name = { p, (size_t)(colon - p) };
		struct port_span value = trim(colon + 1, line_len - name.len - 1);
		if (port_span_is(name, "cookie")) {
			char cookies[PORT_HEAD_MAX];
			size_t cookie_len = 0;
			bool any = false;
			cookies[0] = '\0';
			put_without(cookies, sizeof(cookies), &cookie_len, value, ';',
				    BRIDGE_PORT_TOKEN_COOKIE, &any);
			if (any) {
				put(out, size, &used, "Cookie: ", 8);
				put(out, size, &used, cookies, cookie_len);
				put(out, size, &used, "\r\n", 2);
			}
		} else if (!dropped_header(name)) {
			put(out, size, &used, p, line_len);
			put(out, size, &used, "\r\n", 2);
		}
		p = lf + 1;
	}
	put(out, size, &used, "X-Forwarded-For: ", 17);
	if (keep_chain && r->forwarded_for.ptr && r->forwarded_for.len) {
		put(out, size, &used, r->forwarded_for.ptr, r->forwarded_for.len);
		put(out, size, &used, ", ", 2);
	}
	/* Only the two values a proxy in front can mean, and only from one we
	 * trust: anything else would reach the service as said. */
	bool https = keep_chain && port_span_is(r->forwarded_proto, "https");
	char forwarded[PORT_HEAD_GROWTH];
	int n = snprintf(forwarded, sizeof(forwarded),
			 "%s\r\nX-Forwarded-Host: %.*s\r\nX-Forwarded-Proto: %s\r\n\r\n", client,
			 (int)(r->host.len < 256 ? r->host.len : 256), r->host.ptr,
			 https ? "https" : "http");
	put(out, size, &used, forwarded, n > 0 ? (size_t)n : 0);
	return used;
}
