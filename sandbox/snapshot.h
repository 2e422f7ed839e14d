/* SPDX-License-Identifier: MIT */
/* A sandbox's files kept apart: its writable root's layers (root.h) and
 * its HOME, /tmp and /workspace (unless a volume is there), copied into a
 * directory of the daemon's, and copied back into a new sandbox before it
 * starts (sandbox_options.restore_dir). Each snapshot is whole (the layers
 * of what it came from plus the session's changes, flattened), so no
 * chain of layers grows: a restore copies one snapshot, and a snapshot of
 * a restored session is again one level over its template.
 *
 * The copies are `cp -a` (owners, modes, links as links, the overlay's
 * whiteouts and opaque markers) from directories only the daemon can
 * name: the layers, and the disk's own HOME, tmp and workspace entries,
 * which the sandbox can change below but not replace. The files of the
 * sandbox's host uid become the new sandbox's (chown --from). Memory and
 * processes are not kept (pause does that). Private to sandbox/ but for
 * the calls below. */
#ifndef LIZARD_SANDBOX_SNAPSHOT_H
#define LIZARD_SANDBOX_SNAPSHOT_H

#include "util/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sandbox;

/* Copies the sandbox's files into dest, a new empty directory of the
 * daemon's. Freeze the sandbox's processes first for a consistent copy.
 * Needs a writable root (says why not). */
bool sandbox_snapshot_save(struct sandbox *sandbox, const char *dest, struct error *err);

/* Copies a snapshot's files (dir, made by sandbox_snapshot_save) into s,
 * made but not yet started, giving them to s's host uid. */
bool sandbox_snapshot_restore(struct sandbox *s, const char *dir, struct error *err);

/* The image (a Debian release's root) a snapshot or template in dir rests
 * on: its own dir/image, or the one dir/lower names; "" when it rests on
 * the host's system. */
void sandbox_snapshot_image(const char *dir, char *out, size_t size);

#endif
