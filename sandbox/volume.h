/* SPDX-License-Identifier: MIT */
/* Persistent volumes: what a session mounts read-write at /workspace,
 * outliving sessions and daemon restarts. A volume with a size limit is a
 * disk image (disk.h: ext4 with a journal, of that size) that the session's
 * sandbox mounts; one without is a plain directory (the only kind a daemon
 * that cannot make disks has).
 *
 * <data>/volumes/<name>/       the files of a volume without a limit
 * <data>/volumes/.images/<name> the image of a volume with one
 * <data>/volumes/.locks/<name> who holds it: an open file description lock
 *                              (fcntl F_OFD_SETLK), so a second daemon on the
 *                              same data directory cannot mount a volume this
 *                              one has, the kernel drops it when a daemon
 *                              dies, and F_OFD_GETLK can ask without taking
 *                              it; the file's text names the session.
 * Inside one daemon a table names the session holding each volume. One
 * volume is mounted by at most one session at a time; a volume in use
 * cannot be deleted. All functions are safe from any thread. */
#ifndef LIZARD_SANDBOX_VOLUME_H
#define LIZARD_SANDBOX_VOLUME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sandbox/name.h"
#include "util/error.h"

struct sandbox_volumes;

/* $XDG_DATA_HOME/lizard-bridge when that is an absolute path, else
 * $HOME/.local/share/lizard-bridge (HOME from the password database when
 * unset), for root as for anyone. */
bool sandbox_data_dir_default(char *out, size_t size, struct error *err);

/* Opens (creating with mode 0700 as needed) the volumes under data_dir. */
struct sandbox_volumes *sandbox_volumes_open(const char *data_dir, struct error *err);
/* Releases every volume still held. Accepts NULL. */
void sandbox_volumes_close(struct sandbox_volumes *volumes);

/* Creates an empty volume, a disk of limit_bytes (SANDBOX_DISK_MIN ..
 * SANDBOX_DISK_MAX) or, with 0, a directory without a limit; an existing
 * name is an error. */
bool sandbox_volume_create(struct sandbox_volumes *volumes, const char *name, uint64_t limit_bytes,
			   struct error *err);

/* Removes a volume and its files; one in use (here or by another daemon on
 * the same data directory) is an error naming the session. */
bool sandbox_volume_delete(struct sandbox_volumes *volumes, const char *name, struct error *err);

/* Entries considered per volume when sizing it; beyond, the size is a lower bound. */
#define SANDBOX_VOLUME_SIZE_MAX_ENTRIES 100000

struct sandbox_volume_info {
	char name[SANDBOX_NAME_MAX + 1];
	uint64_t bytes;       /* allocated on the host's disk */
	uint64_t limit_bytes; /* the most it can hold; 0: no limit (a directory) */
	bool bytes_complete;  /* false: the walk hit its ceiling, bytes is "at least" */
	char session[SANDBOX_NAME_MAX + 1]; /* holder, "" when free */
	bool other_daemon;                  /* the holder is a session of another daemon */
};

/* Every volume, sorted by name, into a malloc'ed array the caller frees. */
bool sandbox_volume_list(struct sandbox_volumes *volumes, struct sandbox_volume_info **list,
			 size_t *count, struct error *err);

/* Marks the volume as mounted by session and writes where it is into path:
 * its directory (to bind at /workspace), or with *image set its disk image
 * (to mount there). Fails, naming the holder, when another session has it,
 * when it does not exist, and while the image of a session that ended is
 * still being let go of. */
bool sandbox_volume_acquire(struct sandbox_volumes *volumes, const char *name, const char *session,
			    char *path, size_t path_size, bool *image, struct error *err);

/* Gives the volume back; only the session that holds it can. */
bool sandbox_volume_release(struct sandbox_volumes *volumes, const char *name, const char *session,
			    struct error *err);

#endif
