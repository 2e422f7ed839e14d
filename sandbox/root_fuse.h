/* SPDX-License-Identifier: MIT */
/* A writable root for a daemon that is not root (root.h). Such a daemon
 * can make neither idmapped mounts nor mounts on the host, so its
 * sandbox's overlays are made inside the sandbox: bwrap shows the lowers
 * and the session's layers under SANDBOX_ROOT_FUSE_DIR and /dev/fuse, and
 * the init, before anything else runs, starts one fuse-overlayfs per
 * overlaid directory (the host's files shown as root's), waits for each
 * to be mounted, then detaches the staging directory and /dev/fuse. Root's
 * programs then run in a nested user namespace (spawn.h), as the user's
 * do, so that none holds a capability over the servers: none reaches the
 * layers or the FUSE device through their /proc entries, nor mounts a
 * FUSE filesystem of its own. They may still signal the servers, which
 * run as their uid in the sandbox's PID namespace and end with it (hence
 * --fuse-root: root.h). Shared by the daemon (root.c, bwrap.c) and the
 * init. */
#ifndef LIZARD_SANDBOX_ROOT_FUSE_H
#define LIZARD_SANDBOX_ROOT_FUSE_H

#include <stdbool.h>
#include <stddef.h>

/* Debian's fuse-overlayfs, on the host. */
#define SANDBOX_ROOT_FUSE_TOOL "/usr/bin/fuse-overlayfs"
/* Inside: the staging directory (lower/<flat>, layers/upper/<flat>,
 * layers/work/<flat>), gone before any program of the sandbox starts. */
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

/* In the init, as the sandbox's root: mounts a fuse-overlayfs over each
 * overlaid directory whose lower bwrap staged, fuse-overlayfs run by the
 * host's loader at loader with libraries, then hides the staging directory
 * and /dev/fuse. false, with a message on stderr, when any step fails. */
bool sandbox_root_fuse_mount(const char *loader, const char *libraries);

#endif
