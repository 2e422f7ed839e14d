#include "process.h"

#include "../util/log.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Between fork and exec only async-signal-safe calls are allowed. */
static void child_exec(const struct bridge_spawn *spawn, pid_t parent, int log_fd, int null_fd)
{
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127); /* the parent died before the line above took effect */

	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);

	dup2(null_fd, STDIN_FILENO);
	dup2(log_fd >= 0 ? log_fd : null_fd, STDOUT_FILENO);
	dup2(log_fd >= 0 ? log_fd : null_fd, STDERR_FILENO);
	if (spawn->pass_fd >= 0) {
		if (spawn->pass_fd == 3) {
			int flags = fcntl(3, F_GETFD);
			fcntl(3, F_SETFD, flags & ~FD_CLOEXEC);
		} else {
			dup2(spawn->pass_fd, 3);
		}
		close_range(4, ~0U, 0);
	} else {
		close_range(3, ~0U, 0);
	}
	if (spawn->cwd && chdir(spawn->cwd) != 0)
		_exit(127);
	execvpe(spawn->argv[0], spawn->argv, spawn->envp);
	_exit(127);
}

bool bridge_process_spawn(struct bridge_process *process, const struct bridge_spawn *spawn,
			  char *err, size_t err_size)
{
	memset(process, 0, sizeof(*process));
	snprintf(process->name, sizeof(process->name), "%s", spawn->name);

	int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null_fd < 0) {
		snprintf(err, err_size, "cannot open /dev/null: %s", strerror(errno));
		return false;
	}
	int log_fd = -1;
	if (spawn->log_path) {
		log_fd = open(spawn->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		if (log_fd < 0)
			log_warn("cannot open %s for %s output: %s", spawn->log_path, spawn->name,
				 strerror(errno));
	}

	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0)
		child_exec(spawn, parent, log_fd, null_fd);
	int fork_errno = errno;
	close(null_fd);
	if (log_fd >= 0)
		close(log_fd);
	if (pid < 0) {
		snprintf(err, err_size, "cannot start %s: fork failed: %s", spawn->name,
			 strerror(fork_errno));
		return false;
	}
	/* Also from this side, so a kill right after spawn finds the group. */
	setpgid(pid, pid);
	process->pid = pid;
	log_debug("started %s (pid %d)", spawn->name, (int)pid);
	return true;
}

bool bridge_process_running(struct bridge_process *process)
{
	if (process->pid <= 0)
		return false;
	int status;
	pid_t r = waitpid(process->pid, &status, WNOHANG);
	if (r == 0)
		return true;
	if (r == process->pid) {
		if (WIFSIGNALED(status))
			log_info("%s (pid %d) was killed by signal %d", process->name,
				 (int)process->pid, WTERMSIG(status));
		else
			log_info("%s (pid %d) exited with status %d", process->name,
				 (int)process->pid, WEXITSTATUS(status));
		/* Its group may still hold children; they go with the desktop. */
		kill(-process->pid, SIGKILL);
		process->pid = 0;
	}
	return false;
}

void bridge_process_stop(struct bridge_process *process, int grace_ms)
{
	if (process->pid <= 0)
		return;
	pid_t pid = process->pid;
	kill(-pid, SIGTERM);
	for (int waited = 0; waited < grace_ms; waited += 10) {
		int status;
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid || (r < 0 && errno == ECHILD))
			goto reaped;
		struct timespec tick = { 0, 10 * 1000000L };
		nanosleep(&tick, NULL);
	}
	log_debug("%s (pid %d) ignored SIGTERM; killing", process->name, (int)pid);
	kill(-pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
reaped:
	/* Anything left in the group (children of the process) goes too. */
	kill(-pid, SIGKILL);
	process->pid = 0;
}
