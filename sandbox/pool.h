/* SPDX-License-Identifier: MIT */
/* Sandboxes started ahead (--warm-sandboxes): a thread of the pool's
 * keeps a few plain sandboxes started (network on, no volume, nothing
 * restored, and the default size's disk: what create_session
 * template=base asks for by default), and a session that asks for no more
 * takes one instead of starting a sandbox then, which takes tens of
 * milliseconds. Its cgroup is given to it then (sandbox_adopt_cgroup:
 * nothing of the session has run yet). Each is used once; one whose init
 * has gone, or whose copy of the host's /etc is no longer current
 * (root_copy.h), is thrown away instead when a session asks; one whose
 * init has gone is also found, and replaced, within a second while it
 * waits. */
#ifndef LIZARD_SANDBOX_POOL_H
#define LIZARD_SANDBOX_POOL_H

#include "sandbox/sandbox.h"

#include <stdbool.h>
#include <stdint.h>

#define SANDBOX_POOL_MAX 8

/* Starts keeping count sandboxes ready (at most SANDBOX_POOL_MAX; 0:
 * none, the default) for sessions whose sandbox_options are plain, with
 * uid_range (which must stay valid) and disks of disk_bytes (0: none).
 * Once, from the thread that will call sandbox_pool_stop. */
bool sandbox_pool_start(unsigned count, const struct sandbox_uid_range *uid_range,
			uint64_t disk_bytes, struct error *err);

/* A ready sandbox for options, with their envs added, or NULL when the
 * options are not plain or none is ready (then sandbox_create); asks for
 * another either way. */
struct sandbox *sandbox_pool_take(const struct sandbox_options *options);

/* Destroys one ready sandbox, if there is one, for a session whose own
 * start found no free uids (err->code EUSERS, uid.h): that one held some;
 * the caller tries once more, then calls sandbox_pool_resume. Until then
 * the pool starts no other in its place, which would take the uids
 * first. */
bool sandbox_pool_give_back(void);
/* After a give-back's retry, failed or not: the pool fills again. */
void sandbox_pool_resume(void);

/* Ends the sandboxes kept ready and the thread that starts them; after
 * every session's sandbox is destroyed (the thread's end kills what it
 * started, through the death signal). */
void sandbox_pool_stop(void);

#endif
