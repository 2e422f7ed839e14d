/* SPDX-License-Identifier: MIT */
#include "sandbox/command.h"

#include "sandbox/child.h"

#include "util/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static char *const command_env[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C", NULL };

/* posix_spawn: no copy of the daemon's page tables (a fork of it costs
 * tens of ms), which a snapshot's restore pays many times. */
static int spawn_plain(pid_t *pid, const char *const *argv, int keep_fd, int out)
{
	/* A group of its own (what a timeout kills, the shell's children
	 * too) and no signal blocked, whatever the calling thread blocks. */
	posix_spawnattr_t attributes;
	sigset_t none;
	sigemptyset(&none);
	posix_spawnattr_init(&attributes);
	posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
	posix_spawnattr_setpgroup(&attributes, 0);
	posix_spawnattr_setsigmask(&attributes, &none);
	posix_spawn_file_actions_t actions;
	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&actions, out, STDOUT_FILENO);
	posix_spawn_file_actions_adddup2(&actions, out, STDERR_FILENO);
	if (keep_fd >= 0) /* onto itself: it stays open across the exec */
		posix_spawn_file_actions_adddup2(&actions, keep_fd, keep_fd);
	int failed = posix_spawn(pid, argv[0], &actions, &attributes, (char *const *)argv,
				 command_env);
	posix_spawn_file_actions_destroy(&actions);
	posix_spawnattr_destroy(&attributes);
	return failed;
}

struct joined {
	const char *const *argv;
	int userns, out;
};

/* In a child sharing the daemon's memory until its exec (child.h):
 * system calls only. */
static void joined_main(void *arg)
{
	static const char refused[] = "cannot enter the sandbox's user namespace\n";
	const struct joined *j = arg;
	/* As spawn_plain's: a group of its own, no signal blocked (the
	 * start blocks them all), and gone with the daemon. */
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(j->out, STDOUT_FILENO) < 0 ||
	    dup2(j->out, STDERR_FILENO) < 0)
		_exit(126);
	if (setns(j->userns, CLONE_NEWUSER) != 0) {
		(void)!write(STDERR_FILENO, refused, sizeof(refused) - 1);
		_exit(126);
	}
	/* It holds capabilities there: nothing of the daemon's goes along. */
	close_range(3, ~0U, 0);
	execve(j->argv[0], (char *const *)j->argv, command_env);
	_exit(127);
}

/* As root of userns: a namespace the daemon owns, so joining it gives the
 * child every capability over the ids it maps and none elsewhere. */
static int spawn_joined(pid_t *pid, const char *const *argv, int userns, int out)
{
	struct joined j = { argv, userns, out };
	*pid = sandbox_child_start(joined_main, &j);
	return *pid < 0 ? errno : 0;
}

bool sandbox_command_run(const char *const *argv, int keep_fd, int timeout_ms, const char *what,
			 struct error *err)
{
	return sandbox_command_run_in(argv, keep_fd, -1, timeout_ms, what, err);
}

bool sandbox_command_run_in(const char *const *argv, int keep_fd, int userns, int timeout_ms,
			    const char *what, struct error *err)
{
	int out[2];
	if (pipe2(out, O_CLOEXEC) != 0)
		return error_set(err, errno, "cannot create a pipe for %s", what);
	pid_t pid;
	int failed = userns >= 0 ? spawn_joined(&pid, argv, userns, out[1])
				 : spawn_plain(&pid, argv, keep_fd, out[1]);
	close(out[1]);
	if (failed) {
		close(out[0]);
		return error_set(err, failed, "cannot start %s", what);
	}
	char said[300] = "";
	size_t used = 0;
	int64_t deadline = clock_monotonic_ms() + timeout_ms;
	for (;;) {
		int64_t left = deadline - clock_monotonic_ms();
		struct pollfd pfd = { .fd = out[0], .events = POLLIN };
		int n = left > 0 ? poll(&pfd, 1, (int)left) : 0;
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			kill(-pid, SIGKILL); /* what the shell started too */
			kill(pid, SIGKILL);
			break;
		}
		char chunk[256];
		ssize_t got = read(out[0], chunk, sizeof(chunk));
		if (got <= 0)
			break;
		size_t keep = (size_t)got < sizeof(said) - 1 - used ? (size_t)got
								    : sizeof(said) - 1 - used;
		memcpy(said + used, chunk, keep);
		used += keep;
		said[used] = '\0';
	}
	close(out[0]);
	/* A command that closed its output may still run: the same deadline
	 * holds for its end. */
	int64_t left = deadline - clock_monotonic_ms();
	int status = sandbox_reap_group(pid, left > 0 ? (int)left : 0);
	if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return true;
	for (size_t i = 0; i < used; i++)
		if (said[i] == '\n')
			said[i] = ' ';
	return error_set(err, 0, "%s failed%s%s", what,
			 said[0] ? ": " : " (it did not finish in time)", said);
}
