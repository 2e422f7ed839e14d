/* SPDX-License-Identifier: MIT */
/* The sandbox's init: the lizard-bridge binary itself, run inside the
 * sandbox as `lizard-bridge sandbox-init FD MODE`, as the sandbox's root.
 * It is single-threaded and does one thing: start the programs the daemon
 * asks for (see protocol.h), report when they end, and kill them when
 * asked or when the daemon hangs up. Every program of a session starts
 * here, so all of them live in the session's PID namespace; a program whose
 * whole tree must end with it (exec) starts under a reaper of its own
 * (reaper.c) instead of in a PID namespace of its own.
 *
 * Starting one program, as the user or root, is spawn.c's. */

#include "sandbox/init.h"
#include "sandbox/reaper.h"
#include "sandbox/root_fuse.h"
#include "sandbox/spawn.h"
#include "sandbox/protocol.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#endif

#define MAX_CHILDREN 512

struct child {
	pid_t pid;
	int channel;
	bool detached; /* lives on when its channel closes */
};

static struct child children[MAX_CHILDREN];
static bool isolated;      /* false: the benchmark's unsandboxed mode, no user switch */
static int signal_fd = -1; /* SIGCHLD, which stays blocked */


/* The request's strings, checked to lie inside the message. Pointers go
 * into buffer; argv and envp are NULL-terminated arrays the caller frees. */
static bool parse_request(char *buffer, size_t len, struct sandbox_request *request,
			  const char **cwd, char ***argv, char ***envp)
{
	if (len < sizeof(*request))
		return false;
	memcpy(request, buffer, sizeof(*request));
	if (request->argc < 1 || request->argc > 4096 || request->envc > 4096 ||
	    request->fd_count < 4 || request->fd_count > SANDBOX_REQUEST_FDS)
		return false;
	char *p = buffer + sizeof(*request), *end = buffer + len;
	*argv = calloc(request->argc + 1, sizeof(char *));
	*envp = calloc(request->envc + 1, sizeof(char *));
	if (!*argv || !*envp)
		return false;
	uint32_t total = 1 + request->argc + request->envc;
	for (uint32_t i = 0; i < total; i++) {
		char *nul = memchr(p, '\0', (size_t)(end - p));
		if (!nul)
			return false;
		if (i == 0)
			*cwd = p;
		else if (i <= request->argc)
			(*argv)[i - 1] = p;
		else
			(*envp)[i - 1 - request->argc] = p;
		p = nul + 1;
	}
	return true;
}

static struct child *free_slot(void)
{
	for (int i = 0; i < MAX_CHILDREN; i++)
		if (children[i].pid == 0)
			return &children[i];
	return NULL;
}

/* The daemon hung up. In a sandbox the PID namespace ends with this
 * process and takes every program along; unsandboxed (the benchmark's
 * comparison) each program's session is killed here, as well as can be. */
static _Noreturn void exit_all(int code)
{
	if (!isolated)
		for (int i = 0; i < MAX_CHILDREN; i++)
			if (children[i].pid > 0)
				kill(-children[i].pid, SIGKILL), kill(children[i].pid, SIGKILL);
	_exit(code);
}


/* A fork of the init that holds one program's whole tree (reaper.c) and
 * answers on its channel. The init's other descriptors are none of its
 * business: the control socket and the other programs' channels. */
static pid_t start_reaper(struct sandbox_child_setup *setup, int control)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	close(control);
	for (int i = 0; i < MAX_CHILDREN; i++)
		if (children[i].channel >= 0)
			close(children[i].channel);
	sandbox_reaper_run(setup, signal_fd);
}

static void handle_request(int control)
{
	static char buffer[SANDBOX_MAX_REQUEST];
	char control_data[CMSG_SPACE(sizeof(int) * SANDBOX_REQUEST_FDS)];
	struct iovec iov = { .iov_base = buffer, .iov_len = sizeof(buffer) };
	struct msghdr msg = { .msg_iov = &iov,
			      .msg_iovlen = 1,
			      .msg_control = control_data,
			      .msg_controllen = sizeof(control_data) };
	ssize_t len = recvmsg(control, &msg, MSG_CMSG_CLOEXEC);
	if (len == 0)
		exit_all(0); /* the daemon is gone: so is the sandbox */
	if (len < 0) {
		if (errno == EINTR || errno == EAGAIN)
			return;
		exit_all(1);
	}
	int fds[SANDBOX_REQUEST_FDS];
	int fd_count = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		int n = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		for (int i = 0; i < n; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (fd_count < SANDBOX_REQUEST_FDS)
				fds[fd_count++] = fd;
			else
				close(fd);
		}
	}
	if (fd_count == 0)
		return; /* nowhere to answer */

	struct sandbox_request request;
	const char *cwd = "";
	char **argv = NULL, **envp = NULL;
	struct child *slot = NULL;
	if ((msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
	    !parse_request(buffer, (size_t)len, &request, &cwd, &argv, &envp) ||
	    (int)request.fd_count != fd_count) {
		sandbox_spawn_reply(fds[0], SANDBOX_REPLY_FAILED, EINVAL, "malformed request");
		goto done;
	}
	if (!(slot = free_slot())) {
		sandbox_spawn_reply(fds[0], SANDBOX_REPLY_FAILED, EAGAIN,
				    "the sandbox runs too many programs");
		goto done;
	}
	struct sandbox_child_setup setup = { .flags = request.flags,
					     .fds = fds,
					     .fd_count = fd_count,
					     .status_fd = -1,
					     .cwd = cwd,
					     .argv = argv,
					     .envp = envp };
	if (isolated && (request.flags & SANDBOX_REQUEST_OWN_TREE)) {
		pid_t reaper = start_reaper(&setup, control);
		if (reaper < 0) {
			sandbox_spawn_reply(fds[0], SANDBOX_REPLY_FAILED, errno, "cannot fork");
			goto done;
		}
		/* The reaper answers on the channel; here it is only reaped. */
		*slot = (struct child){ .pid = reaper, .channel = -1, .detached = true };
		goto done;
	}
	pid_t pid = sandbox_spawn_program(&setup, fds[0]);
	if (pid < 0)
		goto done;
	sandbox_spawn_reply(fds[0], SANDBOX_REPLY_STARTED, pid, NULL);
	/* Detached programs keep their channel too, so whoever still listens
	 * hears how they ended; its close does not end them. */
	slot->pid = pid;
	slot->detached = request.flags & SANDBOX_REQUEST_DETACHED;
	slot->channel = fds[0];
	fds[0] = -1;
done:
	for (int i = 0; i < fd_count; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(argv);
	free(envp);
}

static void reap(void)
{
	int status;
	pid_t pid;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (int i = 0; i < MAX_CHILDREN; i++) {
			if (children[i].pid == pid) {
				if (children[i].channel >= 0) {
					sandbox_spawn_reply(children[i].channel,
							    SANDBOX_REPLY_EXITED, status, NULL);
					close(children[i].channel);
				}
				children[i].pid = 0;
				children[i].channel = -1;
			}
		}
	}
}

/* A message or hangup on a child's channel. */
static void handle_channel(struct child *c)
{
	struct sandbox_reply message;
	ssize_t got = recv(c->channel, &message, sizeof(message), MSG_DONTWAIT);
	if (got < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (got == (ssize_t)sizeof(message) && message.type == SANDBOX_SIGNAL &&
	    message.value > 0 && message.value < NSIG) {
		kill(c->pid, message.value);
		return;
	}
	/* Hung up (or spoke nonsense): the program goes, unless it was
	 * detached. Its exit is reaped later; nobody listens for it any more. */
	if (!c->detached)
		kill(c->pid, SIGKILL);
	close(c->channel);
	c->channel = -1;
}


int sandbox_init_main(int argc, char **argv)
{
	bool fuse_root = argc == 5 && strcmp(argv[2], SANDBOX_ROOT_FUSE_MODE) == 0;
	if (argc != 2 && !fuse_root) {
		fprintf(stderr, "sandbox-init: internal command of lizard-bridge\n");
		return 2;
	}
	int control = atoi(argv[0]);
	isolated = strcmp(argv[1], "isolated") == 0;
	/* Before anything of the sandbox's runs: its root (root_fuse.h). */
	if (fuse_root && (!isolated || !sandbox_root_fuse_mount(argv[3], argv[4]) ||
			  !sandbox_root_fuse_nest(control)))
		return 1;
	if (!sandbox_spawn_prepare(isolated, fuse_root))
		return 1;
	for (int i = 0; i < MAX_CHILDREN; i++)
		children[i].channel = -1;

	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	signal(SIGPIPE, SIG_IGN);
	signal_fd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	if (signal_fd < 0 || fcntl(control, F_SETFD, FD_CLOEXEC) != 0) {
		perror("sandbox-init");
		return 1;
	}

	/* The daemon waits for this before sending anything. */
	if (send(control, "R", 1, MSG_NOSIGNAL) != 1)
		return 1;

	static struct pollfd pfds[MAX_CHILDREN + 2];
	static int owner[MAX_CHILDREN + 2];
	for (;;) {
		int n = 0;
		pfds[n++] = (struct pollfd){ .fd = control, .events = POLLIN };
		pfds[n++] = (struct pollfd){ .fd = signal_fd, .events = POLLIN };
		for (int i = 0; i < MAX_CHILDREN; i++) {
			if (children[i].pid > 0 && children[i].channel >= 0) {
				owner[n] = i;
				pfds[n++] = (struct pollfd){ .fd = children[i].channel,
							     .events = POLLIN };
			}
		}
		if (poll(pfds, (nfds_t)n, -1) < 0) {
			if (errno == EINTR)
				continue;
			exit_all(1);
		}
		if (pfds[1].revents) {
			struct signalfd_siginfo info;
			while (read(signal_fd, &info, sizeof(info)) > 0)
				;
			reap();
		}
		for (int i = 2; i < n; i++)
			if (pfds[i].revents && children[owner[i]].channel == pfds[i].fd)
				handle_channel(&children[owner[i]]);
		if (pfds[0].revents & (POLLHUP | POLLERR) && !(pfds[0].revents & POLLIN))
			exit_all(0);
		if (pfds[0].revents & POLLIN)
			handle_request(control);
	}
}
