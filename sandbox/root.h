/* SPDX-License-Identifier: MIT */
/* A sandbox's writable root: its programs may change any file of the
 * system (root inside can `dpkg -i` and `apt-get install`), and what they
 * change goes into the session's own layer, gone with the session; the
 * host's files never change.
 *
 * The root is a directory of the session's (dir/rootfs, or on the disk
 * when the session has one, so that it counts against the disk's size)
 * that bwrap binds at /, with an overlay over each host system directory
 * (/usr, /etc, and the package databases under /var). The lower layer of
 * each overlay is the host's directory (for /etc and debconf's database, a
 * copy of what others may read there: root_copy.h) through an idmapped
 * mount by the sandbox's own user namespace (userns.h): a file the host's
 * uid u owns shows inside as owned by u (root, _apt, man...), so the
 * sandbox's root may change it and give files to those users (copied up
 * into the session's layer), while no host id the sandbox does not own is
 * mapped in its user namespace. The upper layers lie in
 * layers/, which the daemon owns and the sandbox never sees but through
 * the overlays.
 *
 * Idmapped mounts need the daemon to be root (CAP_SYS_ADMIN in the host's
 * user namespace) and the host's filesystem to support them (ext4, xfs,
 * btrfs, tmpfs). A daemon that is not root gets the same layers with
 * fuse-overlayfs processes inside the sandbox instead (root_fuse.h), the
 * host's files all shown as root's. sandbox_root_available says what is
 * missing when neither works; the host's system directories stay
 * read-only then, as before.
 *
 * The overlays are mounted on the host in rootfs, itself bound on itself,
 * and unmounted there all at once (one unmount of that bind) as soon as
 * bwrap holds its own copy, before any program of the sandbox runs: from
 * then on they live only in the sandbox's mount namespace and go with it,
 * even when the daemon is killed. Private to sandbox/. */
#ifndef LIZARD_SANDBOX_ROOT_H
#define LIZARD_SANDBOX_ROOT_H

#include "sandbox/root_fuse.h"
#include "util/error.h"

#include <stdbool.h>

struct sandbox;

/* Whether this daemon can give sandboxes a writable root; why not in err. */
bool sandbox_root_available(struct error *err);

/* Makes s's root (rootfs, the layers and the overlays mounted on the host);
 * fills s->rootfs. With restore_dir, the snapshot's files (snapshot.h) go
 * into the layers and the sandbox's directories first. */
bool sandbox_root_make(struct sandbox *s, const char *restore_dir, struct error *err);

/* Makes, empty, the directories a writable root is made of on disk, the
 * root of a session's disk formatted ahead (disk_spare.h); a start that
 * takes it gives them their owners and modes. ext4 spreads the directories
 * at its top over its block groups, and the first allocation in a group
 * reads that group's bitmap through the loop device: about a millisecond
 * each, most of making a root on a fresh disk, now spent ahead. Nothing
 * when this daemon's roots are not overlays it mounts itself. */
void sandbox_root_prepare_disk(int disk);

/* Unmounts the host's copies of the overlays (bwrap has its own, or the
 * sandbox failed); nothing when there are none. */
void sandbox_root_release_host(struct sandbox *s);

/* Lets go of the copies s's lowers were made of (root_copy.h): once no
 * process of the sandbox is left. */
void sandbox_root_release_copies(struct sandbox *s);

/* Whether the copies s's lowers are made of are still current with the
 * host's directories (a sandbox started ahead: pool.h). */
bool sandbox_root_copies_current(struct sandbox *s);

/* Whether a daemon that is not root gives its sandboxes fuse-overlayfs
 * roots (root_fuse.h); before the first session. On by default;
 * --no-fuse-root keeps the host's system directories, read-only. */
void sandbox_root_allow_fuse(bool allow);

/* Whether this daemon's writable roots are fuse-overlayfs ones made
 * inside the sandbox (root_fuse.h) instead of overlays it mounts itself. */
bool sandbox_root_uses_fuse(void);

#endif
