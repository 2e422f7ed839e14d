/* SPDX-License-Identifier: MIT */
/* The struct sandbox, shared by the files of sandbox/ that make, run and
 * end one; types only, not public. */
#ifndef LIZARD_SANDBOX_STATE_H
#define LIZARD_SANDBOX_STATE_H

#include "sandbox/network.h"
#include "sandbox/root_fuse.h"
#include "util/error.h"

#include <stdbool.h>
#include <stdint.h>

#include <pthread.h>
#include <sys/types.h>

/* The lowers of a writable root that are copies (root_copy.h). */
#define SANDBOX_ROOT_COPIES 2

struct sandbox {
	char dir[200];        /* private, on the host; the daemon's, 0711 */
	char daemon_dir[160]; /* what holds dir: every session's, the spares, the lowers */
	/* Descriptors of dir and of run_dir, taken when they were made: the
	 * sandbox's user owns run_dir and may put anything in it, so the
	 * daemon reaches what is there only through run_fd, never following a
	 * link (sandbox_run_*). -1 when not open. */
	int dir_fd, run_fd;
	/* With a disk (disk.h): it is mounted at disk_mount (dir/disk), held
	 * open by disk_fd, on loop device disk_loop, and holds run, home,
	 * workspace and tmp; without one they are in dir and /tmp is a tmpfs. */
	bool on_disk;
	char disk_mount[220];
	int disk_fd, disk_loop;
	char tmp_dir[240];
	char run_dir[240];   /* dir/run, SANDBOX_RUN_DIR inside */
	char x11_dir[260];   /* run_dir/.X11-unix, /tmp/.X11-unix inside */
	char home[240];      /* dir/home */
	char workspace[512]; /* dir/workspace, or the volume's directory */
	/* dir/volume: the volume bound there on the host while bwrap starts
	 * (its uid may not pass through the data directory's path); "" when
	 * not mounted. */
	char volume_mount[240];
	int volume_loop; /* a volume's image: its loop device, or -1 */
	bool has_volume; /* /workspace is a volume's */
	/* A writable root (root.h): rootfs is bound at /, the overlays' layers
	 * are in layers; rootfs_fd is -1 and rootfs "" with a read-only one.
	 * root_mounted: the host still has its copies of the overlays, in
	 * rootfs bound on itself (or, an image's, on rootfs).
	 * root_trees: the idmapped lowers' detached mounts, closed with the
	 * sandbox (root.c says why not sooner). */
	char rootfs[240], layers[240];
	char image_dir[512]; /* a Debian release's root under everything; "" */
	int rootfs_fd;
	bool root_mounted;
	int root_trees[SANDBOX_ROOT_OVERLAID];
	int root_tree_count;
	/* The root, the ids and the namespaces came made ahead with the
	 * disk (root_ahead.h). */
	bool root_ahead;
	/* A root of fuse-overlayfs processes inside the sandbox (root_fuse.h);
	 * root_lower[i]: what bwrap stages as the lower of
	 * sandbox_root_overlaid[i], "" when the host has no such directory. */
	bool root_fuse;
	char root_lower[SANDBOX_ROOT_OVERLAID][600];
	/* The copies of the host's /etc and debconf's database its lowers are
	 * made of (root_copy.h), held until the sandbox is destroyed. */
	char root_copies[SANDBOX_ROOT_COPIES][400];
	char root_copy_sources[SANDBOX_ROOT_COPIES][64]; /* the host directories */
	int root_copy_count;
	char log_path[240];
	char inside_home[240], inside_run_dir[240], inside_workspace[512];
	struct sandbox_log *log; /* programs' default stdout and stderr */
	int log_fd;              /* its write end */
	struct sandbox_network net;
	bool has_dns;         /* the inside has nameservers it can reach */
	pid_t pid;            /* bwrap (or the init itself when not isolated); 0 once reaped */
	pid_t init_pid;       /* the init, on the host (isolated only; 0: not known) */
	int control;          /* to the init */
	pthread_mutex_t lock; /* sending on control; env */
	char **env;           /* NAME=value for every program, NULL-terminated */
	bool isolated, network;
	uid_t host_uid;    /* what the sandbox's root is on the host */
	uint32_t id_count; /* ids host_uid.. its user namespace maps: 65536 or 1 */
	bool uid_held;     /* host_uid.. taken from the daemon's range (uid.h) */
	int userns_fd;     /* a root daemon's namespace for it (userns.h), or -1 */
	int netns_fd;      /* and its network namespace, which bwrap's child joins */
	char description[2048];
};

#endif
