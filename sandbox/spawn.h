/* SPDX-License-Identifier: MIT */
/* Starting one program in the sandbox: what the init (init.c) and the
 * reapers it forks (reaper.c) share. The init process only. */
#ifndef LIZARD_SANDBOX_SPAWN_H
#define LIZARD_SANDBOX_SPAWN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* What a child needs from the request until its exec. fds[0] is the
 * program's channel; fds[1..] become its fds 0.. */
struct sandbox_child_setup {
	uint32_t flags;
	int *fds;
	int fd_count;
	int status_fd; /* set by sandbox_spawn_program */
	const char *cwd;
	char **argv;
	char **envp;
};

/* Once, first: whether programs are isolated (false only in the
 * benchmark's plain mode) and, if so, the user's namespace they join
 * (made here). With nest_root, root's programs run in a nested namespace
 * that maps every id to itself, holding no capability over the sandbox's
 * own mounts and processes (the init's, and a FUSE root's server:
 * root_fuse.h). False, with a message on stderr, when the kernel refuses. */
bool sandbox_spawn_prepare(bool isolated, bool nest_root);

/* One reply on a program's channel; a channel that is gone is fine. */
void sandbox_spawn_reply(int channel, uint32_t type, int32_t value, const char *text);

/* Starts the program and waits until it has exec'd: its pid, or -1 once
 * FAILED, with what failed, went to channel. */
pid_t sandbox_spawn_program(struct sandbox_child_setup *setup, int channel);

#endif
