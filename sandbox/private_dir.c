/* SPDX-License-Identifier: MIT */
#include "sandbox/private_dir.h"

#include "sandbox/disk.h"
#include "sandbox/disk_spare.h"
#include "sandbox/root_ahead.h"
#include "sandbox/log.h"
#include "sandbox/stale.h"
#include "sandbox/state.h"
#include "sandbox/tree.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

/* Files of a volume handed to a new sandbox's uid at most; beyond, the
 * session does not start rather than see files it cannot write. */
#define WORKSPACE_MAX_ENTRIES 1000000

/* A directory made in parent and opened there without following a link,
 * then given to uid: the open descriptor, or -1 with err set. */
static int make_dir_at(int parent, const char *name, mode_t mode, uid_t uid, const char *under,
		       struct error *err)
{
	if (mkdirat(parent, name, mode) != 0) {
		error_set(err, errno, "cannot create %s/%s", under, name);
		return -1;
	}
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		error_set(err, errno, "cannot open %s/%s", under, name);
		return -1;
	}
	if (uid != geteuid() && fchown(fd, uid, uid) != 0) {
		error_set(err, errno, "cannot give %s/%s to uid %u", under, name, (unsigned)uid);
		close(fd);
		return -1;
	}
	return fd;
}

bool sandbox_private_dir_unbind_volume(struct sandbox *s, struct error *err)
{
	if (!s->volume_mount[0])
		return true;
	bool ok = umount2(s->volume_mount, MNT_DETACH | UMOUNT_NOFOLLOW) == 0 ||
		  error_set(err, errno, "cannot unbind %s", s->volume_mount);
	s->volume_mount[0] = '\0';
	return ok;
}

/* Binds the volume into the sandbox's own directory, where its uid can
 * reach it, for bwrap to bind at /workspace. */
static bool mount_volume(struct sandbox *s, struct error *err)
{
	char mount_point[240];
	snprintf(mount_point, sizeof(mount_point), "%s/volume", s->dir);
	int fd = make_dir_at(s->dir_fd, "volume", 0700, s->host_uid, s->dir, err);
	if (fd < 0)
		return false;
	close(fd);
	if (mount(s->workspace, mount_point, NULL, MS_BIND, NULL) != 0)
		return error_set(err, errno, "cannot bind the volume %s", s->workspace);
	snprintf(s->volume_mount, sizeof(s->volume_mount), "%s", mount_point);
	return true;
}

bool sandbox_private_dir_take_volume(struct sandbox *s, struct error *err)
{
	/* The last session that used it had another uid. */
	if (s->host_uid != geteuid() &&
	    !sandbox_tree_chown(s->workspace, s->host_uid, s->host_uid, WORKSPACE_MAX_ENTRIES, err))
		return false;
	return !s->isolated || s->host_uid == geteuid() || mount_volume(s, err);
}

bool sandbox_private_dir_mount_volume_image(struct sandbox *s, const char *image, struct error *err)
{
	char images[512];
	snprintf(images, sizeof(images), "%s", image);
	char *slash = strrchr(images, '/');
	if (!slash || !slash[1])
		return error_set(err, EINVAL, "the volume image %s", image);
	*slash = '\0';
	const char *name = slash + 1;
	int images_fd = open(images, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (images_fd < 0)
		return error_set(err, errno, "cannot open %s", images);
	char mount_point[240];
	snprintf(mount_point, sizeof(mount_point), "%s/volume", s->dir);
	int fd = make_dir_at(s->dir_fd, "volume", 0700, s->host_uid, s->dir, err);
	bool ok = fd >= 0;
	if (fd >= 0)
		close(fd);
	ok = ok && sandbox_disk_mount(images_fd, images, name, mount_point, &s->volume_loop, err);
	close(images_fd);
	if (!ok)
		return false;
	snprintf(s->volume_mount, sizeof(s->volume_mount), "%s", mount_point);
	/* The last session that used it had another uid. */
	return s->host_uid == geteuid() || sandbox_tree_chown(mount_point, s->host_uid, s->host_uid,
							      WORKSPACE_MAX_ENTRIES, err);
}

/* The session's own disk, mounted at dir/disk: where its directories go. */
static bool make_disk(struct sandbox *s, const struct sandbox_disk_want *want, struct error *err)
{
	struct sandbox_disk_taken taken;
	if (!sandbox_disk_spare_take(s->daemon_dir, s->dir_fd, s->dir, "disk.img", want, &taken,
				     err))
		return false;
	snprintf(s->disk_mount, sizeof(s->disk_mount), "%s/disk", s->dir);
	bool ok = mkdirat(s->dir_fd, "disk", 0700) == 0 ||
		  error_set(err, errno, "cannot create %s", s->disk_mount);
	if (ok && taken.mount_fd >= 0 &&
	    (ok = sandbox_disk_attach(taken.mount_fd, s->disk_mount, err)))
		s->disk_loop = taken.loop;
	else if (ok)
		ok = sandbox_disk_mount(s->dir_fd, s->dir, "disk.img", s->disk_mount, &s->disk_loop,
					err);
	/* Attached, its root is the session's (its mounts are in the disk's). */
	if (ok && taken.root)
		sandbox_root_ahead_adopt(s, taken.root);
	else
		sandbox_root_ahead_free(taken.root);
	if (taken.mount_fd >= 0)
		close(taken.mount_fd);
	if (!ok)
		return false;
	s->on_disk = true;
	s->disk_fd = openat(s->dir_fd, "disk", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->disk_fd < 0)
		return error_set(err, errno, "cannot open %s", s->disk_mount);
	/* The disk's root, like dir, stays the daemon's. */
	fchmod(s->disk_fd, 0711);
	return true;
}

bool sandbox_private_dir_make(struct sandbox *s, const struct sandbox_disk_want *disk,
			      struct error *err)
{
	char base[128];
	if (!sandbox_base_dir(base, sizeof(base), err))
		return false;
	char *daemon_dir = s->daemon_dir;
	snprintf(s->daemon_dir, sizeof(s->daemon_dir), "%s/%ld", base, (long)getpid());
	/* Twice: another session's end may remove the daemon's directory
	 * (sandbox_destroy) between the mkdir and the mkdtemp. */
	bool made = false;
	for (int attempt = 0; attempt < 2 && !made; attempt++) {
		if (mkdir(daemon_dir, 0711) != 0 && errno != EEXIST) {
			error_set(err, errno, "cannot create %s", daemon_dir);
			return false;
		}
		snprintf(s->dir, sizeof(s->dir), "%s/s-XXXXXX", daemon_dir);
		made = mkdtemp(s->dir) != NULL;
	}
	if (!made) {
		error_set(err, errno, "cannot create a private directory in %s", daemon_dir);
		s->dir[0] = '\0';
		return false;
	}
	s->dir_fd = open(s->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->dir_fd < 0 || fchmod(s->dir_fd, 0711) != 0)
		return error_set(err, errno, "cannot open %s", s->dir);
	return !disk->bytes || make_disk(s, disk, err);
}

bool sandbox_private_dir_fill(struct sandbox *s, struct error *err)
{
	int parent = s->on_disk ? s->disk_fd : s->dir_fd;
	const char *under = s->on_disk ? s->disk_mount : s->dir;
	snprintf(s->run_dir, sizeof(s->run_dir), "%s/run", under);
	snprintf(s->home, sizeof(s->home), "%s/home", under);
	snprintf(s->workspace, sizeof(s->workspace), "%s/workspace", under);
	snprintf(s->tmp_dir, sizeof(s->tmp_dir), "%s/tmp", under);
	snprintf(s->log_path, sizeof(s->log_path), "%s/sandbox.log", s->dir);
	snprintf(s->x11_dir, sizeof(s->x11_dir), "%s/.X11-unix", s->run_dir);
	if ((s->run_fd = make_dir_at(parent, "run", 0700, s->host_uid, under, err)) < 0)
		return false;
	static const struct {
		const char *name;
		mode_t mode;
		bool in_run, disk_only;
	} dirs[] = {
		{ "home", 0700, false, false },
		{ "workspace", 0755, false, false },
		{ "tmp", 01777, false, true },
		{ ".X11-unix", 0700, true, false },
	};
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		if (dirs[i].disk_only && !s->on_disk)
			continue;
		int fd = make_dir_at(dirs[i].in_run ? s->run_fd : parent, dirs[i].name,
				     dirs[i].mode, s->host_uid, dirs[i].in_run ? s->run_dir : under,
				     err);
		if (fd < 0)
			return false;
		/* What the umask took of 1777. */
		if (dirs[i].mode & 01000)
			fchmod(fd, dirs[i].mode);
		close(fd);
	}
	if (!(s->log = sandbox_log_create(s->log_path, err)))
		return false;
	s->log_fd = sandbox_log_fd(s->log);
	return true;
}
