/* SPDX-License-Identifier: MIT */
/* Starting one program in the sandbox, shared by the init and the reapers
 * it forks (see spawn.h): the child's way to its exec, with its
 * descriptors in place, and what the init learns of how that went.
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
#include "sandbox/spawn.h"

#include "sandbox/files_inside.h"
#include "sandbox/idmap.h"
#include "sandbox/port_inside.h"
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
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#endif

#define CHILD_SETUP_TIMEOUT_MS 10000
/* The stack a CLONE_VM child runs on until its exec: child_main's frames
 * and snprintf's, with room for a sanitizer's redzones. */
#define CHILD_STACK_SIZE (256 * 1024)

extern char **environ;

static bool isolated;           /* false: the benchmark's unsandboxed mode, no user switch */
static int user_namespace = -1; /* the user's namespace (isolated only) */
/* Root's programs' namespace when root must not hold the sandbox's own
 * capabilities (a FUSE root: root_fuse.h), else -1. */
static int root_namespace = -1;
static _Alignas(64) char child_stack[CHILD_STACK_SIZE];

void sandbox_spawn_reply(int channel, uint32_t type, int32_t value, const char *text)
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

static bool read_string(const char *path, char *out, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, out, size - 1);
	close(fd);
	if (n <= 0)
		return false;
	out[n] = '\0';
	return true;
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

/* In a child of the init, once: a nested user namespace that maps every id
 * of the sandbox's to itself; its maps are the init's to write, from the
 * sandbox's namespace (one process may map only its own id). */
static const char *make_root_namespace(void)
{
	if (prctl(PR_SET_DUMPABLE, 1) != 0)
		return "cannot make the process dumpable";
	if (unshare(CLONE_NEWUSER) != 0)
		return "cannot create root's namespace (unshare CLONE_NEWUSER)";
	return NULL;
}

/* This namespace's ranges of file mapped onto themselves in pid's new
 * namespace. */
static bool map_identity_of(pid_t pid, const char *file)
{
	char path[64], map[512];
	if (sandbox_identity_map(file, map, sizeof(map)) == 0)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	return write_string(path, map);
}

/* The init's side: maps the ids of the sandbox's namespace to themselves
 * in pid's new one. */
static bool map_identity(pid_t pid)
{
	return map_identity_of(pid, "uid_map") && map_identity_of(pid, "gid_map");
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

/* How readily the memory cgroup's OOM killer takes a program, so that
 * running out of memory costs a program and not the session: every
 * program is raised well above the init (0, or -1000 where the daemon may
 * lower it), the desktop's own (OOM_LAST) a little, so that they go last.
 * Raising needs no privilege; lowering back to what it was needs none
 * either (only going under the lowest value a privileged writer set
 * does). Best effort. */
#define OOM_SCORE_PROGRAM "600"
#define OOM_SCORE_DESKTOP "100"

static const char *oom_score(const struct sandbox_child_setup *c)
{
	return c->flags & SANDBOX_REQUEST_OOM_LAST ? OOM_SCORE_DESKTOP : OOM_SCORE_PROGRAM;
}

static _Noreturn void child_main(const struct sandbox_child_setup *c)
{
	int status_fd = c->status_fd;
	/* Before any of the program's own code runs. While this child
	 * borrows the init's memory the kernel gives the init the value too;
	 * the init puts its own back once the exec is done. */
	if (isolated)
		write_string("/proc/self/oom_score_adj", oom_score(c));
	/* First, while the namespace's descriptor is still where it was. */
	if (isolated && !(c->flags & SANDBOX_REQUEST_AS_ROOT)) {
		const char *failed = become_user();
		if (failed)
			child_fail(status_fd, failed);
	} else if (isolated && root_namespace >= 0 && setns(root_namespace, CLONE_NEWUSER) != 0) {
		child_fail(status_fd, "cannot enter root's namespace (setns)");
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
		_exit(sandbox_port_inside_is(c->argv) ? sandbox_port_inside_run(c->argv)
						      : sandbox_files_inside_run(c->argv));
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

pid_t sandbox_spawn_program(struct sandbox_child_setup *setup, int channel)
{
	int status_pipe[2];
	if (pipe2(status_pipe, O_CLOEXEC) != 0) {
		sandbox_spawn_reply(channel, SANDBOX_REPLY_FAILED, errno, "cannot create a pipe");
		return -1;
	}
	setup->status_fd = status_pipe[1];
	char **init_environ = environ;
	char init_score[16] = "";
	if (isolated)
		read_string("/proc/self/oom_score_adj", init_score, sizeof(init_score));
	pid_t pid = start_child(setup);
	int start_errno = pid < 0 ? errno : 0; /* no child: errno is the init's own */
	close(status_pipe[1]);
	if (pid < 0) {
		close(status_pipe[0]);
		sandbox_spawn_reply(channel, SANDBOX_REPLY_FAILED, start_errno, "cannot fork");
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
	/* The exec is done (or the child gone): this write is the init's alone. */
	if (isolated && init_score[0])
		write_string("/proc/self/oom_score_adj", init_score);
	close(status_pipe[0]);
	if (!started) {
		sandbox_spawn_reply(channel, SANDBOX_REPLY_FAILED, error, why);
		return -1;
	}
	return pid;
}

/* The user's namespace (root's with for_root), made by a short-lived child
 * (the init itself must stay the sandbox's root) and kept open by the
 * init: -1 with a message on stderr, which the daemon shows, when the
 * kernel refuses. */
static int open_user_namespace(bool for_root)
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
		const char *failed = for_root ? make_root_namespace() : make_user_namespace();
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
	if (got == 1 && message[0] == '\0' && for_root && !map_identity(pid)) {
		snprintf(message, sizeof(message), "%d cannot write the maps of root's namespace",
			 errno);
	} else if (got == 1 && message[0] == '\0') {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			snprintf(message, sizeof(message), "%d cannot open %s", errno, path);
	} else if (got > 0) {
		message[got] = '\0';
	} else {
		snprintf(message, sizeof(message),
			 "%d the user's namespace was not made within %d ms", ETIMEDOUT,
			 CHILD_SETUP_TIMEOUT_MS);
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

bool sandbox_spawn_prepare(bool sandboxed, bool nest_root)
{
	isolated = sandboxed;
	return !isolated || ((user_namespace = open_user_namespace(false)) >= 0 &&
			     (!nest_root || (root_namespace = open_user_namespace(true)) >= 0));
}
