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

/* Whether pid is a lizard-bridge that is still running. */
static bool daemon_alive(long pid)
{
	char path[64], comm[64] = "";
	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	bool ok = fgets(comm, sizeof(comm), f) != NULL;
	fclose(f);
	return ok && strncmp(comm, "lizard-bridge", 13) == 0;
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
		char *end;
		long pid = strtol(entry->d_name, &end, 10);
		if (end == entry->d_name || *end || pid <= 0 || pid == (long)getpid() ||
		    daemon_alive(pid))
			continue;
		char path[400];
		snprintf(path, sizeof(path), "%s/%.200s", base, entry->d_name);
		struct error failed;
		if (remove_daemon_dir(path, &failed))
			removed++;
		else if (err && !err->message[0])
			*err = failed;
	}
	closedir(dir);
	return removed;
}

bool sandbox_janitor_start(struct error *err)
{
	char base[128], mine[160];
	if (!sandbox_base_dir(base, sizeof(base), err))
		return false;
	snprintf(mine, sizeof(mine), "%s/%ld", base, (long)getpid());
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
		/* Held open, never written: its close is the daemon's end. */
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
	int keep = fcntl(watch[0], F_DUPFD_CLOEXEC, 3);
	if (keep != 3) {
		dup2(watch[0], 3);
		keep = 3;
	}
	close_range(4, ~0U, 0);
	prctl(PR_SET_NAME, "lizard-janitor");
	char byte;
	ssize_t n;
	while ((n = read(keep, &byte, 1)) < 0 && errno == EINTR)
		;
	remove_daemon_dir(mine, NULL);
	_exit(0);
}
