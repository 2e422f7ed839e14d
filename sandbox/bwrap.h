/* SPDX-License-Identifier: MIT */
/* bubblewrap as a sandbox runs it: where it is installed, what the kernel
 * must allow for it, and the child that runs it with its command line and
 * the descriptors it finds at fd 3 and up. Its options come through a pipe
 * (--args) and the small files it places inside (passwd, group,
 * resolv.conf) through pipes too (--ro-bind-data), so neither
 * /proc/1/cmdline inside (bwrap's own process) nor the mount table names
 * the private directory's host path for them. It binds the private
 * directories at the sandbox's inside paths (inside_home, ...: for an
 * isolated sandbox, the fixed ones of sandbox.h). A sandbox that is not
 * isolated (the benchmark's comparison mode) starts its init directly,
 * with the same control socket at fd 3. */
#ifndef LIZARD_SANDBOX_BWRAP_H
#define LIZARD_SANDBOX_BWRAP_H

#include "util/error.h"

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

struct sandbox;
struct sandbox_cgroup_join;

/* What the child finds at fds 3 and up. */
enum sandbox_bwrap_fd {
	SANDBOX_BWRAP_FD_CONTROL = 3, /* the init's control socket */
	SANDBOX_BWRAP_FD_EXE,         /* the daemon's binary: the init */
	SANDBOX_BWRAP_FD_INFO,        /* bwrap writes the sandbox's host pid here */
	SANDBOX_BWRAP_FD_ARGS,
	SANDBOX_BWRAP_FD_PASSWD,
	SANDBOX_BWRAP_FD_GROUP,
	SANDBOX_BWRAP_FD_SECCOMP, /* the system call filter (seccomp.h) */
	SANDBOX_BWRAP_FD_USERNS,  /* the sandbox's user namespace (userns.h) */
	SANDBOX_BWRAP_FD_RESOLV,  /* with a network only */
	SANDBOX_BWRAP_FD_END
};

struct sandbox_bwrap_fds {
	/* fd[i] becomes 3 + i in the child; fd[0] is the control socket, the
	 * only one without bwrap. */
	int fd[SANDBOX_BWRAP_FD_END - SANDBOX_BWRAP_FD_CONTROL];
	int count;
	int info_read;  /* the daemon's end of --info-fd, or -1 */
	int args_write; /* the daemon's end of --args, until its options go */
	/* The host's dynamic loader as an image's sandbox sees it, and its
	 * directory ("" when unknown): found before the child starts, which
	 * may only make system calls. */
	char loader[PATH_MAX], libraries[PATH_MAX];
};

/* The installed bwrap, or NULL. */
const char *sandbox_bwrap_path(void);

/* The host's dynamic loader as it appears inside at SANDBOX_HOST_USR
 * (root_fuse.h), for a merged /usr; "" when unknown. */
void sandbox_bwrap_host_loader(char *out, size_t size);
/* Whether the kernel allows the user namespaces bwrap needs; says which
 * sysctl refuses them otherwise, before bwrap fails less clearly. */
bool sandbox_bwrap_check_kernel(struct error *err);

/* Fills fds with control and, for an isolated sandbox, what bwrap reads:
 * the binary, the --info-fd pipe, the --args pipe, passwd and group, the
 * seccomp filter (taken over) and, with a network, resolv.conf (which sets
 * s->has_dns). Needs s's ids, private directory and s->root_fuse, not its
 * root: bwrap may start (exec and load its libraries) while the root is
 * made, and waits for its options (sandbox_bwrap_send_args). False when
 * one of them could not be made, with errno of the last failure; fds
 * holds what was made either way (close it with sandbox_bwrap_close_fds,
 * and info_read and args_write apart). */
bool sandbox_bwrap_prepare(struct sandbox *s, int control, int seccomp_fd,
			   struct sandbox_bwrap_fds *fds);
/* Writes bwrap's options, now that everything they name is made, and
 * closes args_write. On a failure (a command line that does not fit, a
 * failed write) args_write stays open: the caller kills bwrap, then
 * closes it, so that bwrap never reads the end of a cut command line. */
bool sandbox_bwrap_send_args(struct sandbox *s, struct sandbox_bwrap_fds *fds, struct error *err);
/* Closes fd[] (what went to the child), not info_read. */
void sandbox_bwrap_close_fds(struct sandbox_bwrap_fds *fds);
/* In the child, before exec: only system calls (child.h). Sets the child
 * up (child.h: cgroup, host uid, death with parent), moves fds into place
 * and execs bwrap (a NULL bwrap: the init itself, not isolated). */
_Noreturn void sandbox_bwrap_exec(const struct sandbox *s, const char *bwrap,
				  const struct sandbox_bwrap_fds *fds, pid_t parent,
				  const struct sandbox_cgroup_join *join);
/* The host pid of the sandbox's first process, from bwrap's --info-fd
 * JSON ({"child-pid": N, ...}), written before the init starts; 0 when
 * none came within timeout_ms. */
pid_t sandbox_bwrap_read_pid(int info_read, int timeout_ms);

#endif
