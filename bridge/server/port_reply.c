/* SPDX-License-Identifier: MIT */
/* The port proxy's own answers (see port_reply.h). */
#include "bridge/server/port_reply.h"

#include "bridge/context.h"

#include <stdio.h>
#include <string.h>

static const char *reason(int status)
{
	switch (status) {
	case 400:
		return "Bad Request";
	case 401:
		return "Unauthorized";
	case 403:
		return "Forbidden";
	case 404:
		return "Not Found";
	case 421:
		return "Misdirected Request";
	case 429:
		return "Too Many Requests";
	case 431:
		return "Request Header Fields Too Large";
	case 502:
		return "Bad Gateway";
	case 503:
		return "Service Unavailable";
	case 504:
		return "Gateway Timeout";
	default:
		return "Error";
	}
}

/* message with the characters HTML or JSON give meaning to left out: the
 * messages are ours, but they name what the client sent (a session id). */
static void plain(char *out, size_t size, const char *message)
{
	size_t n = 0;
	for (const char *p = message; *p && n + 1 < size; p++)
		if (!strchr("<>&\"\\", *p) && (unsigned char)*p >= ' ')
			out[n++] = *p;
	out[n] = '\0';
}

size_t port_reply_error(char *out, int status, const char *message, bool html)
{
	char text[1024], body[2048];
	plain(text, sizeof(text), message);
	int body_len;
	if (html)
		body_len = snprintf(body, sizeof(body),
				    "<!doctype html><meta charset=utf-8><title>%d %s</title>"
				    "<h1>%d %s</h1><p>%s</p>\n",
				    status, reason(status), status, reason(status), text);
	else
		body_len = snprintf(body, sizeof(body), "{\"error\":\"%s\",\"status\":%d}\n", text,
				    status);
	if (body_len < 0 || (size_t)body_len >= sizeof(body))
		body_len = 0;
	int n = snprintf(out, PORT_REPLY_MAX,
			 "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n"
			 "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n"
			 "%sConnection: close\r\n\r\n%.*s",
			 status, reason(status),
			 html ? "text/html; charset=utf-8" : "application/json", body_len,
			 status == 401 ? "WWW-Authenticate: Bearer realm=\"lizard-bridge port\"\r\n"
				       : "",
			 body_len, body);
	return n > 0 && n < PORT_REPLY_MAX ? (size_t)n : 0;
}

size_t port_reply_redirect(char *out, const char *location, const char *token, size_t token_len)
{
	int n = snprintf(out, PORT_REPLY_MAX,
			 "HTTP/1.1 303 See Other\r\nLocation: %s\r\n"
			 "Set-Cookie: %s=%.*s; Path=/; HttpOnly; SameSite=Lax\r\n"
			 "Cache-Control: no-store\r\nReferrer-Policy: no-referrer\r\n"
			 "Content-Length: 0\r\n\r\n",
			 location, BRIDGE_PORT_TOKEN_COOKIE, (int)token_len, token);
	return n > 0 && n < PORT_REPLY_MAX ? (size_t)n : 0;
}
