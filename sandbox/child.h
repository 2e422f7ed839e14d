/* SPDX-License-Identifier: MIT */
/* What every child the daemon forks for a sandbox does before its exec
 * (bwrap, slirp4netns), and waiting for one with a deadline. */
#ifndef LIZARD_SANDBOX_CHILD_H
#define LIZARD_SANDBOX_CHILD_H

#include <sys/types.h>

struct sandbox_cgroup_join;
/* In a child between fork and exec (async-signal-safe; _exits on failure):
 * joins the cgroup (join may be NULL), becomes host uid, dies with the
 * daemon (its thread parent, which must still be there), and gets its own
 * process group and an empty signal mask. */
void sandbox_child_setup(const struct sandbox_cgroup_join *join, uid_t uid, pid_t parent);

/* Waits for a child to exit, killing it after timeout_ms. */
void sandbox_reap(pid_t pid, int timeout_ms);

#endif
