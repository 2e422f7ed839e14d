/* SPDX-License-Identifier: MIT */
/* A writable root (root.h) made before a session asks for one: on a spare
 * disk (disk_spare.h), while no sandbox starts, together with the ids and
 * the user and network namespaces it is made for (userns.h). The session
 * that takes the disk takes all of it and starts without making any: the
 * ids, the namespaces and six overlays were about 7 of a 35 ms start.
 *
 * Only for a root daemon's sessions on the host's system directories,
 * whose root is known before they ask: a template built from a Debian
 * release and a restored snapshot make theirs at the start. The copies of
 * /etc it holds (root_copy.h) are checked when it is taken, and a root
 * made before the host's /etc changed is not used. The overlays are
 * mounted in the spare's detached tree, which needs Linux 6.15 or later
 * (move_mount onto a detached mount); before, sandbox_root_ahead_make
 * fails and sessions make their roots as before.
 *
 * Nothing of it outlives the daemon: the tree is mounted nowhere, the
 * namespaces and the lowers are descriptors, the ids a block of the
 * daemon's (uid.h). Private to sandbox/. */
#ifndef LIZARD_SANDBOX_ROOT_AHEAD_H
#define LIZARD_SANDBOX_ROOT_AHEAD_H

#include "util/error.h"

#include <stdbool.h>

struct sandbox;
struct sandbox_root_ahead;
struct sandbox_uid_range;

/* Makes a root in disk, the detached mount of a freshly formatted spare
 * (its rootfs and layers, as sandbox_root_make does), with ids from range
 * (NULL: the default); daemon_dir holds the copies of /etc. NULL and err
 * when it cannot. */
struct sandbox_root_ahead *sandbox_root_ahead_make(int disk, const char *daemon_dir,
						   const struct sandbox_uid_range *range,
						   struct error *err);

/* Whether a was made from range (NULL: the default) and the host's /etc
 * and debconf's database are still as its copies of them. */
bool sandbox_root_ahead_fits(struct sandbox_root_ahead *a, const struct sandbox_uid_range *range);

/* Gives s (whose disk, a's, is attached at s->disk_mount) a's ids,
 * namespaces and root, which sandbox_destroy lets go of; frees a. */
void sandbox_root_ahead_adopt(struct sandbox *s, struct sandbox_root_ahead *a);

/* Lets go of a root never taken (its mounts go with its disk's tree). */
void sandbox_root_ahead_free(struct sandbox_root_ahead *a);

#endif
