/* SPDX-License-Identifier: MIT */
/* Programs in a sandbox: started through its init (protocol.h), each with a
 * channel of its own, so any thread can start, wait for and stop them. */
#ifndef LIZARD_SANDBOX_PROCESS_H
#define LIZARD_SANDBOX_PROCESS_H

#include <stdbool.h>

#include "util/error.h"

struct sandbox;

/* Programs. */
enum sandbox_user { SANDBOX_AS_USER, SANDBOX_AS_ROOT };

struct sandbox_command {
	const char *name;        /* for logs and messages */
	const char *const *argv; /* argv[0] looked up in PATH inside */
	const char *const *envs; /* NAME=value over the sandbox's; may be NULL */
	const char *cwd;         /* inside; NULL: SANDBOX_HOME */
	enum sandbox_user user;
	/* Killing it, or its end, kills everything it started (in the
	 * session's PID namespace, so its pids are those /proc shows). */
	bool own_process_tree;
	int stdin_fd, stdout_fd, stderr_fd; /* -1: /dev/null in, the sandbox log out */
	int fd3;                            /* becomes fd 3, or -1 */
	bool builtin;                       /* argv is a file operation (files_inside.h) */
	bool oom_last;                      /* the OOM killer takes it after every other */
};

struct sandbox_process {
	int channel; /* -1 when not running or released */
	int pid;     /* inside the sandbox */
	bool exited;
	int status; /* wait status once exited */
};

/* Starts a program that is stopped with sandbox_process_stop (or when the
 * sandbox ends). */
bool sandbox_spawn(struct sandbox *sandbox, const struct sandbox_command *command,
		   struct sandbox_process *process, struct error *err);
/* Starts a program that runs until it ends or the sandbox does. */
bool sandbox_launch(struct sandbox *sandbox, const struct sandbox_command *command,
		    struct error *err);

/* How a launched program did in its first moments. */
struct sandbox_launched {
	int pid;          /* inside the sandbox */
	bool exited;      /* within the watch: then status and output are set */
	int status;       /* wait status */
	char output[512]; /* the end of what it wrote to the sandbox log meanwhile */
};
/* sandbox_launch, then watches the program for watch_ms: a program that
 * cannot run usually says so and exits at once. Its stdout and stderr
 * must go to the sandbox log (-1). */
bool sandbox_launch_watched(struct sandbox *sandbox, const struct sandbox_command *command,
			    int watch_ms, struct sandbox_launched *out, struct error *err);
/* True while it runs; notices an exit without blocking. */
bool sandbox_process_running(struct sandbox_process *process);
/* Waits up to timeout_ms for it to end; true when it has. */
bool sandbox_process_wait(struct sandbox_process *process, int timeout_ms);
/* Sends sig to it. */
void sandbox_process_signal(struct sandbox_process *process, int sig);
/* Kills it (and, with its own process tree, all it started), waits up to
 * a second for the init to confirm, and lets go of it. */
void sandbox_process_stop(struct sandbox_process *process);

/* Sends the request that starts command to the sandbox's init, with
 * channel for its answers (detached: it lives on when the channel closes),
 * waiting up to wait_ms for room in the init's queue (0: not at all); a
 * full queue fails with err->code ENOBUFS. Inside sandbox/ only (process.c,
 * port.c). */
bool sandbox_send_request(struct sandbox *sandbox, const struct sandbox_command *command,
			  bool detached, int channel, int wait_ms, struct error *err);

#endif
