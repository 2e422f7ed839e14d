/* SPDX-License-Identifier: MIT */
/* Where `call` reaches the daemon (see endpoint.h). */
#include "bridge/client/endpoint.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

bool client_endpoint_parse(const char *url, struct endpoint *e)
{
	memset(e, 0, sizeof(*e));
	snprintf(e->path, sizeof(e->path), "/mcp");
	if (strncmp(url, "unix:", 5) == 0) {
		const char *path = url + 5;
		while (path[0] == '/' && path[1] == '/')
			path++;
		e->unix_socket = true;
		snprintf(e->host, sizeof(e->host), "%s", path);
		return path[0] == '/' && strlen(path) < 100;
	}
	if (strncmp(url, "http://", 7) != 0)
		return false;
	const char *rest = url + 7;
	const char *slash = strchr(rest, '/');
	size_t authority = slash ? (size_t)(slash - rest) : strlen(rest);
	if (authority == 0 || authority >= sizeof(e->host))
		return false;
	char hostport[256];
	memcpy(hostport, rest, authority);
	hostport[authority] = '\0';
	if (slash && strcmp(slash, "/") != 0)
		snprintf(e->path, sizeof(e->path), "%s", slash);
	char *colon = strrchr(hostport, ':');
	if (colon && !strchr(colon, ']')) {
		*colon = '\0';
		snprintf(e->port, sizeof(e->port), "%s", colon + 1);
	} else {
		snprintf(e->port, sizeof(e->port), "80");
	}
	char *host = hostport;
	if (host[0] == '[') {
		host++;
		host[strcspn(host, "]")] = '\0';
	}
	snprintf(e->host, sizeof(e->host), "%s", host);
	return true;
}

int client_connect(const struct endpoint *e, struct error *err)
{
	int fd = -1;
	if (e->unix_socket) {
		struct sockaddr_un addr = { .sun_family = AF_UNIX };
		snprintf(addr.sun_path, sizeof(addr.sun_path), "%.*s",
			 (int)sizeof(addr.sun_path) - 1, e->host);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
			error_set(err, 0, "%s", strerror(errno));
			close(fd);
			return -1;
		}
	} else {
		struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *list;
		int rc = getaddrinfo(e->host, e->port, &hints, &list);
		if (rc != 0) {
			error_set(err, 0, "%s", gai_strerror(rc));
			return -1;
		}
		error_set(err, 0, "no address");
		for (struct addrinfo *a = list; a && fd < 0; a = a->ai_next) {
			fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
			if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
				error_set(err, 0, "%s", strerror(errno));
				close(fd);
				fd = -1;
			}
		}
		freeaddrinfo(list);
	}
	if (fd >= 0) {
		/* Tools may legitimately take a minute (wait, hold_key). */
		struct timeval timeout = { 180, 0 };
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
	}
	return fd;
}
