/* SPDX-License-Identifier: MIT */
/* A session's disk (disk.h) without waiting for mke2fs: the daemon keeps
 * one formatted image of each size it has given out in its own directory,
 * and a session takes it by renaming it into its private directory (same
 * file system), while a thread formats the next one once no sandbox is
 * starting (sandbox_disk_spare_hold). An image made ahead is sparse: a
 * few MiB on the host whatever its size. A session that finds
 * none (the first of its size, or one right after another) makes its own
 * as before. The thread also mounts the spare, detached (mounted nowhere,
 * so a daemon that dies lets it go with its descriptor), and a session
 * that takes it only attaches that mount. A root daemon's spares also
 * carry a root made ahead (root_ahead.h) for the sessions that can use
 * one; the others take plain spares. Private to sandbox/. */
#ifndef LIZARD_SANDBOX_DISK_SPARE_H
#define LIZARD_SANDBOX_DISK_SPARE_H

#include "util/error.h"

#include <stdbool.h>
#include <stdint.h>

struct sandbox_root_ahead;
struct sandbox_uid_range;

/* What a session asks of a spare: its size, and whether a root made ahead
 * (root_ahead.h) with ids from range (NULL: the default) may come with it. */
struct sandbox_disk_want {
	uint64_t bytes;
	bool root;
	const struct sandbox_uid_range *range;
};

/* What came with it: when the spare was mounted ahead, mount_fd is that
 * detached mount (disk.h: the caller attaches and closes it) and loop its
 * loop device, else mount_fd is -1 and the caller mounts the image; root
 * is the root made in it, or NULL. */
struct sandbox_disk_taken {
	int mount_fd, loop;
	struct sandbox_root_ahead *root;
};

/* Puts an image of want->bytes, its root owned by the daemon's user, at
 * name in dir_fd (where in messages): the spare of daemon_dir of that kind
 * when there is one, else a new one; then has the next spare made. A
 * spare whose root does not fit (root_ahead.h) is not taken. */
bool sandbox_disk_spare_take(const char *daemon_dir, int dir_fd, const char *where,
			     const char *name, const struct sandbox_disk_want *want,
			     struct sandbox_disk_taken *taken, struct error *err);

/* Lets go of the roots made ahead and not taken, their spares with them,
 * so that their ids are free for a session that needs them (a session
 * that cannot use one, when no other ids are left); whether there was one. */
bool sandbox_disk_spare_drop_roots(void);

/* A sandbox starts (hold) and has started or failed (release): spares
 * are formatted between starts, not during one. Every hold has its
 * release. */
void sandbox_disk_spare_hold(void);
void sandbox_disk_spare_release(void);

/* Removes daemon_dir when it is empty and no spare is being made there:
 * a thread waiting to make one holds the directory's descriptor, and
 * would find it gone (and every later start would format its own disk). */
void sandbox_disk_spare_remove_dir(const char *daemon_dir);

#endif
