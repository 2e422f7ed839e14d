/* SPDX-License-Identifier: MIT */
/* Starting the children the daemon runs for a sandbox (bwrap,
 * slirp4netns), what every one does before its exec, and waiting for one
 * with a deadline. */
#ifndef LIZARD_SANDBOX_CHILD_H
#define LIZARD_SANDBOX_CHILD_H

#include <sys/types.h>

struct sandbox_cgroup_join;
/* Runs fn(arg), which must exec or _exit, in a child that shares the
 * daemon's memory until then, as posix_spawn does: a fork() of the daemon
 * copies its page tables, 3 to 25 ms on a busy machine. The calling
 * thread waits until the child execs or exits; the daemon's other threads
 * run on, so fn may only make system calls (no malloc, no locks). Signals
 * are blocked around the start and the child's handlers go back to their
 * defaults before fn runs. The child's pid, or -1 and errno. */
pid_t sandbox_child_start(void (*fn)(void *), void *arg);

/* In a child between its start and exec (async-signal-safe; _exits on failure):
 * joins the cgroup (join may be NULL), becomes host uid, dies with the
 * daemon (its thread parent, which must still be there), and gets its own
 * process group and an empty signal mask. */
void sandbox_child_setup(const struct sandbox_cgroup_join *join, uid_t uid, pid_t parent);

/* Waits for a child to exit, killing it after timeout_ms: its wait
 * status, or -1 when it had to be killed (or was not the caller's). */
int sandbox_reap(pid_t pid, int timeout_ms);
/* The same for a child that leads its own process group: at the deadline
 * the whole group is killed, before the child is reaped. */
int sandbox_reap_group(pid_t pid, int timeout_ms);

#endif
