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
 * that takes it only attaches that mount. Private to sandbox/. */
#ifndef LIZARD_SANDBOX_DISK_SPARE_H
#define LIZARD_SANDBOX_DISK_SPARE_H

#include "util/error.h"

#include <stdbool.h>
#include <stdint.h>

/* Puts an image of bytes, its root owned by the daemon's user, at name in
 * dir_fd (where in messages): the spare of daemon_dir when there is one,
 * else a new one; then has the next spare made. When the spare was
 * mounted ahead, *mount_fd is that detached mount (disk.h: the caller
 * attaches and closes it) and *loop its loop device; else *mount_fd is -1
 * and the caller mounts the image. */
bool sandbox_disk_spare_take(const char *daemon_dir, int dir_fd, const char *where,
			     const char *name, uint64_t bytes, int *mount_fd, int *loop,
			     struct error *err);

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
