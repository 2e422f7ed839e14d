/* SPDX-License-Identifier: MIT */
/* One Python context's kernel: ipykernel started inside the session's
 * sandbox, as its user, on a connection file the daemon writes into the
 * sandbox's run directory (a random key, ipc sockets there); each socket
 * opened once by inode when the kernel has made them all, checked to be a
 * socket of the sandbox's user, and reached through /proc/self/fd/N, so
 * nothing the sandbox renames or links there later is ever dialled. Also
 * the bridge's own silent executes that set a call's envs and put back
 * what was there. Used by one thread at a time (the context's turn). */
#ifndef LIZARD_BRIDGE_SESSION_CODE_KERNEL_H
#define LIZARD_BRIDGE_SESSION_CODE_KERNEL_H

#include "sandbox/process.h"
#include "util/error.h"

#include <stdbool.h>

struct kernel_client;
struct sandbox;

struct code_kernel {
	unsigned generation; /* one per start: its files get new names */
	char prefix[80];     /* kernel-<context>-<generation> */
	struct sandbox_process process;
	int fds[5];                   /* its sockets, by inode */
	struct kernel_client *client; /* NULL when not running */
};

void code_kernel_init(struct code_kernel *kernel);
/* Starts it in cwd and waits until it is ready (kernel_client_wait_ready). */
bool code_kernel_start(struct code_kernel *kernel, struct sandbox *sandbox, const char *context,
		       const char *cwd, struct error *err);
/* Kills its process tree and lets go of its sockets; with sandbox, its
 * files go too (NULL: the sandbox is going anyway). */
void code_kernel_stop(struct code_kernel *kernel, struct sandbox *sandbox);

/* envs (NAME=value) into the kernel's os.environ for one call, and back. */
bool code_kernel_set_envs(struct code_kernel *kernel, const char *const *envs, int cancel_fd,
			  struct error *err);
void code_kernel_restore_envs(struct code_kernel *kernel, int cancel_fd);

#endif
