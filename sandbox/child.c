/* SPDX-License-Identifier: MIT */
/* What every child the daemon forks for a sandbox does before its exec,
 * and waiting for one with a deadline (see child.h). */
#include "sandbox/child.h"

#include "sandbox/cgroup.h"

#include "util/clock.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void sandbox_child_setup(const struct sandbox_cgroup_join *join, uid_t uid, pid_t parent)
{
	/* Before the uid change: cgroup.procs belongs to the daemon's user. */
	if (join && sandbox_cgroup_join_self(join) != 0)
		_exit(125);
	/* Raw calls: glibc's would change every thread it takes for its
	 * process's, which in a child sharing the daemon's memory are the
	 * daemon's. */
	if (uid != geteuid()) {
		if (syscall(SYS_setgroups, 0, NULL) != 0 ||
		    syscall(SYS_setresgid, uid, uid, uid) != 0 ||
		    syscall(SYS_setresuid, uid, uid, uid) != 0)
			_exit(126);
	}
	/* After the uid change, which clears it. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(126);
	setpgid(0, 0);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

#define CHILD_STACK_SIZE (256 * 1024)

struct start {
	void (*fn)(void *);
	void *arg;
};

static int child_entry(void *data)
{
	const struct start *start = data;
	for (int sig = 1; sig < _NSIG; sig++) {
		struct sigaction action;
		if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, NULL, &action) != 0 ||
		    action.sa_handler == SIG_DFL || action.sa_handler == SIG_IGN)
			continue;
		action = (struct sigaction){ .sa_handler = SIG_DFL };
		sigaction(sig, &action, NULL);
	}
	start->fn(start->arg);
	_exit(127);
}

pid_t sandbox_child_start(void (*fn)(void *), void *arg)
{
#ifdef __SANITIZE_ADDRESS__
	/* AddressSanitizer keeps one stack per thread, which a child sharing
	 * the thread's memory on a stack of its own confuses ("ignoring
	 * requested __asan_handle_no_return"): the sanitizer build forks. */
	pid_t forked = fork();
	if (forked == 0) {
		struct start start = { fn, arg };
		child_entry(&start);
	}
	return forked;
#else
	void *stack = mmap(NULL, CHILD_STACK_SIZE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		return -1;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	struct start start = { fn, arg };
	pid_t pid = clone(child_entry, (char *)stack + CHILD_STACK_SIZE,
			  CLONE_VM | CLONE_VFORK | SIGCHLD, &start);
	int saved = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	munmap(stack, CHILD_STACK_SIZE);
	errno = saved;
	return pid;
#endif
}

static int reap(pid_t pid, int timeout_ms, bool group)
{
	/* A pidfd says when the child ends; without one (a kernel before
	 * 5.3), short sleeps do. */
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	int64_t deadline = clock_monotonic_ms() + timeout_ms;
	int status = -1;
	for (;;) {
		pid_t got = waitpid(pid, &status, WNOHANG);
		if (got == pid || (got < 0 && errno != EINTR))
			break;
		int64_t left = deadline - clock_monotonic_ms();
		if (left <= 0) {
			if (group)
				kill(-pid, SIGKILL); /* while its id still names the group */
			kill(pid, SIGKILL);
			while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
				;
			status = -1;
			break;
		}
		if (pidfd >= 0)
			poll(&(struct pollfd){ .fd = pidfd, .events = POLLIN }, 1, (int)left);
		else
			nanosleep(&(struct timespec){ .tv_nsec = 5 * 1000000L }, NULL);
	}
	if (pidfd >= 0)
		close(pidfd);
	return status;
}

int sandbox_reap(pid_t pid, int timeout_ms)
{
	return reap(pid, timeout_ms, false);
}

int sandbox_reap_group(pid_t pid, int timeout_ms)
{
	return reap(pid, timeout_ms, true);
}
