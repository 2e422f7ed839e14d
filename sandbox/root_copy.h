/* SPDX-License-Identifier: MIT */
/* The lower layers of a writable root (root.h) for the host's directories
 * that hold secrets, /etc and debconf's database. An idmapped lower hands
 * the host root's files to the sandbox's root, so these lowers are not the
 * host's live directories but copies of what others may read there, made
 * by the daemon: a file that appears in the host's /etc later, or that
 * only the host's root may read, is never in one.
 *
 * A copy serves every session for as long as the host's directory stays
 * as it was: each take walks the directory's metadata (as cheap as listing
 * it) and copies only when something changed. Copies live in
 * daemon_dir/lowers, are removed once no session holds them and a newer
 * one exists, and go with the daemon's directory. Private to sandbox/. */
#ifndef LIZARD_SANDBOX_ROOT_COPY_H
#define LIZARD_SANDBOX_ROOT_COPY_H

#include "util/error.h"

#include <stdbool.h>
#include <stddef.h>

/* Puts in out (size bytes) the path of a copy, current with host_path, of
 * what others may read of it; the caller holds it, as the lower of its
 * mounts, until sandbox_root_copy_release. */
bool sandbox_root_copy_take(const char *daemon_dir, const char *host_path, char *out, size_t size,
			    struct error *err);

/* Lets go of a copy taken; "" is ignored. */
void sandbox_root_copy_release(const char *path);

#endif
