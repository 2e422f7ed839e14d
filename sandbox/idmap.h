/* SPDX-License-Identifier: MIT */
/* The user namespace a process runs in, as its /proc/self maps say: for
 * the init (spawn.c, root_fuse.c). */
#ifndef LIZARD_SANDBOX_IDMAP_H
#define LIZARD_SANDBOX_IDMAP_H

#include <stddef.h>

/* This user namespace's ranges of file (uid_map or gid_map) as the map of
 * a nested namespace onto them, id for id, in out: one line per range, as
 * the kernel takes no range across two of the parent's. The number of ids
 * mapped, 0 when the file cannot be read. */
unsigned long sandbox_identity_map(const char *file, char *out, size_t size);

#endif
