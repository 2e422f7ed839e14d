/* SPDX-License-Identifier: MIT */
/* One program's whole process tree (exec's), held by a reaper of its own
 * inside the session's PID namespace. The reaper is a fork of the init
 * that makes itself a child subreaper (PR_SET_CHILD_SUBREAPER) before it
 * starts the program: whatever the program starts and leaves behind, even
 * after setsid or a double fork, becomes the reaper's child when its parent
 * ends, so none of it gets out of reach. When the program ends, or the
 * daemon kills it or hangs up, the reaper kills its children round after
 * round until it has none, and only then reports the program's end, as the
 * end of a PID namespace would.
 *
 * Not a PID namespace per program, as it was: under the session's /proc,
 * such a program's getpid() named another process or none (ps failed with
 * "lookup self", $$ named bwrap). Here a program's pids are the ones /proc,
 * ps and kill know. The price: a program can kill its reaper (they are the
 * same host user), and what it started then lives on until the session
 * ends. */
#include "sandbox/reaper.h"
#include "sandbox/spawn.h"
#include "sandbox/protocol.h"
#include "util/io.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
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

/* How long one round of killing waits for a death before it looks again. */
#define KILL_ROUND_MS 100

/* The parent of the process named pid_text, from /proc/PID/stat ("PID
 * (COMM) STATE PPID ..."; COMM may hold anything, so the last ')' ends
 * it), or -1 when it is gone. */
static pid_t parent_of(const char *pid_text)
{
	char path[64], stat[512];
	snprintf(path, sizeof(path), "/proc/%s/stat", pid_text);
	if (io_read_small_file(path, stat, sizeof(stat)) < 0)
		return -1;
	char *end = strrchr(stat, ')');
	char state;
	int parent;
	if (!end || sscanf(end + 1, " %c %d", &state, &parent) != 2)
		return -1;
	return (pid_t)parent;
}

/* SIGKILL to every child of this process. None of them can be reaped
 * meanwhile (only this process reaps them), so no pid is reused under it. */
static void kill_children(void)
{
	pid_t self = getpid();
	DIR *proc = opendir("/proc");
	if (!proc)
		return; /* the next round looks again */
	struct dirent *entry;
	while ((entry = readdir(proc))) {
		char *end;
		long pid = strtol(entry->d_name, &end, 10);
		if (end != entry->d_name && !*end && pid > 0 && parent_of(entry->d_name) == self)
			kill((pid_t)pid, SIGKILL);
	}
	closedir(proc);
}

/* Reaps the children that have ended, keeping the program's wait status.
 * False once this process has no children at all. */
static bool reap_children(pid_t program, int *status, bool *program_ended)
{
	for (;;) {
		int child_status;
		pid_t pid = waitpid(-1, &child_status, WNOHANG);
		if (pid == program) {
			*status = child_status;
			*program_ended = true;
		}
		if (pid > 0 || (pid < 0 && errno == EINTR))
			continue;
		return !(pid < 0 && errno == ECHILD);
	}
}

static void drain(int signal_fd)
{
	struct signalfd_siginfo info;
	while (read(signal_fd, &info, sizeof(info)) > 0)
		;
}

/* A message from the daemon: true to go on waiting, false to end the tree
 * (SIGKILL asked for, or the channel hung up, then *channel is -1). */
static bool take_message(int *channel, pid_t program)
{
	struct sandbox_reply message;
	ssize_t got = recv(*channel, &message, sizeof(message), MSG_DONTWAIT);
	if (got < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (got == (ssize_t)sizeof(message) && message.type == SANDBOX_SIGNAL &&
	    message.value > 0 && message.value < NSIG) {
		if (message.value == SIGKILL)
			return false;
		kill(program, message.value);
		return true;
	}
	/* Hung up, or spoke nonsense: nobody listens for the end. */
	close(*channel);
	*channel = -1;
	return false;
}

_Noreturn void sandbox_reaper_run(struct sandbox_child_setup *setup, int signal_fd)
{
	int channel = setup->fds[0];
	prctl(PR_SET_NAME, "lizard-reaper");
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
		sandbox_spawn_reply(channel, SANDBOX_REPLY_FAILED, errno,
				    "cannot become the program's reaper (PR_SET_CHILD_SUBREAPER)");
		_exit(1);
	}
	pid_t program = sandbox_spawn_program(setup, channel);
	if (program < 0)
		_exit(1);
	/* The streams are the program's: they close when its tree is gone. */
	for (int i = 1; i < setup->fd_count; i++)
		close(setup->fds[i]);
	sandbox_spawn_reply(channel, SANDBOX_REPLY_STARTED, program, NULL);

	int status = 0;
	bool ended = false;
	while (!ended) {
		struct pollfd pfds[2] = { { .fd = signal_fd, .events = POLLIN },
					  { .fd = channel, .events = POLLIN } };
		/* No deadline here: the daemon keeps the program's time and
		 * ends it through the channel. */
		if (poll(pfds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfds[0].revents) {
			drain(signal_fd);
			reap_children(program, &status, &ended);
		}
		if (!ended && pfds[1].revents && !take_message(&channel, program))
			break;
	}
	/* Each round's dead hand their children to this process, and the next
	 * round kills those, until none are left. */
	while (reap_children(program, &status, &ended)) {
		kill_children();
		struct pollfd pfd = { .fd = signal_fd, .events = POLLIN };
		(void)!poll(&pfd, 1, KILL_ROUND_MS);
		drain(signal_fd);
	}
	if (channel >= 0)
		sandbox_spawn_reply(channel, SANDBOX_REPLY_EXITED, status, NULL);
	_exit(0);
}
