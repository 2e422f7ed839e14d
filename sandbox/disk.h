/* SPDX-License-Identifier: MIT */
/* Disks: a session's HOME, /tmp and /workspace live on a filesystem of a
 * fixed size, so that what its programs write stops at the size (ENOSPC
 * inside) instead of filling the host. The filesystem is ext4 in a sparse
 * image file, made with Debian's mke2fs and mounted through a loop device
 * (the kernel enforces the size; the host pays only for blocks in use, and
 * with discard, blocks freed inside are given back). A persistent volume
 * is such an image too, with a journal.
 *
 * Mounting needs root on the host (loop devices and ext4 are not for user
 * namespaces): sandbox_disk_available says whether this daemon can, and
 * why not. Images live in directories the daemon owns and the sandbox
 * cannot write; they are opened without following links. Private to
 * sandbox/ but for sandbox_disk_available. */
#ifndef LIZARD_SANDBOX_DISK_H
#define LIZARD_SANDBOX_DISK_H

#include "util/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Whether this daemon can make and mount disks; why not in err. */
bool sandbox_disk_available(struct error *err);

/* Makes an image of bytes in dir_fd named name (a new file: an existing one
 * is an error), ext4 with its root directory owned by uid:uid, with a
 * journal when the image outlives sessions. where names the directory in
 * messages. */
bool sandbox_disk_make(int dir_fd, const char *where, const char *name, uint64_t bytes, uid_t uid,
		       bool journal, struct error *err);

/* Mounts image name of dir_fd at mount_point (a directory of the
 * daemon's) without suid or devices. The loop device lets go of the image
 * when the last mount of it goes, in whichever mount namespace that is;
 * *loop is its number, for sandbox_disk_released. */
bool sandbox_disk_mount(int dir_fd, const char *where, const char *name, const char *mount_point,
			int *loop, struct error *err);

/* The same in two steps: the image mounted nowhere yet (a descriptor of
 * the detached mount, which goes with its last descriptor when never
 * attached), then attached at mount_point. */
int sandbox_disk_mount_detached(int dir_fd, const char *where, const char *name, int *loop,
				struct error *err);
bool sandbox_disk_attach(int mount_fd, const char *mount_point, struct error *err);

/* Whether loop device number loop no longer holds an image (every mount of
 * it has gone), waiting up to timeout_ms: an image must not be mounted
 * twice at once. */
bool sandbox_disk_released(int loop, int timeout_ms);

/* Whether a loop device holds the image at path (a session's mount of it
 * has not gone yet). */
bool sandbox_disk_attached(const char *path);

/* Bytes the filesystem at fd holds in use and in all; false when it
 * cannot tell. */
bool sandbox_disk_usage(int fd, uint64_t *used, uint64_t *total);

#endif
