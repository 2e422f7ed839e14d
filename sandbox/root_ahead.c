/* SPDX-License-Identifier: MIT */
#include "sandbox/root_ahead.h"

#include "sandbox/inside.h"
#include "sandbox/root.h"
#include "sandbox/state.h"
#include "sandbox/uid.h"
#include "sandbox/userns.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A sandbox's fields that make its root, filled as a start fills them. */
struct sandbox_root_ahead {
	struct sandbox s;
	struct sandbox_uid_range range;
};

static struct sandbox_uid_range range_or_default(const struct sandbox_uid_range *range)
{
	return range ? *range : SANDBOX_UID_RANGE_DEFAULT;
}

struct sandbox_root_ahead *sandbox_root_ahead_make(int disk, const char *daemon_dir,
						   const struct sandbox_uid_range *range,
						   struct error *err)
{
	struct sandbox_root_ahead *a = calloc(1, sizeof(*a));
	if (!a) {
		error_set(err, 0, "out of memory");
		return NULL;
	}
	struct sandbox *s = &a->s;
	a->range = range_or_default(range);
	s->dir_fd = s->disk_fd = s->rootfs_fd = s->userns_fd = s->netns_fd = -1;
	s->isolated = true;
	s->on_disk = true;
	snprintf(s->daemon_dir, sizeof(s->daemon_dir), "%s", daemon_dir);
	/* For messages: where the root goes until a session takes it. */
	snprintf(s->disk_mount, sizeof(s->disk_mount), "%s/(a spare disk)", daemon_dir);
	snprintf(s->inside_home, sizeof(s->inside_home), "%s", SANDBOX_HOME);
	if (!sandbox_userns_take_ids(s, &a->range, err))
		goto fail;
	s->disk_fd = disk;
	bool made = sandbox_root_make(s, NULL, err);
	s->disk_fd = -1; /* the spare's */
	if (made)
		return a;
fail:
	sandbox_root_ahead_free(a);
	return NULL;
}

bool sandbox_root_ahead_fits(struct sandbox_root_ahead *a, const struct sandbox_uid_range *range)
{
	struct sandbox_uid_range wanted = range_or_default(range);
	return wanted.first == a->range.first && wanted.count == a->range.count &&
	       sandbox_root_copies_current(&a->s);
}

void sandbox_root_ahead_adopt(struct sandbox *s, struct sandbox_root_ahead *a)
{
	const struct sandbox *made = &a->s;
	s->host_uid = made->host_uid;
	s->id_count = made->id_count;
	s->uid_held = made->uid_held;
	s->userns_fd = made->userns_fd;
	s->netns_fd = made->netns_fd;
	snprintf(s->rootfs, sizeof(s->rootfs), "%s/rootfs", s->disk_mount);
	snprintf(s->layers, sizeof(s->layers), "%s/layers", s->disk_mount);
	s->rootfs_fd = made->rootfs_fd;
	s->root_mounted = made->root_mounted;
	memcpy(s->root_trees, made->root_trees, sizeof(s->root_trees));
	s->root_tree_count = made->root_tree_count;
	memcpy(s->root_copies, made->root_copies, sizeof(s->root_copies));
	memcpy(s->root_copy_sources, made->root_copy_sources, sizeof(s->root_copy_sources));
	s->root_copy_count = made->root_copy_count;
	s->root_fuse = false;
	s->root_ahead = true;
	free(a);
}

void sandbox_root_ahead_free(struct sandbox_root_ahead *a)
{
	if (!a)
		return;
	struct sandbox *s = &a->s;
	sandbox_root_release_copies(s);
	for (int *fd = (int[]){ s->rootfs_fd, s->userns_fd, s->netns_fd }, i = 0; i < 3; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	if (s->uid_held)
		sandbox_uid_release(s->host_uid);
	free(a);
}
