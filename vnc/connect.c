/* SPDX-License-Identifier: MIT */
#include "vnc/connect.h"

#include "vnc/target.h"
#include "util/clock.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* How often a connect in progress looks whether it was abandoned. */
#define ABANDON_CHECK_MS 200

/* Waits for a non-blocking connect until deadline_ms or abandon. */
static bool wait_connected(int sock, int64_t deadline_ms, const atomic_bool *abandon,
			   const char **why)
{
	for (;;) {
		int64_t left = deadline_ms - clock_monotonic_ms();
		if (left <= 0) {
			*why = "timed out";
			return false;
		}
		if (abandon && atomic_load(abandon)) {
			*why = "abandoned";
			return false;
		}
		struct pollfd p = { .fd = sock, .events = POLLOUT };
		int n = poll(&p, 1, left < ABANDON_CHECK_MS ? (int)left : ABANDON_CHECK_MS);
		if (n < 0 && errno != EINTR) {
			*why = strerror(errno);
			return false;
		}
		if (n > 0) {
			int error = 0;
			socklen_t len = sizeof(error);
			if (getsockopt(sock, SOL_SOCKET, SO_ERROR, &error, &len) != 0)
				error = errno;
			if (error) {
				*why = strerror(error);
				return false;
			}
			return true;
		}
	}
}

int vnc_connect_socket(const struct vnc_target *target, int64_t deadline_ms,
		       const atomic_bool *abandon, struct error *err)
{
	const char *why = NULL;
	if (target->is_unix) {
		struct sockaddr_un addr = { .sun_family = AF_UNIX };
		if (strlen(target->host) >= sizeof(addr.sun_path)) {
			error_set(err, 0, "the socket path is longer than %zu bytes",
				  sizeof(addr.sun_path) - 1);
			return -1;
		}
		memcpy(addr.sun_path, target->host, strlen(target->host) + 1);
		int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (sock < 0) {
			error_set(err, 0, "socket: %s", strerror(errno));
			return -1;
		}
		if (connect(sock, (struct sockaddr *)&addr, sizeof(addr)) == 0 ||
		    ((errno == EINPROGRESS || errno == EAGAIN) &&
		     wait_connected(sock, deadline_ms, abandon, &why)))
			return sock;
		error_set(err, 0, "connect: %s", why ? why : strerror(errno));
		close(sock);
		return -1;
	}

	char port[16];
	snprintf(port, sizeof(port), "%d", target->port);
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *found = NULL;
	int rc = getaddrinfo(target->host, port, &hints, &found);
	if (rc != 0) {
		error_set(err, 0, "cannot resolve %s: %s", target->host, gai_strerror(rc));
		return -1;
	}
	int sock = -1;
	for (struct addrinfo *a = found; a && sock < 0; a = a->ai_next) {
		sock = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
			      a->ai_protocol);
		if (sock < 0) {
			why = strerror(errno);
			continue;
		}
		if (connect(sock, a->ai_addr, a->ai_addrlen) == 0 ||
		    (errno == EINPROGRESS && wait_connected(sock, deadline_ms, abandon, &why)))
			break;
		if (!why)
			why = strerror(errno);
		close(sock);
		sock = -1;
	}
	freeaddrinfo(found);
	if (sock < 0) {
		error_set(err, 0, "connect: %s", why ? why : "no address");
		return -1;
	}
	/* Input is a few bytes at a time: send it now, not with the next. */
	int one = 1;
	setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return sock;
}
