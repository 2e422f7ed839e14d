/* SPDX-License-Identifier: MIT */
#include "sandbox/port_inside.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/* A listener whose backlog is full lets a SYN wait for minutes; the
 * daemon's answer must not. */
#define CONNECT_TIMEOUT_S 5

bool sandbox_port_inside_is(char **argv)
{
	return strcmp(argv[0], "@connect") == 0;
}

static int answer(int error, int fd)
{
	int32_t value = error;
	struct iovec iov = { .iov_base = &value, .iov_len = sizeof(value) };
	char control[CMSG_SPACE(sizeof(int))];
	memset(control, 0, sizeof(control));
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (fd >= 0) {
		msg.msg_control = control;
		msg.msg_controllen = sizeof(control);
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	ssize_t sent;
	while ((sent = sendmsg(3, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	return sent == (ssize_t)sizeof(value) ? 0 : 1;
}

int sandbox_port_inside_run(char **argv)
{
	if (!argv[1] || argv[2])
		return answer(EINVAL, -1);
	char *end;
	long port = strtol(argv[1], &end, 10);
	if (*end || port < 1 || port > 65535)
		return answer(EINVAL, -1);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return answer(errno, -1);
	struct timeval timeout = { .tv_sec = CONNECT_TIMEOUT_S };
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int rc;
	while ((rc = connect(fd, (struct sockaddr *)&addr, sizeof(addr))) < 0 && errno == EINTR)
		;
	if (rc < 0) {
		int error = errno == EINPROGRESS ? ETIMEDOUT : errno;
		close(fd);
		return answer(error, -1);
	}
	/* The daemon's sends must not wait on our timeout. */
	struct timeval none = { 0 };
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &none, sizeof(none));
	return answer(0, fd);
}
