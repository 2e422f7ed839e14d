/* SPDX-License-Identifier: MIT */
/* What a daemon's sandboxes leave on the host when the daemon does not end
 * them itself: their private directories under one parent per host user,
 * with a session's disk or a volume possibly still mounted there. A daemon
 * removes what dead daemons left when it starts, and a janitor, a process
 * of its own forked before any thread, removes its own directory when it
 * dies, even by SIGKILL, so that no mount and no loop device outlives it. */

#include "sandbox/stale.h"
#include "sandbox/subid.h"
#include "sandbox/tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

/* The parent of every daemon's directories: one per host user, so a
 * daemon never trusts a directory someone else could have made. */
bool sandbox_base_dir(char *out, size_t size, struct error *err)
{
	const char *tmp = getenv("TMPDIR");
	if (!tmp || tmp[0] != '/' || strlen(tmp) > 64)
		tmp = "/tmp";
	snprintf(out, size, "%s/lizard-sandboxes-%u", tmp, (unsigned)geteuid());
	if (mkdir(out, 0711) != 0 && errno != EEXIST) {
		error_set(err, errno, "cannot create %s", out);
		return false;
	}
	struct stat st;
	if (lstat(out, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
		error_set(err, 0, "%s is not a directory owned by uid %u; remove it", out,
			  (unsigned)geteuid());
		return false;
	}
	/* Sandbox users must be able to pass through to their own directory. */
	chmod(out, 0711);
	return true;
}

/* Each daemon holds a lock on <base>/<pid>.lock (made as <pid>.lock.new,
 * then renamed) for its life, and its janitor holds the same lock until
 * it has cleaned up: a directory whose lock nobody holds is a dead
 * daemon's. Never by the pid's name alone, which a daemon run under
 * another name (a renamed binary, a wrapper) does not have. */
#define LOCK_KINDS 2
static const char *const lock_suffixes[LOCK_KINDS] = { ".lock", ".lock.new" };

/* Whether some process holds the lock of base/<pid><suffix>: 1 yes, 0 no,
 * -1 no such file. */
static int lock_held(const char *base, long pid, const char *suffix)
{
	char path[200];
	snprintf(path, sizeof(path), "%s/%ld%s", base, pid, suffix);
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -1 : 1; /* cannot tell: leave it */
	int held = flock(fd, LOCK_EX | LOCK_NB) != 0;
	close(fd); /* and with it the lock, when it was ours */
	return held;
}

/* Whether the daemon pid (or its janitor) is still there. A directory
 * without a lock file is an older daemon's: then by the process's name. */
static bool daemon_alive(const char *base, long pid)
{
	bool locked = false;
	for (size_t i = 0; i < LOCK_KINDS; i++) {
		int held = lock_held(base, pid, lock_suffixes[i]);
		if (held == 1)
			return true;
		locked = locked || held == 0;
	}
	if (locked)
		return false;
	char path[64], comm[64] = "";
	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	bool ok = fgets(comm, sizeof(comm), f) != NULL;
	fclose(f);
	return ok && strncmp(comm, "lizard-bridge", 13) == 0;
}

/* The pid an entry of the base directory belongs to (its directory or
 * its lock file), or 0. */
static long entry_pid(const char *name)
{
	char *end;
	long pid = strtol(name, &end, 10);
	if (end == name || pid <= 0 || !(name[0] >= '0' && name[0] <= '9'))
		return 0;
	if (!*end)
		return pid;
	for (size_t i = 0; i < LOCK_KINDS; i++)
		if (strcmp(end, lock_suffixes[i]) == 0)
			return pid;
	return 0;
}

static void remove_locks(const char *base, long pid)
{
	for (size_t i = 0; i < LOCK_KINDS; i++) {
		char path[200];
		snprintf(path, sizeof(path), "%s/%ld%s", base, pid, lock_suffixes[i]);
		unlink(path);
	}
}

/* A daemon killed while a sandbox ran may have left a volume bound or a
 * session's disk mounted in its directory: unmount them before removing
 * anything, or the removal would delete the volume's files (and walk the
 * disk's for nothing). */
static void unmount_left(const char *daemon_dir)
{
	DIR *dir = opendir(daemon_dir);
	if (!dir)
		return;
	struct dirent *entry;
	while ((entry = readdir(dir))) {
		if (entry->d_name[0] == '.')
			continue;
		static const char *const mounts[] = { "volume", "disk" };
		for (size_t i = 0; i < sizeof(mounts) / sizeof(mounts[0]); i++) {
			char mount_point[640];
			snprintf(mount_point, sizeof(mount_point), "%.400s/%.200s/%s", daemon_dir,
				 entry->d_name, mounts[i]);
			umount2(mount_point,
				MNT_DETACH | UMOUNT_NOFOLLOW); /* most are not mounts */
		}
	}
	closedir(dir);
}

/* Whatever else is mounted under daemon_dir (a writable root's overlays,
 * root.h, when the daemon died while starting a sandbox): deepest first,
 * as /proc/self/mountinfo lists them (its paths escape spaces as \040,
 * which a daemon's directory never holds). */
static void unmount_under(const char *daemon_dir)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return;
	enum { MAX_MOUNTS = 256 };
	char(*found)[400] = malloc(MAX_MOUNTS * sizeof(*found));
	if (!found) {
		fclose(f);
		return;
	}
	size_t count = 0, prefix = strlen(daemon_dir);
	char line[4096];
	while (count < MAX_MOUNTS && fgets(line, sizeof(line), f)) {
		char point[400];
		if (sscanf(line, "%*s %*s %*s %*s %399s", point) == 1 &&
		    strncmp(point, daemon_dir, prefix) == 0 && point[prefix] == '/')
			snprintf(found[count++], sizeof(found[0]), "%s", point);
	}
	fclose(f);
	while (count > 0)
		umount2(found[--count], MNT_DETACH | UMOUNT_NOFOLLOW);
	free(found);
}

/* Unmounts what is left in one daemon's directory and removes it. */
static bool remove_daemon_dir(const char *path, struct error *err)
{
	unmount_under(path);
	unmount_left(path);
	return sandbox_subid_remove(path, err);
}

unsigned sandbox_remove_stale(struct error *err)
{
	char base[128];
	unsigned removed = 0;
	error_clear(err);
	if (!sandbox_base_dir(base, sizeof(base), err))
		return 0;
	DIR *dir = opendir(base);
	if (!dir) {
		error_set(err, errno, "cannot list %s", base);
		return 0;
	}
	struct dirent *entry;
	while ((entry = readdir(dir))) {
		long pid = entry_pid(entry->d_name);
		if (pid <= 0 || pid == (long)getpid() || daemon_alive(base, pid))
			continue;
		char path[400];
		snprintf(path, sizeof(path), "%s/%ld", base, pid);
		struct error failed;
		if (access(path, F_OK) != 0) {
			remove_locks(base, pid); /* its janitor was ended after its work */
			continue;
		}
		if (remove_daemon_dir(path, &failed)) {
			remove_locks(base, pid);
			removed++;
		} else if (err && !err->message[0]) {
			*err = failed;
		}
	}
	closedir(dir);
	return removed;
}

/* Makes base/<pid>.lock, locked, for this daemon's life (with a janitor
 * or not): its descriptor. It is locked under a name of its own first,
 * then renamed, so another daemon finds it free under neither name but
 * in the moment between its open and its lock. */
static int take_lock(const char *base, struct error *err)
{
	char part[200], path[200];
	snprintf(part, sizeof(part), "%s/%ld.lock.new", base, (long)getpid());
	snprintf(path, sizeof(path), "%s/%ld.lock", base, (long)getpid());
	unlink(part); /* a dead daemon's of the same pid */
	int fd = open(part, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return error_set(err, errno, "cannot create %s", part), -1;
	if (flock(fd, LOCK_EX | LOCK_NB) != 0 || rename(part, path) != 0) {
		error_set(err, errno, "cannot take the lock %s", path);
		unlink(part);
		close(fd);
		return -1;
	}
	return fd;
}

bool sandbox_janitor_start(struct error *err)
{
	char base[128], mine[160];
	if (!sandbox_base_dir(base, sizeof(base), err))
		return false;
	long daemon_pid = (long)getpid();
	snprintf(mine, sizeof(mine), "%s/%ld", base, daemon_pid);
	/* Held from here for the daemon's life, also when no janitor starts. */
	int lock = take_lock(base, err);
	if (lock < 0)
		return false;
	int watch[2];
	if (pipe2(watch, O_CLOEXEC) != 0)
		return error_set(err, errno, "cannot create the janitor's pipe");
	pid_t pid = fork();
	if (pid < 0) {
		close(watch[0]);
		close(watch[1]);
		return error_set(err, errno, "cannot fork the janitor");
	}
	if (pid > 0) {
		/* Held open, never written: its close is the daemon's end. The
		 * lock stays held, close-on-exec, for the daemon's life. */
		close(watch[0]);
		return true;
	}
	close(watch[1]);
	/* Out of the daemon's session and process group, so that what ends
	 * them (a terminal's ^C, a test killing the group) leaves it to do its
	 * work, and without the daemon's streams, which whoever reads them
	 * would otherwise see open after the daemon's end. */
	setsid();
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	if (chdir("/") != 0)
		_exit(1);
	int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null_fd >= 0) {
		dup2(null_fd, STDIN_FILENO);
		dup2(null_fd, STDOUT_FILENO);
		dup2(null_fd, STDERR_FILENO);
	}
	/* The pipe at 3 and the lock at 4, whatever they were. */
	int keep = fcntl(watch[0], F_DUPFD_CLOEXEC, 10), held = fcntl(lock, F_DUPFD_CLOEXEC, 10);
	if (keep < 0 || held < 0 || dup3(keep, 3, O_CLOEXEC) < 0 || dup3(held, 4, O_CLOEXEC) < 0)
		_exit(1);
	keep = 3;
	close_range(5, ~0U, 0);
	prctl(PR_SET_NAME, "lizard-janitor");
	char byte;
	ssize_t n;
	while ((n = read(keep, &byte, 1)) < 0 && errno == EINTR)
		;
	remove_daemon_dir(mine, NULL);
	remove_locks(base, daemon_pid);
	_exit(0);
}
