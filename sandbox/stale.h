/* SPDX-License-Identifier: MIT */
/* What dead daemons' sandboxes left on the host, and the janitor that
 * clears what this daemon leaves. */
#ifndef LIZARD_SANDBOX_STALE_H
#define LIZARD_SANDBOX_STALE_H

#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

/* Removes the private directories of daemons that died without cleaning
 * up (killed with SIGKILL, where no janitor got to it). Call once at
 * start. How many it removed; err holds the first that could not be. */
unsigned sandbox_remove_stale(struct error *err);
/* Forks the janitor, which removes this daemon's private directories, and
 * unmounts what is mounted in them, once the daemon has died, however it
 * died. Call once at start, before any thread (stale.c). */
bool sandbox_janitor_start(struct error *err);

/* The parent of every daemon's directories for this host user, made if
 * need be and checked to be this user's. */
bool sandbox_base_dir(char *out, size_t size, struct error *err);

#endif
