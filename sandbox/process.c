/* SPDX-License-Identifier: MIT */
/* Programs in the sandbox, from the daemon's side: each request goes to
 * the init over the control socket with a channel of its own (protocol.h),
 * and everything about that program afterwards goes over its channel, so
 * any number of threads can start and wait without sharing replies. */

#include "sandbox/process.h"
#include "sandbox/state.h"
#include "sandbox/log.h"
#include "sandbox/protocol.h"
#include "util/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <unistd.h>

#define START_TIMEOUT_MS 15000
#define STOP_TIMEOUT_MS 1000

/* Appends s and its NUL; false when it does not fit. */
static bool put(char *buffer, size_t *used, const char *s)
{
	size_t len = strlen(s) + 1;
	if (*used + len > SANDBOX_MAX_REQUEST)
		return false;
	memcpy(buffer + *used, s, len);
	*used += len;
	return true;
}

static bool same_name(const char *a, const char *b)
{
	const char *eq = strchr(a, '=');
	size_t len = eq ? (size_t)(eq - a) : strlen(a);
	return strncmp(a, b, len) == 0 && b[len] == '=';
}

/* The sandbox's environment with the command's over it. */
static bool put_env(struct sandbox *s, const struct sandbox_command *c, char *buffer, size_t *used,
		    uint32_t *envc)
{
	*envc = 0;
	for (size_t i = 0; s->env[i]; i++) {
		bool overridden = false;
		for (size_t k = 0; c->envs && c->envs[k] && !overridden; k++)
			overridden = same_name(c->envs[k], s->env[i]);
		if (overridden)
			continue;
		if (!put(buffer, used, s->env[i]))
			return false;
		(*envc)++;
	}
	for (size_t k = 0; c->envs && c->envs[k]; k++) {
		if (!put(buffer, used, c->envs[k]))
			return false;
		(*envc)++;
	}
	return true;
}

/* Sends msg on the control socket, waiting up to timeout_ms for room (0:
 * not at all); -1 with errno ETIMEDOUT when there was none. The init's
 * queue holds what the socket's send buffer holds (about 170 requests),
 * and an init that stopped taking them (the sandbox's root can stop it
 * with ptrace) must not hold the caller for ever. */
static ssize_t send_within(int fd, const struct msghdr *msg, int timeout_ms)
{
	int64_t deadline = clock_monotonic_ms() + timeout_ms;
	for (;;) {
		ssize_t n = sendmsg(fd, msg, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n >= 0 || (errno != EAGAIN && errno != EINTR))
			return n;
		if (errno == EINTR)
			continue;
		int64_t left = deadline - clock_monotonic_ms();
		if (left <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		poll(&(struct pollfd){ .fd = fd, .events = POLLOUT }, 1, (int)left);
	}
}

bool sandbox_send_request(struct sandbox *s, const struct sandbox_command *c, bool detached,
			  int channel, int wait_ms, struct error *err)
{
	char *buffer = malloc(SANDBOX_MAX_REQUEST);
	if (!buffer) {
		error_set(err, 0, "out of memory");
		return false;
	}
	struct sandbox_request request = { .argc = 0 };
	size_t used = sizeof(request);
	request.flags = (c->user == SANDBOX_AS_ROOT ? SANDBOX_REQUEST_AS_ROOT : 0) |
			(c->own_process_tree ? SANDBOX_REQUEST_OWN_TREE : 0) |
			(detached ? SANDBOX_REQUEST_DETACHED : 0) |
			(c->builtin ? SANDBOX_REQUEST_BUILTIN : 0) |
			(c->oom_last ? SANDBOX_REQUEST_OOM_LAST : 0);
	bool fits = put(buffer, &used, c->cwd ? c->cwd : s->inside_home);
	for (size_t i = 0; fits && c->argv[i]; i++, request.argc++)
		fits = put(buffer, &used, c->argv[i]);

	int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	int fds[SANDBOX_REQUEST_FDS] = {
		channel,
		c->stdin_fd >= 0 ? c->stdin_fd : null_fd,
		c->stdout_fd >= 0 ? c->stdout_fd : s->log_fd,
		c->stderr_fd >= 0 ? c->stderr_fd : s->log_fd,
		c->fd3,
	};
	request.fd_count = c->fd3 >= 0 ? 5 : 4;

	/* The environment is read, and the control socket taken, under the
	 * lock; the wait for room is not, so that one stopped init holds no
	 * other caller behind it. kill's shutdown of the socket ends the
	 * wait on this copy too. */
	pthread_mutex_lock(&s->lock);
	fits = fits && put_env(s, c, buffer, &used, &request.envc);
	int control = s->control >= 0 ? fcntl(s->control, F_DUPFD_CLOEXEC, 0) : -1;
	pthread_mutex_unlock(&s->lock);
	bool sent = false;
	int send_errno = EPIPE;
	if (fits && null_fd >= 0 && control >= 0) {
		memcpy(buffer, &request, sizeof(request));
		char control_data[CMSG_SPACE(sizeof(fds))];
		memset(control_data, 0, sizeof(control_data));
		struct iovec iov = { .iov_base = buffer, .iov_len = used };
		struct msghdr msg = { .msg_iov = &iov,
				      .msg_iovlen = 1,
				      .msg_control = control_data,
				      .msg_controllen = CMSG_SPACE(sizeof(int) *
								   request.fd_count) };
		struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
		cmsg->cmsg_level = SOL_SOCKET;
		cmsg->cmsg_type = SCM_RIGHTS;
		cmsg->cmsg_len = CMSG_LEN(sizeof(int) * request.fd_count);
		memcpy(CMSG_DATA(cmsg), fds, sizeof(int) * request.fd_count);
		ssize_t n = send_within(control, &msg, wait_ms);
		sent = n == (ssize_t)used;
		send_errno = errno;
	}
	if (control >= 0)
		close(control);
	free(buffer);
	if (null_fd >= 0)
		close(null_fd);
	if (!fits) {
		error_set(err, 0,
			  "the command, its arguments and environment take more than %d KiB",
			  SANDBOX_MAX_REQUEST / 1024);
		return false;
	}
	if (!sent && send_errno == ETIMEDOUT) {
		if (wait_ms > 0)
			error_set(err, 0,
				  "cannot start %s: the sandbox's init has taken no request for "
				  "%d ms (stopped, or its queue full)",
				  c->name, wait_ms);
		else
			error_set(err, 0,
				  "cannot start %s: the sandbox's init is not taking requests "
				  "(stopped, or its queue full)",
				  c->name);
		err->code = ENOBUFS;
		return false;
	}
	if (!sent) {
		error_set(err, send_errno,
			  "the sandbox's init does not answer; the session's sandbox has ended");
		return false;
	}
	return true;
}

/* Reads one reply, waiting up to timeout_ms. 0: none yet, -1: hung up. */
static int read_reply(int channel, struct sandbox_reply *reply, int timeout_ms)
{
	struct pollfd pfd = { .fd = channel, .events = POLLIN };
	int n;
	while ((n = poll(&pfd, 1, timeout_ms)) < 0 && errno == EINTR)
		;
	if (n == 0)
		return 0;
	ssize_t got;
	while ((got = recv(channel, reply, sizeof(*reply), MSG_DONTWAIT)) < 0 && errno == EINTR)
		;
	if (got < 0 && errno == EAGAIN)
		return 0;
	return got == (ssize_t)sizeof(*reply) ? 1 : -1;
}

static bool start(struct sandbox *s, const struct sandbox_command *c, bool detached,
		  struct sandbox_process *p, struct error *err)
{
	p->channel = -1;
	p->pid = 0;
	p->exited = false;
	p->status = 0;
	int pair[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
		error_set(err, errno, "cannot start %s: socketpair", c->name);
		return false;
	}
	bool sent = sandbox_send_request(s, c, detached, pair[1], START_TIMEOUT_MS, err);
	close(pair[1]);
	if (!sent) {
		close(pair[0]);
		return false;
	}
	struct sandbox_reply reply;
	int got = read_reply(pair[0], &reply, START_TIMEOUT_MS);
	if (got == 1 && reply.type == SANDBOX_REPLY_STARTED) {
		p->pid = reply.value;
		p->channel = pair[0];
		return true;
	}
	close(pair[0]);
	if (got == 1 && reply.type == SANDBOX_REPLY_FAILED) {
		reply.text[sizeof(reply.text) - 1] = '\0';
		error_set(err, 0, "cannot start %s: %s", c->name, reply.text);
	} else if (got == 0) {
		error_set(err, 0, "cannot start %s: the sandbox did not answer within %d ms",
			  c->name, START_TIMEOUT_MS);
	} else {
		error_set(err, 0, "cannot start %s: the sandbox has ended", c->name);
	}
	return false;
}

bool sandbox_spawn(struct sandbox *s, const struct sandbox_command *c, struct sandbox_process *p,
		   struct error *err)
{
	return start(s, c, false, p, err);
}

/* Takes what the channel says within timeout_ms; true once it has ended. */
static bool check(struct sandbox_process *p, int timeout_ms)
{
	if (p->exited || p->channel < 0)
		return true;
	struct sandbox_reply reply;
	int got = read_reply(p->channel, &reply, timeout_ms);
	if (got == 0)
		return false;
	p->exited = true;
	/* A hangup means the init went, and every program with it. */
	p->status = got == 1 && reply.type == SANDBOX_REPLY_EXITED ? reply.value : SIGKILL;
	close(p->channel);
	p->channel = -1;
	return true;
}

bool sandbox_launch(struct sandbox *s, const struct sandbox_command *c, struct error *err)
{
	struct sandbox_process p;
	if (!start(s, c, true, &p, err))
		return false;
	close(p.channel);
	return true;
}

bool sandbox_launch_watched(struct sandbox *s, const struct sandbox_command *c, int watch_ms,
			    struct sandbox_launched *out, struct error *err)
{
	memset(out, 0, sizeof(*out));
	uint64_t log_start = sandbox_log_position(s->log);
	struct sandbox_process p;
	if (!start(s, c, true, &p, err))
		return false;
	out->pid = p.pid;
	out->exited = check(&p, watch_ms);
	out->status = p.status;
	if (p.channel >= 0)
		close(p.channel); /* detached: it lives on */
	if (out->exited)
		sandbox_log_since(s->log, log_start, out->output, sizeof(out->output));
	return true;
}


bool sandbox_process_running(struct sandbox_process *p)
{
	return p->pid > 0 && !check(p, 0);
}

bool sandbox_process_wait(struct sandbox_process *p, int timeout_ms)
{
	int64_t deadline = clock_monotonic_ms() + timeout_ms;
	for (;;) {
		int64_t left = deadline - clock_monotonic_ms();
		if (check(p, left > 0 ? (int)left : 0))
			return true;
		if (left <= 0)
			return false;
	}
}

void sandbox_process_signal(struct sandbox_process *p, int sig)
{
	if (p->channel < 0 || p->exited)
		return;
	struct sandbox_reply message = { .type = SANDBOX_SIGNAL, .value = sig };
	(void)!send(p->channel, &message, sizeof(message), MSG_NOSIGNAL | MSG_DONTWAIT);
}

void sandbox_process_stop(struct sandbox_process *p)
{
	if (p->pid <= 0)
		return;
	sandbox_process_signal(p, SIGKILL);
	sandbox_process_wait(p, STOP_TIMEOUT_MS);
	if (p->channel >= 0)
		close(p->channel); /* the init kills it on hangup too */
	p->channel = -1;
	p->pid = 0;
}
