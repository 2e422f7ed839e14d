/* SPDX-License-Identifier: MIT */
/* A writable root for a daemon that is not root (root.h). Such a daemon
 * can make neither idmapped mounts nor mounts on the host, so its
 * sandbox's overlays are made inside the sandbox: bwrap shows the lowers
 * and the session's layers under SANDBOX_ROOT_FUSE_DIR and /dev/fuse, and
 * the init, before anything else runs, starts one fuse-overlayfs over all
 * the overlaid directories (the host's files shown as root's), waits for
 * it to mount, and binds each directory's part over it. Every program
 * then runs below a second init, in a PID namespace nested in the
 * sandbox's, with a mount namespace and a /proc of their own: there the
 * staging directory and /dev/fuse are detached, and the server, which
 * runs as the programs' uid, is out of their sight, so no program signals
 * or traces it to hold the kernel in the middle of a copy. Root's
 * programs run in a nested user namespace too (spawn.h), as the user's
 * do, so that none holds a capability over the server or the sandbox's
 * mounts: none mounts a FUSE filesystem of its own. The server ends with
 * the sandbox's PID namespace. Shared by the daemon (root.c, bwrap.c) and
 * the init. */
#ifndef LIZARD_SANDBOX_ROOT_FUSE_H
#define LIZARD_SANDBOX_ROOT_FUSE_H

#include <stdbool.h>
#include <stddef.h>

/* Debian's fuse-overlayfs, on the host. */
#define SANDBOX_ROOT_FUSE_TOOL "/usr/bin/fuse-overlayfs"
/* Inside: the staging directory (lower/<flat>, layers/upper/<flat>,
 * layers/work), gone before any program of the sandbox starts. */
#define SANDBOX_ROOT_FUSE_DIR "/run/lizard-root"
/* Inside: the host's /usr, read-only, where the init finds the dynamic
 * loader and fuse-overlayfs before its own /usr is mounted (and where an
 * image's root finds the host's loader for a dynamic init). */
#define SANDBOX_HOST_USR "/run/lizard-host-usr"
/* The init's mode argument that asks it to mount the overlays first. */
#define SANDBOX_ROOT_FUSE_MODE "fuse-root"

/* The host directories the root overlays, as they appear inside; NULL
 * after the last. */
#define SANDBOX_ROOT_OVERLAID 6
extern const char *const sandbox_root_overlaid[SANDBOX_ROOT_OVERLAID + 1];

/* name with its slashes as dashes: its layers' directory name. */
void sandbox_root_flat(const char *name, char *out, size_t size);

/* In the init, as the sandbox's root: mounts the fuse-overlayfs, run by
 * the host's loader at loader with libraries, and binds its part over
 * each overlaid directory whose lower bwrap staged. false, with a message
 * on stderr, when any step fails. */
bool sandbox_root_fuse_mount(const char *loader, const char *libraries);

/* In the init, after sandbox_root_fuse_mount: forks the programs' init,
 * pid 1 of a new PID namespace with a mount namespace (without the
 * staging directory and /dev/fuse) and a /proc of its own, and returns
 * true in it. This process stays the server's parent, closes control (the
 * daemon's hangup is the child's to see) and exits with the child's
 * status, which takes the server along; it never returns. false, with a
 * message, when the namespace cannot be made. */
bool sandbox_root_fuse_nest(int control);

#endif
