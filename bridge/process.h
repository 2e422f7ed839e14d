/* Child processes of a desktop: each in its own process group, killed with
 * the daemon (PR_SET_PDEATHSIG), reaped when stopped. */
#ifndef LIZARD_BRIDGE_PROCESS_H
#define LIZARD_BRIDGE_PROCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct bridge_process {
	pid_t pid;  /* 0 once it has exited and been reaped */
	pid_t pgid; /* its group, which may outlive it (children it left) */
	char name[32];
};

struct bridge_spawn {
	const char *name;         /* for logs */
	char *const *argv;        /* argv[0] is looked up in PATH */
	char *const *envp;        /* the whole environment: nothing is inherited */
	const char *cwd;          /* may be NULL */
	const char *log_path;     /* stdout and stderr go here (appended); NULL: /dev/null */
	int pass_fd;              /* kept open in the child as fd 3, or -1 */
};

/* Call from a thread that lives as long as the process should: the kernel
 * sends the death signal when the forking thread exits. */
bool bridge_process_spawn(struct bridge_process *process, const struct bridge_spawn *spawn,
			  char *err, size_t err_size);
/* True while it runs; reaps it when it has exited. */
bool bridge_process_running(struct bridge_process *process);
/* True while it or anything left in its group runs. */
bool bridge_process_group_alive(struct bridge_process *process);
/* SIGTERM to the whole group, SIGKILL after grace_ms, then reaped. */
void bridge_process_stop(struct bridge_process *process, int grace_ms);

/* Runs to completion and collects stdout (at most max_output bytes, NUL
 * terminated, caller frees). Killed after timeout_ms. Returns false with a
 * message when it could not start, timed out, or exited non-zero. */
bool bridge_process_run(const struct bridge_spawn *spawn, char **output, size_t max_output,
			int timeout_ms, char *err, size_t err_size);

#endif
