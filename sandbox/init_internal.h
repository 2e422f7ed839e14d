/* What the sandbox's init (init.c) shares with the reapers it forks
 * (reaper.c). Private to sandbox/. */
#ifndef LIZARD_SANDBOX_INIT_INTERNAL_H
#define LIZARD_SANDBOX_INIT_INTERNAL_H

#include <stdint.h>
#include <sys/types.h>

/* What a child needs from the request until its exec. fds[0] is the
 * program's channel; fds[1..] become its fds 0.. */
struct sandbox_child_setup {
	uint32_t flags;
	int *fds;
	int fd_count;
	int status_fd; /* set by sandbox_init_start_program */
	const char *cwd;
	char **argv;
	char **envp;
};

/* One reply on a program's channel; a channel that is gone is fine. */
void sandbox_init_reply(int channel, uint32_t type, int32_t value, const char *text);

/* Starts the program and waits until it has exec'd: its pid, or -1 once
 * FAILED, with what failed, went to channel. */
pid_t sandbox_init_start_program(struct sandbox_child_setup *setup, int channel);

/* In a fork of the init: holds the tree of the program of setup, answering
 * on its channel (setup->fds[0]); signal_fd reads SIGCHLD, which is
 * blocked. Never returns. */
_Noreturn void sandbox_reaper_run(struct sandbox_child_setup *setup, int signal_fd);

#endif
