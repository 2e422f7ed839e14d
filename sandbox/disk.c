/* SPDX-License-Identifier: MIT */
/* Disks for sessions and volumes (see disk.h). */
#include "sandbox/disk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/command.h"
#include "util/clock.h"

#define MKFS_TIMEOUT_MS 30000
/* LOOP_CTL_GET_FREE names a free device, which another process may take
 * before LOOP_CONFIGURE: ask again this often. */
#define LOOP_ATTEMPTS 16

static const char *mkfs_path(void)
{
	static const char *const candidates[] = { "/usr/sbin/mke2fs", "/sbin/mke2fs" };
	for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++)
		if (access(candidates[i], X_OK) == 0)
			return candidates[i];
	return NULL;
}

bool sandbox_disk_available(struct error *err)
{
	if (geteuid() != 0)
		return error_set(err, 0,
				 "disk limits need a daemon running as root "
				 "(loop devices and ext4 mounts)");
	if (!mkfs_path())
		return error_set(err, 0, "disk limits need mke2fs (apt-get install e2fsprogs)");
	int control = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (control < 0)
		return error_set(err, errno,
				 "disk limits need loop devices: cannot open "
				 "/dev/loop-control (modprobe loop)");
	close(control);
	return true;
}

/* Runs mke2fs on the open image, its output kept for the message. */
static bool run_mkfs(int image, uint64_t bytes, uid_t uid, bool journal, const char *where,
		     const char *name, struct error *err)
{
	char target[32], extended[96], size_kib[32];
	snprintf(target, sizeof(target), "/proc/self/fd/%d", image);
	/* Inode tables are left for the kernel to use as they come (never
	 * zeroed ahead: noinit_itable at mount), so making a disk of any size
	 * writes a few MiB. */
	snprintf(extended, sizeof(extended),
		 "lazy_itable_init=1,lazy_journal_init=1,nodiscard,root_owner=%u:%u", (unsigned)uid,
		 (unsigned)uid);
	snprintf(size_kib, sizeof(size_kib), "%lluk", (unsigned long long)(bytes >> 10));
	const char *mkfs = mkfs_path();
	const char *argv[] = { mkfs,
			       "-q",
			       "-F",
			       "-t",
			       "ext4",
			       "-b",
			       "4096",
			       "-m",
			       "0",
			       "-E",
			       extended,
			       "-O",
			       journal ? "has_journal" : "^has_journal",
			       target,
			       size_kib,
			       NULL };
	if (!mkfs)
		return error_set(err, 0, "mke2fs is not installed (apt-get install e2fsprogs)");
	/* The image is the one descriptor it gets. */
	if (sandbox_command_run(argv, image, MKFS_TIMEOUT_MS, "mke2fs", err))
		return true;
	return error_prefix(err, "cannot make %s/%s", where, name);
}

bool sandbox_disk_make(int dir_fd, const char *where, const char *name, uint64_t bytes, uid_t uid,
		       bool journal, struct error *err)
{
	int image = openat(dir_fd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (image < 0)
		return error_set(err, errno, "cannot create %s/%s", where, name);
	bool ok = true;
	if (ftruncate(image, (off_t)bytes) != 0)
		ok = error_set(err, errno, "cannot size %s/%s to %llu bytes", where, name,
			       (unsigned long long)bytes);
	ok = ok && run_mkfs(image, bytes, uid, journal, where, name, err);
	close(image);
	if (!ok)
		unlinkat(dir_fd, name, 0);
	return ok;
}

/* A free loop device bound to image, let go of when its last user closes
 * it; its descriptor, or -1 with err set. */
static int attach_loop(int image, const char *where, const char *name, int *number,
		       struct error *err)
{
	int control = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (control < 0) {
		error_set(err, errno, "cannot open /dev/loop-control");
		return -1;
	}
	int fd = -1;
	for (int attempt = 0; attempt < LOOP_ATTEMPTS && fd < 0; attempt++) {
		int n = ioctl(control, LOOP_CTL_GET_FREE);
		if (n < 0) {
			error_set(err, errno, "no free loop device for %s/%s", where, name);
			break;
		}
		char device[32];
		snprintf(device, sizeof(device), "/dev/loop%d", n);
		fd = open(device, O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			error_set(err, errno, "cannot open %s", device);
			break;
		}
		struct loop_config config = { .fd = (unsigned)image };
		config.info.lo_flags = LO_FLAGS_AUTOCLEAR;
		snprintf((char *)config.info.lo_file_name, sizeof(config.info.lo_file_name), "%s",
			 name);
		if (ioctl(fd, LOOP_CONFIGURE, &config) == 0) {
			*number = n;
			break;
		}
		int saved = errno;
		close(fd);
		fd = -1;
		if (saved != EBUSY) {
			error_set(err, saved, "cannot bind %s to %s/%s", device, where, name);
			break;
		}
		error_set(err, EBUSY, "every free loop device was taken meanwhile");
	}
	close(control);
	return fd;
}

int sandbox_disk_mount_detached(int dir_fd, const char *where, const char *name, int *loop,
				struct error *err)
{
	int image = openat(dir_fd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (image < 0 || fstat(image, &st) != 0 || !S_ISREG(st.st_mode)) {
		error_set(err, image < 0 ? errno : EINVAL, "cannot open the image %s/%s", where,
			  name);
		if (image >= 0)
			close(image);
		return -1;
	}
	int number = -1;
	int device = attach_loop(image, where, name, &number, err);
	close(image); /* the loop device holds the file now */
	if (device < 0)
		return -1;
	char path[32];
	snprintf(path, sizeof(path), "/dev/loop%d", number);
	int fs = fsopen("ext4", FSOPEN_CLOEXEC), mount_fd = -1;
	if (fs >= 0 && fsconfig(fs, FSCONFIG_SET_STRING, "source", path, 0) == 0 &&
	    fsconfig(fs, FSCONFIG_SET_FLAG, "discard", NULL, 0) == 0 &&
	    fsconfig(fs, FSCONFIG_SET_FLAG, "noinit_itable", NULL, 0) == 0 &&
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0)
		mount_fd = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (mount_fd < 0)
		error_set(err, errno, "cannot mount %s/%s (ext4 on %s)", where, name, path);
	if (fs >= 0)
		close(fs);
	/* From here the mount holds the device; closing ours lets it go with
	 * the last mount (or now, when the mount failed). */
	close(device);
	if (mount_fd >= 0)
		*loop = number;
	return mount_fd;
}

bool sandbox_disk_attach(int mount_fd, const char *mount_point, struct error *err)
{
	if (move_mount(mount_fd, "", AT_FDCWD, mount_point, MOVE_MOUNT_F_EMPTY_PATH) == 0)
		return true;
	return error_set(err, errno, "cannot mount a disk at %s", mount_point);
}

bool sandbox_disk_mount(int dir_fd, const char *where, const char *name, const char *mount_point,
			int *loop, struct error *err)
{
	int mount_fd = sandbox_disk_mount_detached(dir_fd, where, name, loop, err);
	bool ok = mount_fd >= 0 && sandbox_disk_attach(mount_fd, mount_point, err);
	if (mount_fd >= 0)
		close(mount_fd);
	return ok;
}

bool sandbox_disk_released(int loop, int timeout_ms)
{
	if (loop < 0)
		return true;
	char path[64];
	snprintf(path, sizeof(path), "/sys/block/loop%d/loop/backing_file", loop);
	int64_t deadline = clock_monotonic_ms() + timeout_ms;
	for (;;) {
		if (access(path, F_OK) != 0)
			return true;
		if (clock_monotonic_ms() >= deadline)
			return false;
		struct timespec tick = { 0, 10 * 1000000L };
		nanosleep(&tick, NULL);
	}
}

bool sandbox_disk_attached(const char *path)
{
	DIR *dir = opendir("/sys/block");
	if (!dir)
		return false;
	bool found = false;
	struct dirent *d;
	while (!found && (d = readdir(dir))) {
		if (strncmp(d->d_name, "loop", 4) != 0)
			continue;
		char file[300], backing[4096];
		snprintf(file, sizeof(file), "/sys/block/%.200s/loop/backing_file", d->d_name);
		int fd = open(file, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue; /* not bound */
		ssize_t n = read(fd, backing, sizeof(backing) - 1);
		close(fd);
		if (n <= 0)
			continue;
		backing[n] = '\0';
		backing[strcspn(backing, "\n")] = '\0';
		found = strcmp(backing, path) == 0;
	}
	closedir(dir);
	return found;
}

bool sandbox_disk_usage(int fd, uint64_t *used, uint64_t *total)
{
	struct statvfs st;
	if (fstatvfs(fd, &st) != 0)
		return false;
	*total = (uint64_t)st.f_blocks * st.f_frsize;
	*used = (uint64_t)(st.f_blocks - st.f_bfree) * st.f_frsize;
	return true;
}
