#include "process.h"

#include "../util/log.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Between fork and exec only async-signal-safe calls are allowed. out_fd,
 * when not -1, becomes stdout instead of the log. */
static void child_exec(const struct bridge_spawn *spawn, pid_t parent, int log_fd, int null_fd,
		       int out_fd)
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
	dup2(out_fd >= 0 ? out_fd : log_fd >= 0 ? log_fd : null_fd, STDOUT_FILENO);
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

static bool spawn_with_output(struct bridge_process *process, const struct bridge_spawn *spawn,
			      int out_fd, char *err, size_t err_size)
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
		child_exec(spawn, parent, log_fd, null_fd, out_fd);
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
	process->pgid = pid;
	log_debug("started %s (pid %d)", spawn->name, (int)pid);
	return true;
}

bool bridge_process_spawn(struct bridge_process *process, const struct bridge_spawn *spawn,
			  char *err, size_t err_size)
{
	return spawn_with_output(process, spawn, -1, err, err_size);
}

bool bridge_process_run(const struct bridge_spawn *spawn, char **output, size_t max_output,
			int timeout_ms, char *err, size_t err_size)
{
	*output = NULL;
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) != 0) {
		snprintf(err, err_size, "cannot create a pipe: %s", strerror(errno));
		return false;
	}
	struct bridge_process process;
	bool started = spawn_with_output(&process, spawn, fds[1], err, err_size);
	close(fds[1]);
	char *buffer = started ? malloc(max_output + 1) : NULL;
	if (!buffer) {
		close(fds[0]);
		if (started) {
			bridge_process_stop(&process, 0);
			snprintf(err, err_size, "out of memory");
		}
		return false;
	}

	size_t used = 0;
	bool timed_out = false;
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long elapsed = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
		if (elapsed >= timeout_ms) {
			timed_out = true;
			break;
		}
		struct pollfd pfd = { .fd = fds[0], .events = POLLIN };
		int n = poll(&pfd, 1, (int)(timeout_ms - elapsed));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			continue;
		char chunk[4096];
		ssize_t got = read(fds[0], chunk, sizeof(chunk));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		size_t keep = (size_t)got < max_output - used ? (size_t)got : max_output - used;
		memcpy(buffer + used, chunk, keep);
		used += keep;
	}
	close(fds[0]);
	buffer[used] = '\0';

	int status = 0;
	if (timed_out) {
		bridge_process_stop(&process, 0);
		snprintf(err, err_size, "%s did not finish within %d ms", spawn->name, timeout_ms);
		free(buffer);
		return false;
	}
	while (waitpid(process.pid, &status, 0) < 0 && errno == EINTR)
		;
	kill(-process.pid, SIGKILL);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(err, err_size, "%s failed (%s %d)", spawn->name,
			 WIFEXITED(status) ? "exit status" : "signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		free(buffer);
		return false;
	}
	*output = buffer;
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
		/* Its group may live on (a launcher that forked); it goes with
		 * the desktop. */
		process->pid = 0;
	}
	return false;
}

bool bridge_process_group_alive(struct bridge_process *process)
{
	return bridge_process_running(process) ||
	       (process->pgid > 0 && kill(-process->pgid, 0) == 0);
}

void bridge_process_stop(struct bridge_process *process, int grace_ms)
{
	pid_t pgid = process->pgid;
	if (pgid <= 0)
		return;
	bridge_process_running(process);
	kill(-pgid, SIGTERM);
	for (int waited = 0; process->pid > 0 && waited < grace_ms; waited += 10) {
		if (!bridge_process_running(process))
			break;
		struct timespec tick = { 0, 10 * 1000000L };
		nanosleep(&tick, NULL);
	}
	/* Whatever is left of the group, the process itself included. */
	kill(-pgid, SIGKILL);
	if (process->pid > 0) {
		while (waitpid(process->pid, NULL, 0) < 0 && errno == EINTR)
			;
		log_debug("%s (pid %d) killed", process->name, (int)process->pid);
	}
	process->pid = 0;
	process->pgid = 0;
}
