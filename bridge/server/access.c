/* SPDX-License-Identifier: MIT */
/* Who may use the server (see access.h). */
#include "bridge/server/access.h"

#include "bridge/server/options.h"
#include "bridge/server/state.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static bool equal_constant_time(const char *a, size_t a_len, const char *b, size_t b_len)
{
	/* Every byte of the longer one is looked at, whatever matches. */
	size_t n = a_len > b_len ? a_len : b_len;
	volatile unsigned char diff = (unsigned char)(a_len != b_len);
	for (size_t i = 0; i < n; i++)
		diff |= (unsigned char)((i < a_len ? a[i] : 0) ^ (i < b_len ? b[i] : 0));
	return diff == 0;
}

bool bridge_server_authorized(struct bridge_server *server, struct lws *wsi, bool allow_query)
{
	const char *key = server->options->api_key;
	char value[512];
	bool ok = false;
	int len = lws_hdr_copy(wsi, value, sizeof(value), WSI_TOKEN_HTTP_AUTHORIZATION);
	if (len > 7 && strncasecmp(value, "Bearer ", 7) == 0)
		ok = equal_constant_time(value + 7, (size_t)len - 7, key, strlen(key));
	if (!ok && allow_query) {
		/* The result points into value, just past "access_token=". */
		const char *token = lws_get_urlarg_by_name(wsi, "access_token=", value,
							   sizeof(value));
		if (token)
			ok = equal_constant_time(token, strlen(token), key, strlen(key));
	}
	memset(value, 0, sizeof(value));
	return ok;
}

bool bridge_server_origin_allowed(struct lws *wsi)
{
	char origin[256], host[256];
	int origin_len = lws_hdr_copy(wsi, origin, sizeof(origin), WSI_TOKEN_ORIGIN);
	if (origin_len <= 0)
		return true; /* not a browser, or a same-origin GET */
	int host_len = lws_hdr_copy(wsi, host, sizeof(host), WSI_TOKEN_HOST);
	if (host_len <= 0)
		return false;
	const char *after_scheme = strstr(origin, "://");
	return after_scheme && strcasecmp(after_scheme + 3, host) == 0;
}

/* Splits a Host header into name and port (0 when absent, -1 when not a
 * port). A bracketed IPv6 literal keeps its brackets off. */
static void split_host(char *host, const char **name, int *port)
{
	char *colon = NULL;
	*port = 0;
	if (host[0] == '[') {
		char *close = strchr(host, ']');
		if (!close) {
			*port = -1;
			*name = host;
			return;
		}
		*close = '\0';
		*name = host + 1;
		if (close[1] == ':')
			colon = close + 1;
		else if (close[1] != '\0')
			*port = -1;
	} else {
		*name = host;
		colon = strchr(host, ':');
		if (colon)
			*colon = '\0';
	}
	if (colon) {
		char *end;
		long p = strtol(colon + 1, &end, 10);
		*port = colon[1] && !*end && p > 0 && p <= 65535 ? (int)p : -1;
	}
}

bool bridge_server_host_allowed(struct bridge_server *server, struct lws *wsi)
{
	/* No page can name a UNIX socket: nothing to rebind. */
	if (server->unix_socket)
		return true;
	char host[256];
	if (lws_hdr_copy(wsi, host, sizeof(host), WSI_TOKEN_HOST) <= 0)
		return false;
	const char *name;
	int port;
	split_host(host, &name, &port);
	if (port < 0)
		return false;
	/* The name decides, not the port: a rebinding page reaches us under a
	 * name it controls, whatever the port, while an SSH or proxy forward
	 * (localhost:9000 -> here) keeps our name with another port. An
	 * address literal means the page's own origin is that address. */
	const struct bridge_server_options *o = server->options;
	for (size_t i = 0; i < o->allowed_host_count; i++)
		if (strcasecmp(name, o->allowed_hosts[i]) == 0)
			return true;
	unsigned char addr[16];
	return strcasecmp(name, "localhost") == 0 || inet_pton(AF_INET, name, addr) == 1 ||
	       inet_pton(AF_INET6, name, addr) == 1;
}
