/* SPDX-License-Identifier: MIT */
#include "sandbox/root.h"

#include "sandbox/bwrap.h"
#include "sandbox/network.h"
#include "sandbox/root_copy.h"
#include "sandbox/root_private.h"
#include "sandbox/snapshot.h"
#include "sandbox/state.h"
#include "sandbox/userns.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

/* A detached, read-only copy of the host's directory path whose files of
 * the host's root are the namespace ns's root. */
static int idmapped_tree(const char *path, int ns, struct error *err)
{
	int tree = open_tree(AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (tree < 0)
		return error_set(err, errno, "cannot clone the mount of %s", path), -1;
	struct mount_attr attr = {
		.attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
			    MOUNT_ATTR_NODEV,
		.userns_fd = (uint64_t)ns,
	};
	if (mount_setattr(tree, "", AT_EMPTY_PATH, &attr, sizeof(attr)) != 0) {
		error_set(err, errno,
			  "cannot make an idmapped mount of %s (its filesystem may not support "
			  "idmapped mounts)",
			  path);
		close(tree);
		return -1;
	}
	return tree;
}

static struct {
	pthread_once_t once;
	bool available, fuse;
	struct error why;
} probe = { .once = PTHREAD_ONCE_INIT };

static bool fuse_allowed = true;

void sandbox_root_allow_fuse(bool allow)
{
	fuse_allowed = allow;
}

/* A daemon that is not root: fuse-overlayfs inside the sandbox. */
static void probe_fuse(void)
{
	char loader[400];
	struct stat st;
	if (!fuse_allowed) {
		error_set(&probe.why, 0,
			  "the daemon runs with --no-fuse-root: its sessions' system directories "
			  "are the host's, read-only");
		return;
	}
	int fuse = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fuse >= 0)
		close(fuse);
	sandbox_bwrap_host_loader(loader, sizeof(loader));
	if (access(SANDBOX_ROOT_FUSE_TOOL, X_OK) != 0)
		error_set(&probe.why, 0,
			  "a writable root for a daemon that is not root needs fuse-overlayfs "
			  "(apt-get install fuse-overlayfs)");
	else if (fuse < 0 || stat("/dev/fuse", &st) != 0 || !S_ISCHR(st.st_mode))
		error_set(&probe.why, errno,
			  "a writable root for a daemon that is not root needs /dev/fuse");
	else if (!loader[0])
		error_set(&probe.why, 0,
			  "a writable root for a daemon that is not root needs the host's dynamic "
			  "loader under /usr (a merged /usr)");
	else
		probe.available = probe.fuse = true;
}

static void probe_once(void)
{
	if (geteuid() != 0) {
		probe_fuse();
		return;
	}
	int ns = sandbox_userns_make(65534, 1, &probe.why);
	int tree = ns >= 0 ? idmapped_tree("/usr", ns, &probe.why) : -1;
	probe.available = tree >= 0;
	if (tree >= 0)
		close(tree);
	if (ns >= 0)
		close(ns);
	if (!probe.available)
		error_prefix(&probe.why, "a writable root needs idmapped mounts");
}

bool sandbox_root_available(struct error *err)
{
	pthread_once(&probe.once, probe_once);
	if (!probe.available && err)
		*err = probe.why;
	return probe.available;
}

bool sandbox_root_uses_fuse(void)
{
	pthread_once(&probe.once, probe_once);
	return probe.fuse;
}

/* Opens (making it when missing) the directory name in parent, given to
 * owner with mode; never through a link. */
static int make_dir(int parent, const char *name, mode_t mode, uid_t owner, struct error *err)
{
	if (mkdirat(parent, name, mode) != 0 && errno != EEXIST)
		return error_set(err, errno, "cannot create %s", name), -1;
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return error_set(err, errno, "cannot open %s", name), -1;
	if (fchown(fd, owner, owner) != 0 || fchmod(fd, mode) != 0) {
		error_set(err, errno, "cannot give %s to uid %u", name, (unsigned)owner);
		close(fd);
		return -1;
	}
	return fd;
}

/* Makes the nested directories of relative path under root (given to
 * owner, 0755) and returns the last one's descriptor. */
static int make_path(int root, const char *path, uid_t owner, struct error *err)
{
	int fd = fcntl(root, F_DUPFD_CLOEXEC, 3);
	for (const char *part = path; *part && fd >= 0;) {
		size_t len = strcspn(part, "/");
		char name[64];
		snprintf(name, sizeof(name), "%.*s", (int)len, part);
		int next = make_dir(fd, name, 0755, owner, err);
		close(fd);
		fd = next;
		part += len + (part[len] == '/');
	}
	return fd;
}

static const struct {
	const char *dir, *entry;
} locks[] = { { "var/lib/dpkg", "lock" },
	      { "var/lib/dpkg", "lock-frontend" },
	      { "var/lib/dpkg", "triggers/Lock" },
	      { "var/lib/apt", "lists/lock" },
	      { "var/cache/apt", "archives/lock" } };

/* A FUSE root's /etc is mounted after bwrap's binds, which it would hide:
 * the sandbox's resolv.conf is a file of its layer instead, replacing the
 * host's (a file or a link). No program of this sandbox has run yet, but
 * a restored layer is a snapshot's, made by another: only descriptors and
 * no link followed. */
static bool fuse_resolv_conf(struct sandbox *s, int etc_upper, struct error *err)
{
	char text[2048];
	if (!s->root_fuse || !s->network)
		return true;
	sandbox_network_resolv_conf(text, sizeof(text), &s->has_dns);
	if (unlinkat(etc_upper, "resolv.conf", 0) != 0 && errno != ENOENT)
		return error_set(err, errno, "cannot replace the layer's resolv.conf");
	int fd = openat(etc_upper, "resolv.conf",
			O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	size_t len = strlen(text);
	bool ok = fd >= 0 && write(fd, text, len) == (ssize_t)len;
	int saved = errno;
	if (fd >= 0)
		close(fd);
	return ok || error_set(err, saved, "cannot write the layer's resolv.conf");
}

/* Mounts an overlay of lower, upper and work (directories) on merged, a
 * directory of a mounted tree or of a detached one (a spare disk's, for a
 * root made ahead: root_ahead.h), where mount(2) cannot mount but
 * move_mount can. False with errno. */
static bool mount_overlay(int lower, int upper, int work, int merged)
{
	static const char *const fixed[][2] = { { "redirect_dir", "off" },
						{ "index", "off" },
						{ "metacopy", "off" },
						{ "xino", "off" } };
	const struct {
		const char *key;
		int fd;
	} layers[] = { { "lowerdir", lower }, { "upperdir", upper }, { "workdir", work } };
	int fs = fsopen("overlay", FSOPEN_CLOEXEC);
	bool ok = fs >= 0;
	for (size_t i = 0; ok && i < sizeof(layers) / sizeof(layers[0]); i++) {
		char path[32];
		snprintf(path, sizeof(path), "/proc/self/fd/%d", layers[i].fd);
		ok = fsconfig(fs, FSCONFIG_SET_STRING, layers[i].key, path, 0) == 0;
	}
	for (size_t i = 0; ok && i < sizeof(fixed) / sizeof(fixed[0]); i++)
		ok = fsconfig(fs, FSCONFIG_SET_STRING, fixed[i][0], fixed[i][1], 0) == 0;
	ok = ok && fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0;
	int mount_fd = ok ? fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV) : -1;
	ok = mount_fd >= 0 && move_mount(mount_fd, "", merged, "",
					 MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) == 0;
	int saved = errno;
	/* Attached now, the descriptor is only a reference: closing it
	 * unmounts nothing. */
	if (mount_fd >= 0)
		close(mount_fd);
	if (fs >= 0)
		close(fs);
	errno = saved;
	return ok;
}

/* Mounts an overlay of the host's /name over the merged directory of
 * rootfs, its upper layer layers/upper/<flat> and its work directory
 * layers/work/<flat>; with an image (a Debian release's root), the image
 * over rootfs itself (name ""), its layer layers/upper/root. */
static bool overlay_one(struct sandbox *s, const char *name, int ns, int upper_fd, int work_fd,
			char *fuse_lower, struct error *err)
{
	char host_path[600], flat[128];
	bool image = !name[0];
	snprintf(host_path, sizeof(host_path), "%s/%s", image ? s->image_dir : "", name);
	sandbox_root_flat(image ? "root" : name, flat, sizeof(flat));
	struct stat st;
	if (stat(host_path, &st) != 0 || !S_ISDIR(st.st_mode))
		return true; /* nothing of the host's to show there */
	int lower = -1, upper = -1, work = -1, merged = -1;
	bool ok = false;
	/* Secrets live in /etc and debconf's database: their lowers are
	 * copies of what others may read there (root_copy.h). /usr and the
	 * package manager's files hold none (their root-only entries are
	 * locks and _apt's partial downloads) and are large: the host's own
	 * are the lowers. */
	bool secret = !image &&
		      (strcmp(name, "etc") == 0 || strcmp(name, "var/cache/debconf") == 0);
	const char *lower_path = host_path;
	if (secret) {
		char *copy = s->root_copies[s->root_copy_count];
		if (s->root_copy_count >= SANDBOX_ROOT_COPIES ||
		    !sandbox_root_copy_take(s->daemon_dir, host_path, copy,
					    sizeof(s->root_copies[0]), err))
			goto out;
		snprintf(s->root_copy_sources[s->root_copy_count], sizeof(s->root_copy_sources[0]),
			 "%.63s", host_path);
		s->root_copy_count++;
		lower_path = copy;
	}
	/* A FUSE root's lowers are staged by bwrap instead (root_fuse.h). */
	if (s->root_fuse)
		snprintf(fuse_lower, sizeof(s->root_lower[0]), "%.599s", lower_path);
	else if ((lower = idmapped_tree(lower_path, ns, err)) < 0)
		goto out;
	/* The overlay's directory takes its owner and mode from the upper
	 * layer's: as the idmapped lower shows it. */
	uid_t owner = st.st_uid < s->id_count ? s->host_uid + st.st_uid : 65534;
	/* One fuse-overlayfs serves every part with layers/work as its
	 * work directory (root_fuse.h): a kernel overlay has one each. */
	if ((upper = make_dir(upper_fd, flat, st.st_mode & 07777, owner, err)) < 0 ||
	    (!s->root_fuse && (work = make_dir(work_fd, flat, 0700, geteuid(), err)) < 0) ||
	    (merged = image ? fcntl(s->rootfs_fd, F_DUPFD_CLOEXEC, 3)
			    : make_path(s->rootfs_fd, name, s->host_uid, err)) < 0)
		goto out;
	if (image) {
		/* Its own users, with the sandbox's user added; no host secrets. */
		char source[700];
		snprintf(source, sizeof(source), "%s/etc", s->image_dir);
		int etc = make_dir(upper, "etc", 0755, s->host_uid, err);
		bool written = etc >= 0 && sandbox_root_write_users(etc, s->host_uid,
								    s->inside_home, source, err);
		if (etc >= 0)
			close(etc);
		if (!written)
			goto out;
	}
	if (strcmp(name, "etc") == 0 &&
	    (!sandbox_root_write_users(upper, s->host_uid, s->inside_home, "/etc", err) ||
	     !fuse_resolv_conf(s, upper, err)))
		goto out;
	/* apt's partial directories belong to _apt, unmapped inside, so root
	 * there could not use them: apt makes them again in the layer. */
	const char *partial = strcmp(name, "var/cache/apt") == 0 ? "archives/partial"
			      : strcmp(name, "var/lib/apt") == 0 ? "lists/partial"
								 : NULL;
	if (partial && !sandbox_root_hide_one(host_path, upper, partial, s->host_uid, err))
		goto out;
	/* The package managers' locks are the host root's alone to read, which
	 * a daemon that is not root is not: fuse-overlayfs could not copy them
	 * up, so root inside makes them afresh. */
	for (size_t i = 0; s->root_fuse && !image && i < sizeof(locks) / sizeof(locks[0]); i++)
		if (strcmp(name, locks[i].dir) == 0 &&
		    !sandbox_root_hide_one(host_path, upper, locks[i].entry, s->host_uid, err))
			goto out;
	if (s->root_fuse) {
		ok = true;
		goto out;
	}
	if (!mount_overlay(lower, upper, work, merged)) {
		error_set(err, errno, "cannot mount an overlay of %s at %s/%s", host_path,
			  s->rootfs, name);
		goto out;
	}
	s->root_mounted = true;
	/* Closing a detached mount waits for an RCU grace period (a few
	 * milliseconds on a busy virtual machine), which six of them added
	 * to every start: the overlay holds its own reference, and the
	 * descriptor goes with the sandbox. */
	s->root_trees[s->root_tree_count++] = lower;
	lower = -1;
	ok = true;
out:
	for (int *fd = (int[]){ lower, upper, work, merged }, i = 0; i < 4; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	return ok;
}

void sandbox_root_prepare_disk(int disk)
{
	struct error ignored;
	if (!sandbox_root_available(&ignored) || sandbox_root_uses_fuse())
		return;
	for (size_t i = 0; sandbox_root_overlaid[i]; i++) {
		/* A host without the directory has no overlay there, and its
		 * sandbox's root makes it itself: not one of the daemon's. */
		char host_path[64], flat[128], path[3][160];
		struct stat st;
		snprintf(host_path, sizeof(host_path), "/%s", sandbox_root_overlaid[i]);
		if (stat(host_path, &st) != 0 || !S_ISDIR(st.st_mode))
			continue;
		sandbox_root_flat(sandbox_root_overlaid[i], flat, sizeof(flat));
		snprintf(path[0], sizeof(path[0]), "layers/upper/%s", flat);
		snprintf(path[1], sizeof(path[1]), "layers/work/%s", flat);
		snprintf(path[2], sizeof(path[2]), "rootfs/%s", sandbox_root_overlaid[i]);
		for (int k = 0; k < 3; k++) {
			int fd = make_path(disk, path[k], geteuid(), &ignored);
			if (fd >= 0)
				close(fd);
		}
	}
}

/* Binds rootfs on itself, so that the overlays mounted in it go with one
 * unmount, and one grace period, instead of one each; rootfs_fd is then
 * the bind's. */
static bool bind_rootfs(struct sandbox *s, struct error *err)
{
	int tree = open_tree(s->rootfs_fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	if (tree < 0)
		return error_set(err, errno, "cannot bind %s", s->rootfs);
	if (move_mount(tree, "", s->rootfs_fd, "",
		       MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0) {
		error_set(err, errno, "cannot bind %s", s->rootfs);
		close(tree); /* never attached: it goes with its descriptor */
		return false;
	}
	close(s->rootfs_fd);
	s->rootfs_fd = tree; /* attached now: its descriptor is the bind's root */
	s->root_mounted = true;
	return true;
}

bool sandbox_root_make(struct sandbox *s, const char *restore_dir, struct error *err)
{
	int parent = s->on_disk ? s->disk_fd : s->dir_fd;
	const char *under = s->on_disk ? s->disk_mount : s->dir;
	snprintf(s->rootfs, sizeof(s->rootfs), "%s/rootfs", under);
	snprintf(s->layers, sizeof(s->layers), "%s/layers", under);
	int ns = s->userns_fd, layers = -1, upper = -1, work = -1;
	bool ok = false;
	if ((s->rootfs_fd = make_dir(parent, "rootfs", 0755, s->host_uid, err)) < 0 ||
	    (layers = make_dir(parent, "layers", 0700, geteuid(), err)) < 0 ||
	    (upper = make_dir(layers, "upper", 0700, geteuid(), err)) < 0 ||
	    (work = make_dir(layers, "work", 0700, geteuid(), err)) < 0) {
		error_prefix(err, "in %s", under);
		goto out;
	}
	if (restore_dir && !sandbox_snapshot_restore(s, restore_dir, err))
		goto out;
	s->root_fuse = sandbox_root_uses_fuse();
	if (!s->image_dir[0] && !s->root_fuse && !bind_rootfs(s, err))
		goto out;
	ok = true;
	if (s->image_dir[0] && s->root_fuse)
		ok = error_set(err, 0,
			       "a template built from a Debian release needs a daemon run as root "
			       "(its root is one overlay, which fuse-overlayfs inside the sandbox "
			       "cannot put under the sandbox's own mounts)");
	else if (s->image_dir[0])
		ok = overlay_one(s, "", ns, upper, work, NULL, err);
	for (size_t i = 0; ok && !s->image_dir[0] && sandbox_root_overlaid[i]; i++)
		ok = overlay_one(s, sandbox_root_overlaid[i], ns, upper, work, s->root_lower[i],
				 err);
out:
	for (int *fd = (int[]){ layers, upper, work }, i = 0; i < 3; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	return ok;
}

void sandbox_root_release_copies(struct sandbox *s)
{
	for (int i = 0; i < s->root_tree_count; i++)
		close(s->root_trees[i]);
	s->root_tree_count = 0;
	for (int i = 0; i < s->root_copy_count; i++)
		sandbox_root_copy_release(s->root_copies[i]);
	s->root_copy_count = 0;
}

void sandbox_root_release_host(struct sandbox *s)
{
	if (!s->root_mounted)
		return;
	if (s->rootfs_fd >= 0)
		close(s->rootfs_fd);
	s->rootfs_fd = -1;
	/* The bind with every overlay in it, or an image's one overlay, at
	 * once: rootfs is a directory of the daemon's (what the sandbox sees
	 * as / is what is mounted there). */
	umount2(s->rootfs, MNT_DETACH | UMOUNT_NOFOLLOW);
	s->root_mounted = false;
}

bool sandbox_root_copies_current(struct sandbox *s)
{
	for (int i = 0; i < s->root_copy_count; i++) {
		char now[sizeof(s->root_copies[0])];
		struct error ignored;
		if (!sandbox_root_copy_take(s->daemon_dir, s->root_copy_sources[i], now,
					    sizeof(now), &ignored))
			return false;
		bool same = strcmp(now, s->root_copies[i]) == 0;
		sandbox_root_copy_release(now);
		if (!same)
			return false;
	}
	return true;
}
