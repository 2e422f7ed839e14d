/* SPDX-License-Identifier: MIT */
/* Bounded walks over directory trees that a sandbox wrote, so a hostile
 * tree (symlinks out, mount points, millions of files, absurd depth) can
 * neither send us elsewhere nor stall the daemon: nothing follows a symlink
 * or crosses into another file system, and every walk has a ceiling. */
#ifndef LIZARD_SANDBOX_TREE_H
#define LIZARD_SANDBOX_TREE_H

#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"

/* Directories open at once in a walk; sizes count no deeper. */
#define SANDBOX_TREE_MAX_DEPTH 128

/* Bytes on disk (allocated blocks) of everything under path, counting at
 * most max_entries entries; *complete is false when the ceiling (entries or
 * depth) cut the walk short, and the sum is then a lower bound. */
bool sandbox_tree_size(const char *path, uint64_t max_entries, uint64_t *bytes, bool *complete,
		       struct error *err);

/* Gives path and everything below it (symlinks themselves, never what they
 * point to; one file system; at most max_entries entries and
 * SANDBOX_TREE_MAX_DEPTH levels) to uid:gid. Fails on the first entry that
 * cannot be given, or when a ceiling is reached. */
bool sandbox_tree_chown(const char *path, unsigned uid, unsigned gid, uint64_t max_entries,
			struct error *err);

/* Shifts the owners of path and everything below it, in the same bounds:
 * a uid or gid in [from, from + count) becomes to + (it - from), others
 * stay. Set-user and set-group bits, which a change of owner clears, are
 * set again. */
bool sandbox_tree_shift(const char *path, uint32_t from, uint32_t to, uint32_t count,
			uint64_t max_entries, struct error *err);

/* Removes path and everything below it, at any depth. Fails, naming what
 * stayed, on an entry it may not remove. */
bool sandbox_tree_remove(const char *path, struct error *err);

#endif
