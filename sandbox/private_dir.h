/* SPDX-License-Identifier: MIT */
/* A sandbox's private directory on the host, under the daemon's own
 * (stale.h: sandbox_base_dir()/<pid>/s-XXXXXX), and what goes into it: the
 * session's disk when it has one (disk.h), the run, home, workspace and
 * tmp directories, the log, and a volume bound or mounted at dir/volume.
 * The private directory stays the daemon's (0711: the sandbox's uid may
 * pass through to bind what is inside); only run, home and workspace are
 * the sandbox's, and those the daemon holds by descriptor from the moment
 * they are made, opening nothing in them by path. */
#ifndef LIZARD_SANDBOX_PRIVATE_DIR_H
#define LIZARD_SANDBOX_PRIVATE_DIR_H

#include "util/error.h"

#include <stdbool.h>
#include <stdint.h>

struct sandbox;

struct sandbox_disk_want;

/* Makes the private directory and in it the disk (disk->bytes 0: none),
 * which may come with a root made ahead, then s's (root_ahead.h). */
bool sandbox_private_dir_make(struct sandbox *s, const struct sandbox_disk_want *disk,
			      struct error *err);
/* Then, on the disk or beside it, the sandbox's directories given to its
 * host uid, and opens the log; fills the paths and descriptors of s. */
bool sandbox_private_dir_fill(struct sandbox *s, struct error *err);
/* Takes the volume directory at s->workspace: gives its files to the
 * sandbox's host uid (the last session that used it had another) and, for
 * an isolated sandbox under a uid of its own, binds it at dir/volume,
 * where that uid can reach it, for bwrap to bind at /workspace. */
bool sandbox_private_dir_take_volume(struct sandbox *s, struct error *err);
/* Mounts a volume's disk image at dir/volume for bwrap to bind at
 * /workspace, and gives its files to the sandbox's host uid. */
bool sandbox_private_dir_mount_volume_image(struct sandbox *s, const char *image,
					    struct error *err);
/* Ends the host's binding at dir/volume once bwrap has its own; nothing
 * when there is none. */
bool sandbox_private_dir_unbind_volume(struct sandbox *s, struct error *err);

#endif
