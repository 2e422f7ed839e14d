/* SPDX-License-Identifier: MIT */
/* Subordinate ids for a daemon that is not root: when /etc/subuid and
 * /etc/subgid give its user a range of at least SANDBOX_SUBID_COUNT ids
 * and newuidmap and newgidmap (Debian's uidmap) are there, its sandboxes'
 * user namespaces map root inside to the daemon's own uid, as without
 * them, and ids 1 to SANDBOX_SUBID_COUNT inside to that range, so that
 * root inside may give files to the system's users (dpkg's maintainer
 * scripts do). Every session of the daemon uses the same range: they
 * already share its uid. Files the sandbox gives to those ids are the
 * range's on the host, which the daemon's uid may not remove: that
 * happens in a namespace with the same map (sandbox_subid_remove).
 * Private to sandbox/. */
#ifndef LIZARD_SANDBOX_SUBID_H
#define LIZARD_SANDBOX_SUBID_H

#include "sandbox/uid.h"
#include "util/error.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define SANDBOX_SUBID_COUNT 65535u

struct sandbox_subids {
	uid_t uid; /* the daemon's own, root inside */
	gid_t gid;
	uint32_t uid_start, gid_start; /* ids 1.. inside */
};

/* The first of spans (one owner's lines of /etc/subuid or /etc/subgid:
 * uid.h) of at least SANDBOX_SUBID_COUNT ids, its start in *start; false
 * when there is none. */
bool sandbox_subid_pick(const struct sandbox_id_spans *spans, uint32_t *start);

/* This daemon's subordinate ids, found once (false: a root daemon, or
 * none, or no newuidmap/newgidmap). */
bool sandbox_subids(struct sandbox_subids *out);

/* A user namespace with that map (written by newuidmap and newgidmap,
 * each given a deadline): a descriptor (close-on-exec), or -1 and err. */
int sandbox_subid_userns(const struct sandbox_subids *ids, struct error *err);

/* Removes path and all below it, as sandbox_tree_remove does, and when
 * that is refused and the daemon has subordinate ids, again as root of a
 * namespace with their map (rm -rf, with a deadline). */
bool sandbox_subid_remove(const char *path, struct error *err);

#endif
