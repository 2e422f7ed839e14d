/* SPDX-License-Identifier: MIT */
/* The daemon's side of a connection dialled inside the sandbox (port.h). */
#include "sandbox/port.h"

#include "sandbox/process.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

bool sandbox_port_dial_start(struct sandbox *sandbox, int port, int *pending, struct error *err)
{
	*pending = -1;
	if (port < 1 || port > 65535) {
		error_set(err, 0, "port %d is not in 1..65535", port);
		return false;
	}
	int answer[2], channel[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, answer) != 0) {
		error_set(err, errno, "cannot create a socket pair");
		return false;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, channel) != 0) {
		error_set(err, errno, "cannot create a socket pair");
		close(answer[0]);
		close(answer[1]);
		return false;
	}
	char port_text[8];
	snprintf(port_text, sizeof(port_text), "%d", port);
	const char *argv[] = { "@connect", port_text, NULL };
	struct sandbox_command command = { .name = "connect",
					   .argv = argv,
					   .user = SANDBOX_AS_USER,
					   .builtin = true,
					   .stdin_fd = -1,
					   .stdout_fd = -1,
					   .stderr_fd = -1,
					   .fd3 = answer[1] };
	/* Detached: it ends by itself once it has answered, and the channel,
	 * whose news we do not need, can close at once. */
	/* No wait for room in the init's queue: this runs on the port
	 * proxy's one thread, which every session's connections share. */
	bool sent = sandbox_send_request(sandbox, &command, true, channel[1], 0, err);
	close(channel[0]);
	close(channel[1]);
	close(answer[1]);
	if (!sent) {
		close(answer[0]);
		return false;
	}
	fcntl(answer[0], F_SETFL, O_NONBLOCK);
	*pending = answer[0];
	return true;
}

int sandbox_port_dial_finish(int pending, int port, struct error *err)
{
	int32_t value = 0;
	char control[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &value, .iov_len = sizeof(value) };
	struct msghdr msg = { .msg_iov = &iov,
			      .msg_iovlen = 1,
			      .msg_control = control,
			      .msg_controllen = sizeof(control) };
	ssize_t got;
	while ((got = recvmsg(pending, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT)) < 0 &&
	       errno == EINTR)
		;
	int fd = -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); got > 0 && c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len == CMSG_LEN(sizeof(int))) {
			memcpy(&fd, CMSG_DATA(c), sizeof(int));
			break;
		}
	}
	if (got != (ssize_t)sizeof(value) || (value == 0) != (fd >= 0) ||
	    (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
		if (fd >= 0)
			close(fd);
		error_set(err, 0,
			  "the sandbox did not answer the connection to port %d (did it end?)",
			  port);
		return -1;
	}
	if (value != 0) {
		error_set(err, value, "cannot connect to port %d inside the sandbox", port);
		return -1;
	}
	int type = 0;
	socklen_t len = sizeof(type);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM) {
		/* What came back is not what was asked for: a program in the
		 * sandbox cannot answer for its init, but check anyway. */
		close(fd);
		error_set(err, 0,
			  "the sandbox answered port %d with something else than "
			  "a stream socket",
			  port);
		return -1;
	}
	fcntl(fd, F_SETFL, O_NONBLOCK);
	return fd;
}
