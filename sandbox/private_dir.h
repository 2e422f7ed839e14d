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

/* Makes the private directory and, on a disk of disk_bytes (0: none) or
 * beside it, the sandbox's directories given to its host uid, and opens
 * the log; fills the paths and descriptors of s. */
bool sandbox_private_dir_make(struct sandbox *s, uint64_t disk_bytes, struct error *err);
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
