/* The sandbox's init: the lizard-bridge binary itself, run inside the
 * sandbox as `lizard-bridge sandbox-init FD MODE`, as the sandbox's root.
 * It is single-threaded and does one thing: start the programs the daemon
 * asks for (see protocol.h), report when they end, and kill them when
 * asked or when the daemon hangs up. Every program of a session starts
 * here, so all of them live in the session's PID namespace; a program whose
 * whole tree must end with it (exec) starts under a reaper of its own
 * (reaper.c) instead of in a PID namespace of its own.
 *
 * A program runs as the sandbox's root or, by default, as its user. The
 * user is made with a user namespace nested in the sandbox's, mapping
 * SANDBOX_USER_ID to the sandbox's root: a rootless sandbox can map just
 * one host uid, and this way files show as owned by the user to the user
 * and by root to root, while neither is anything on the host. That
 * namespace is made once, when the init starts, and each user program
 * joins it (setns) on its way to exec, so the session's user programs
 * share it as one user's programs share a machine: making one per program
 * cost a namespace and three /proc writes on every exec.
 *
 * Programs start with clone(CLONE_VM): the child borrows the init's memory
 * until its exec instead of copying the init's page tables, which is most
 * of what a fork of this (large) binary costs. The init waits for that
 * exec (or the child's end) before it touches memory again, so the two
 * never run on the same data. errno is shared too: while a child may run,
 * the init reads it for nothing more than retrying an interrupted poll.
 * Built-in file operations, which run to their end without an exec, fork
 * as before. */
#include "sandbox/sandbox.h"

#include "sandbox/files_inside.h"
#include "sandbox/init_internal.h"
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
#define CHILD_SETUP_TIMEOUT_MS 10000
/* The stack a CLONE_VM child runs on until its exec: child_main's frames
 * and snprintf's, with room for a sanitizer's redzones. */
#define CHILD_STACK_SIZE (256 * 1024)

extern char **environ;

struct child {
	pid_t pid;
	int channel;
	bool detached; /* lives on when its channel closes */
};

static struct child children[MAX_CHILDREN];
static bool isolated; /* false: the benchmark's unsandboxed mode, no user switch */
static int user_namespace = -1; /* the user's namespace (isolated only) */
static int signal_fd = -1; /* SIGCHLD, which stays blocked */
static _Alignas(64) char child_stack[CHILD_STACK_SIZE];

void sandbox_init_reply(int channel, uint32_t type, int32_t value, const char *text)
{
	struct sandbox_reply r = { .type = type, .value = value };
	if (text)
		snprintf(r.text, sizeof(r.text), "%s", text);
	/* A daemon that hung up does not matter here: the channel's close is
	 * seen by poll. */
	(void)!send(channel, &r, sizeof(r), MSG_NOSIGNAL | MSG_DONTWAIT);
}

static bool write_string(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	size_t len = strlen(text);
	bool ok = write(fd, text, len) == (ssize_t)len;
	return close(fd) == 0 && ok;
}

/* In a child of the init, once: the nested user namespace where the
 * sandbox's root (uid 0 here) appears as SANDBOX_USER_ID. Binaries owned by
 * the host's root make their processes non-dumpable, which would leave
 * /proc/self owned by a root that is not mapped here: dumpable again, the
 * maps can be written. */
static const char *make_user_namespace(void)
{
	char map[32];
	snprintf(map, sizeof(map), "%d 0 1\n", SANDBOX_USER_ID);
	if (prctl(PR_SET_DUMPABLE, 1) != 0)
		return "cannot make the process dumpable";
	if (unshare(CLONE_NEWUSER) != 0)
		return "cannot create the user's namespace (unshare CLONE_NEWUSER)";
	if (!write_string("/proc/self/uid_map", map))
		return "cannot write /proc/self/uid_map";
	if (!write_string("/proc/self/setgroups", "deny"))
		return "cannot write /proc/self/setgroups";
	if (!write_string("/proc/self/gid_map", map))
		return "cannot write /proc/self/gid_map";
	return NULL;
}

/* In the child: join the user's namespace and become the user. The init
 * owns that namespace, so joining needs no more than the init's root. */
static const char *become_user(void)
{
	if (setns(user_namespace, CLONE_NEWUSER) != 0)
		return "cannot enter the user's namespace (setns)";
	if (setresgid(SANDBOX_USER_ID, SANDBOX_USER_ID, SANDBOX_USER_ID) != 0 ||
	    setresuid(SANDBOX_USER_ID, SANDBOX_USER_ID, SANDBOX_USER_ID) != 0)
		return "cannot switch to the sandbox user";
	return NULL;
}

/* Failures before exec travel back on status_fd: errno then the stage. */
static _Noreturn void child_fail(int status_fd, const char *stage)
{
	int saved = errno;
	char message[256];
	int len = snprintf(message, sizeof(message), "%d %s", saved, stage);
	(void)!write(status_fd, message, (size_t)len);
	_exit(127);
}

static _Noreturn void child_main(const struct sandbox_child_setup *c)
{
	int status_fd = c->status_fd;
	/* First, while the namespace's descriptor is still where it was. */
	if (isolated && !(c->flags & SANDBOX_REQUEST_AS_ROOT)) {
		const char *failed = become_user();
		if (failed)
			child_fail(status_fd, failed);
	}
	/* The init blocks SIGCHLD and ignores SIGPIPE; nothing else of its
	 * signal setup survives exec. */
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	setsid();

	/* The received descriptors (and the status pipe) may sit on 0..3
	 * already: move them all above before putting each in its place. */
	int moved = fcntl(status_fd, F_DUPFD_CLOEXEC, 20);
	if (moved < 0)
		child_fail(status_fd, "cannot set up the status pipe");
	status_fd = moved;
	int high[SANDBOX_REQUEST_FDS];
	for (int i = 1; i < c->fd_count; i++)
		if ((high[i] = fcntl(c->fds[i], F_DUPFD_CLOEXEC, 20)) < 0)
			child_fail(status_fd, "cannot set up the standard streams");
	for (int i = 1; i < c->fd_count; i++)
		if (dup2(high[i], i - 1) < 0)
			child_fail(status_fd, "cannot set up the standard streams");
	/* Right after them; exec closes it, which tells the init it worked. */
	int keep_from = c->fd_count - 1;
	if (dup2(status_fd, keep_from) < 0)
		child_fail(status_fd, "cannot set up the status pipe");
	status_fd = keep_from;
	fcntl(status_fd, F_SETFD, FD_CLOEXEC);
	close_range((unsigned)keep_from + 1, ~0U, 0);

	if (c->cwd[0] && chdir(c->cwd) != 0)
		child_fail(status_fd, "cannot enter the working directory");
	/* With CLONE_VM this is the init's environ too: the init puts its own
	 * back once the exec is done. */
	environ = c->envp;
	if (c->flags & SANDBOX_REQUEST_BUILTIN) {
		close(status_fd);
		_exit(sandbox_files_inside_run(c->argv));
	}
	execvp(c->argv[0], c->argv);
	child_fail(status_fd, "cannot run the program");
}

static int child_entry(void *setup)
{
	child_main(setup);
}

/* Starts the child: a fork for built-ins, which run to their end here;
 * clone(CLONE_VM) for programs, which exec at once. */
static pid_t start_child(const struct sandbox_child_setup *setup)
{
	if (setup->flags & SANDBOX_REQUEST_BUILTIN) {
		pid_t pid = fork();
		if (pid == 0)
			child_main(setup);
		return pid;
	}
#ifdef __SANITIZE_ADDRESS__
	/* The last child's frames were never unwound: clear their poison. */
	__asan_unpoison_memory_region(child_stack, sizeof(child_stack));
#endif
	return clone(child_entry, child_stack + sizeof(child_stack), CLONE_VM | SIGCHLD,
		     (void *)setup);
}

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

/* Waits for the child's exec (status pipe closes) or its report of what
 * failed. */
static bool child_started(int status_fd, pid_t pid, char *why, size_t why_size, int *error)
{
	struct pollfd pfd = { .fd = status_fd, .events = POLLIN };
	int n;
	while ((n = poll(&pfd, 1, CHILD_SETUP_TIMEOUT_MS)) < 0 && errno == EINTR)
		;
	if (n == 0) {
		kill(pid, SIGKILL);
		*error = ETIMEDOUT;
		snprintf(why, why_size, "the program did not start within %d ms",
			 CHILD_SETUP_TIMEOUT_MS);
		return false;
	}
	char message[256];
	ssize_t got = read(status_fd, message, sizeof(message) - 1);
	if (got <= 0)
		return true;
	message[got] = '\0';
	char *stage = strchr(message, ' ');
	*error = atoi(message);
	snprintf(why, why_size, "%s: %s", stage ? stage + 1 : "setup failed", strerror(*error));
	return false;
}

/* How readily the memory cgroup's OOM killer takes a program, so that
 * running out of memory costs a program and not the session: every
 * program is raised well above the init (0, or -1000 where the daemon may
 * lower it), the desktop's own (OOM_LAST) a little, so that they go last.
 * Raising needs no privilege. Written here once the program runs its own
 * image: before its exec a CLONE_VM child shares the init's memory, and
 * the kernel would give the init the same value. Best effort: a program
 * that is not dumpable keeps what it inherited. */
#define OOM_SCORE_PROGRAM "600"
#define OOM_SCORE_DESKTOP "100"

static void set_oom_score(pid_t pid, bool last)
{
	char path[48];
	snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", (int)pid);
	write_string(path, last ? OOM_SCORE_DESKTOP : OOM_SCORE_PROGRAM);
}

pid_t sandbox_init_start_program(struct sandbox_child_setup *setup, int channel)
{
	int status_pipe[2];
	if (pipe2(status_pipe, O_CLOEXEC) != 0) {
		sandbox_init_reply(channel, SANDBOX_REPLY_FAILED, errno, "cannot create a pipe");
		return -1;
	}
	setup->status_fd = status_pipe[1];
	char **init_environ = environ;
	pid_t pid = start_child(setup);
	int start_errno = pid < 0 ? errno : 0; /* no child: errno is the init's own */
	close(status_pipe[1]);
	if (pid < 0) {
		close(status_pipe[0]);
		sandbox_init_reply(channel, SANDBOX_REPLY_FAILED, start_errno, "cannot fork");
		return -1;
	}
	char why[200];
	int error = 0;
	bool started = child_started(status_pipe[0], pid, why, sizeof(why), &error);
	if (!started) {
		/* A CLONE_VM child still runs on the init's memory until it is
		 * gone; it is on its way out (or killed), so this is short. Left
		 * a zombie for the SIGCHLD loop; nobody is told twice. */
		siginfo_t info;
		while (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT) < 0 && errno == EINTR)
			;
	}
	environ = init_environ;
	close(status_pipe[0]);
	if (!started) {
		sandbox_init_reply(channel, SANDBOX_REPLY_FAILED, error, why);
		return -1;
	}
	if (isolated)
		set_oom_score(pid, setup->flags & SANDBOX_REQUEST_OOM_LAST);
	return pid;
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
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control_data,
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
		sandbox_init_reply(fds[0], SANDBOX_REPLY_FAILED, EINVAL, "malformed request");
		goto done;
	}
	if (!(slot = free_slot())) {
		sandbox_init_reply(fds[0], SANDBOX_REPLY_FAILED, EAGAIN,
				   "the sandbox runs too many programs");
		goto done;
	}
	struct sandbox_child_setup setup = { .flags = request.flags, .fds = fds,
					     .fd_count = fd_count, .status_fd = -1, .cwd = cwd,
					     .argv = argv, .envp = envp };
	if (isolated && (request.flags & SANDBOX_REQUEST_OWN_TREE)) {
		pid_t reaper = start_reaper(&setup, control);
		if (reaper < 0) {
			sandbox_init_reply(fds[0], SANDBOX_REPLY_FAILED, errno, "cannot fork");
			goto done;
		}
		/* The reaper answers on the channel; here it is only reaped. */
		*slot = (struct child){ .pid = reaper, .channel = -1, .detached = true };
		goto done;
	}
	pid_t pid = sandbox_init_start_program(&setup, fds[0]);
	if (pid < 0)
		goto done;
	sandbox_init_reply(fds[0], SANDBOX_REPLY_STARTED, pid, NULL);
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
					sandbox_init_reply(children[i].channel,
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

/* The user's namespace, made by a short-lived child (the init itself must
 * stay the sandbox's root) and kept open by the init: -1 with a message on
 * stderr, which the daemon shows, when the kernel refuses. */
static int open_user_namespace(void)
{
	int ready[2], hold[2];
	if (pipe2(ready, O_CLOEXEC) != 0)
		goto fail;
	if (pipe2(hold, O_CLOEXEC) != 0) {
		close(ready[0]), close(ready[1]);
		goto fail;
	}
	pid_t pid = fork();
	if (pid < 0) {
		perror("sandbox-init: cannot fork");
		close(ready[0]), close(ready[1]), close(hold[0]), close(hold[1]);
		return -1;
	}
	if (pid == 0) {
		close(ready[0]), close(hold[1]);
		const char *failed = make_user_namespace();
		if (failed)
			child_fail(ready[1], failed);
		(void)!write(ready[1], "", 1);
		/* Alive, and so the namespace, until the init has it open. */
		char byte;
		(void)!read(hold[0], &byte, 1);
		_exit(0);
	}
	close(ready[1]), close(hold[0]);
	int fd = -1;
	char message[256] = "";
	struct pollfd pfd = { .fd = ready[0], .events = POLLIN };
	int n;
	while ((n = poll(&pfd, 1, CHILD_SETUP_TIMEOUT_MS)) < 0 && errno == EINTR)
		;
	ssize_t got = n > 0 ? read(ready[0], message, sizeof(message) - 1) : -1;
	if (got == 1 && message[0] == '\0') {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			snprintf(message, sizeof(message), "%d cannot open %s", errno, path);
	} else if (got > 0) {
		message[got] = '\0';
	} else {
		snprintf(message, sizeof(message), "%d the user's namespace was not made within %d ms",
			 ETIMEDOUT, CHILD_SETUP_TIMEOUT_MS);
	}
	if (fd < 0)
		kill(pid, SIGKILL);
	close(hold[1]);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	close(ready[0]);
	if (fd >= 0)
		return fd;
	char *stage = strchr(message, ' ');
	fprintf(stderr, "sandbox-init: %s: %s\n", stage ? stage + 1 : message,
		strerror(atoi(message)));
	return -1;
fail:
	perror("sandbox-init: cannot create a pipe");
	return -1;
}

int sandbox_init_main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "sandbox-init: internal command of lizard-bridge\n");
		return 2;
	}
	int control = atoi(argv[0]);
	isolated = strcmp(argv[1], "isolated") == 0;
	if (isolated && (user_namespace = open_user_namespace()) < 0)
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
