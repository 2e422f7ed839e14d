/* SPDX-License-Identifier: MIT */
#include "vnc/target.h"

#include "util/utf8.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FORMS "vnc://[:PASSWORD@]HOST[:PORT] or unix:///path/to/socket"

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)tolower((unsigned char)c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Decodes %XX escapes of [start, start+len) into a new string. */
static char *percent_decode(const char *start, size_t len)
{
	char *out = malloc(len + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		if (start[i] == '%' && i + 2 < len) {
			int hi = hex_value(start[i + 1]), lo = hex_value(start[i + 2]);
			/* %00 would cut the password short: keep it literal. */
			if (hi >= 0 && lo >= 0 && (hi || lo)) {
				out[o++] = (char)(hi * 16 + lo);
				i += 2;
				continue;
			}
		}
		out[o++] = start[i];
	}
	out[o] = '\0';
	return out;
}

bool vnc_target_parse(const char *url, struct vnc_target *target, struct error *err)
{
	memset(target, 0, sizeof(*target));
	if (!url || !*url) {
		error_set(err, 0, "empty VNC URL; use " FORMS);
		return false;
	}
	if (strncmp(url, "unix://", 7) == 0) {
		const char *path = url + 7;
		if (path[0] != '/' || strlen(path) >= 108) {
			char shown[81];
			error_set(err, 0,
				  "'%s' needs an absolute socket path under 108 bytes, as in "
				  "unix:///run/vnc.sock",
				  utf8_excerpt(shown, sizeof(shown), url));
			return false;
		}
		target->host = strdup(path);
		target->is_unix = true;
		return target->host != NULL;
	}
	if (strncmp(url, "vnc://", 6) != 0) {
		char shown[65];
		error_set(err, 0, "unsupported VNC URL scheme in '%s'; use " FORMS,
			  utf8_excerpt(shown, sizeof(shown), url));
		return false;
	}

	const char *rest = url + 6;
	const char *at = strrchr(rest, '@');
	if (at) {
		if (rest[0] != ':') {
			error_set(err, 0,
				  "VNC URLs take a password only, written vnc://:PASSWORD@HOST; "
				  "user names are not supported");
			return false;
		}
		target->password = percent_decode(rest + 1, (size_t)(at - rest - 1));
		if (!target->password)
			goto oom;
		rest = at + 1;
	}

	const char *host_start = rest, *host_end;
	const char *port_part = NULL;
	if (rest[0] == '[') {
		host_start = rest + 1;
		host_end = strchr(host_start, ']');
		if (!host_end) {
			error_set(err, 0, "unterminated IPv6 address in VNC URL");
			goto fail;
		}
		if (host_end[1] == ':')
			port_part = host_end + 2;
		else if (host_end[1] != '\0' && strcmp(host_end + 1, "/") != 0) {
			error_set(err, 0, "unexpected text after the IPv6 address in VNC URL");
			goto fail;
		}
	} else {
		host_end = rest + strcspn(rest, ":/");
		if (*host_end == ':')
			port_part = host_end + 1;
	}
	if (host_end == host_start) {
		error_set(err, 0, "VNC URL has no host; use " FORMS);
		goto fail;
	}

	target->port = 5900;
	if (port_part) {
		char *end;
		long port = strtol(port_part, &end, 10);
		if (end == port_part || (*end != '\0' && strcmp(end, "/") != 0) || port < 1 ||
		    port > 65535) {
			char shown[17];
			error_set(err, 0, "VNC port '%s' is not a number from 1 to 65535",
				  utf8_excerpt(shown, sizeof(shown), port_part));
			goto fail;
		}
		target->port = (int)port;
	}
	target->host = strndup(host_start, (size_t)(host_end - host_start));
	if (!target->host)
		goto oom;
	return true;

oom:
	error_set(err, 0, "out of memory");
fail:
	vnc_target_finish(target);
	return false;
}

bool vnc_target_set_password(struct vnc_target *target, const char *password)
{
	char *copy = strdup(password);
	if (!copy)
		return false;
	if (target->password) {
		memset(target->password, 0, strlen(target->password));
		free(target->password);
	}
	target->password = copy;
	return true;
}

void vnc_target_describe(const struct vnc_target *target, char *out, size_t out_size)
{
	if (target->is_unix)
		snprintf(out, out_size, "unix://%s", target->host);
	else if (strchr(target->host, ':'))
		snprintf(out, out_size, "[%s]:%d", target->host, target->port);
	else
		snprintf(out, out_size, "%s:%d", target->host, target->port);
}

void vnc_target_finish(struct vnc_target *target)
{
	free(target->host);
	if (target->password) {
		memset(target->password, 0, strlen(target->password));
		free(target->password);
	}
	memset(target, 0, sizeof(*target));
}
