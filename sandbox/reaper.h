/* SPDX-License-Identifier: MIT */
/* A reaper: a fork of the init that holds one program's whole tree (a
 * child subreaper), so that what the program leaves behind, even after
 * setsid, ends with it. */
#ifndef LIZARD_SANDBOX_REAPER_H
#define LIZARD_SANDBOX_REAPER_H

struct sandbox_child_setup;

/* In a fork of the init: holds the tree of the program of setup, answering
 * on its channel (setup->fds[0]); signal_fd reads SIGCHLD, which is
 * blocked. Never returns. */
_Noreturn void sandbox_reaper_run(struct sandbox_child_setup *setup, int signal_fd);

#endif
