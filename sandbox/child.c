/* SPDX-License-Identifier: MIT */
/* What every child the daemon forks for a sandbox does before its exec,
 * and waiting for one with a deadline (see child.h). */
#include "sandbox/child.h"

#include "sandbox/cgroup.h"

#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void sandbox_child_setup(const struct sandbox_cgroup_join *join, uid_t uid, pid_t parent)
{
	/* Before the uid change: cgroup.procs belongs to the daemon's user. */
	if (join && sandbox_cgroup_join_self(join) != 0)
		_exit(125);
	if (uid != geteuid()) {
		if (setgroups(0, NULL) != 0 || setresgid(uid, uid, uid) != 0 ||
		    setresuid(uid, uid, uid) != 0)
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

void sandbox_reap(pid_t pid, int timeout_ms)
{
	int status;
	for (int waited = 0; waitpid(pid, &status, WNOHANG) == 0; waited += 5) {
		if (waited >= timeout_ms) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			return;
		}
		struct timespec tick = { 0, 5 * 1000000L };
		nanosleep(&tick, NULL);
	}
}
