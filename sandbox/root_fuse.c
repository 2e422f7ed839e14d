/* SPDX-License-Identifier: MIT */
#include "sandbox/root_fuse.h"

#include "util/clock.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *const sandbox_root_overlaid[SANDBOX_ROOT_OVERLAID + 1] = {
	"usr", "etc", "var/lib/dpkg", "var/lib/apt", "var/cache/apt", "var/cache/debconf", NULL
};

/* fuse-overlayfs mounts in milliseconds; a loaded machine gets room, and
 * the daemon, which waits 15 s for the init, gets this one's message. */
#define MOUNT_DEADLINE_MS 8000

void sandbox_root_flat(const char *name, char *out, size_t size)
{
	snprintf(out, size, "%s", name);
	for (char *c = out; *c; c++)
		if (*c == '/')
			*c = '-';
}

struct overlay {
	char target[64];
	dev_t below; /* the target's device before the mount */
	pid_t pid;
	bool mounted;
};

/* Whether this user namespace maps more than its root (the daemon's
 * subordinate ids: subid.h). */
static bool maps_more_than_root(void)
{
	FILE *f = fopen("/proc/self/uid_map", "re");
	unsigned long inside, outside, count, total = 0;
	while (f && fscanf(f, "%lu %lu %lu", &inside, &outside, &count) == 3)
		total += count;
	if (f)
		fclose(f);
	return total > 1;
}

/* How the owners fuse-overlayfs finds show inside. The host's files are
 * its root's, which no sandbox maps: they read as the overflow id, 65534.
 * With one id mapped every owner is root's. With the subordinate ids,
 * 65534 and 0 (the daemon's uid) show as root and the rest as they are,
 * so that root inside may give files to the system's users. */
static const char *owners(bool mapped)
{
	return mapped ? "uidmapping=0:0:1:1:1:65533:65534:0:1,"
			"gidmapping=0:0:1:1:1:65533:65534:0:1"
		      : "squash_to_root";
}

/* A fuse-overlayfs of the staged layers of name over /name, in the
 * foreground (a child of the init, in the sandbox's PID namespace). */
static pid_t start_one(const char *name, const char *loader, const char *libraries, bool mapped)
{
	char flat[64], options[640], target[80], tool[128];
	sandbox_root_flat(name, flat, sizeof(flat));
	snprintf(options, sizeof(options),
		 "lowerdir=%s/lower/%s,upperdir=%s/layers/upper/%s,workdir=%s/layers/work/%s,"
		 "%s,allow_other,noacl",
		 SANDBOX_ROOT_FUSE_DIR, flat, SANDBOX_ROOT_FUSE_DIR, flat, SANDBOX_ROOT_FUSE_DIR,
		 flat, owners(mapped));
	snprintf(target, sizeof(target), "/%s", name);
	snprintf(tool, sizeof(tool), "%s/bin/fuse-overlayfs", SANDBOX_HOST_USR);
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	/* The init's control socket and the rest are not its business. */
	close_range(3, ~0U, 0);
	char *argv[] = { (char *)loader,
			 "--library-path",
			 (char *)libraries,
			 tool,
			 "-f",
			 "-o",
			 options,
			 target,
			 NULL };
	char *envp[] = { NULL };
	execve(loader, argv, envp);
	_exit(127);
}

/* Waits, up to the deadline, for every overlay to be mounted; false, with
 * a message, when one's process ends first or time runs out. */
static bool wait_mounted(struct overlay *o, int count)
{
	int64_t deadline = clock_monotonic_ms() + MOUNT_DEADLINE_MS;
	for (;;) {
		int waiting = 0;
		for (int i = 0; i < count; i++) {
			struct stat st;
			int status;
			if (o[i].mounted)
				continue;
			if (stat(o[i].target, &st) == 0 && st.st_dev != o[i].below) {
				o[i].mounted = true;
				continue;
			}
			if (waitpid(o[i].pid, &status, WNOHANG) == o[i].pid) {
				o[i].pid = 0;
				fprintf(stderr,
					"sandbox-init: fuse-overlayfs ended (status %d) before "
					"mounting %s\n",
					status, o[i].target);
				return false;
			}
			waiting++;
		}
		if (!waiting)
			return true;
		if (clock_monotonic_ms() > deadline) {
			fprintf(stderr, "sandbox-init: fuse-overlayfs did not mount in %d ms\n",
				MOUNT_DEADLINE_MS);
			return false;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	}
}

/* Out of every program's reach from now on: the layers but through the
 * overlays, and FUSE itself (a way to stall the kernel mid-copy). */
static bool hide_staging(void)
{
	if (umount2(SANDBOX_ROOT_FUSE_DIR, MNT_DETACH) != 0 ||
	    umount2("/dev/fuse", MNT_DETACH) != 0 || unlink("/dev/fuse") != 0) {
		perror("sandbox-init: cannot hide the root's layers and /dev/fuse");
		return false;
	}
	rmdir(SANDBOX_ROOT_FUSE_DIR); /* an empty directory of the root's */
	return true;
}

bool sandbox_root_fuse_mount(const char *loader, const char *libraries)
{
	struct overlay o[SANDBOX_ROOT_OVERLAID];
	int count = 0;
	bool ok = true, mapped = maps_more_than_root();
	for (size_t i = 0; ok && sandbox_root_overlaid[i] && count < SANDBOX_ROOT_OVERLAID; i++) {
		char flat[64], lower[128];
		struct stat st;
		sandbox_root_flat(sandbox_root_overlaid[i], flat, sizeof(flat));
		snprintf(lower, sizeof(lower), "%s/lower/%s", SANDBOX_ROOT_FUSE_DIR, flat);
		if (stat(lower, &st) != 0 && errno == ENOENT)
			continue; /* the host has none */
		struct overlay *next = &o[count];
		snprintf(next->target, sizeof(next->target), "/%s", sandbox_root_overlaid[i]);
		next->mounted = false;
		next->pid = 0;
		if (stat(next->target, &st) != 0) {
			fprintf(stderr, "sandbox-init: no directory %s to mount over: %s\n",
				next->target, strerror(errno));
			ok = false;
			break;
		}
		next->below = st.st_dev;
		next->pid = start_one(sandbox_root_overlaid[i], loader, libraries, mapped);
		if (next->pid < 0) {
			perror("sandbox-init: cannot fork");
			ok = false;
			break;
		}
		count++;
	}
	ok = ok && wait_mounted(o, count) && hide_staging();
	if (!ok) /* the init ends, and the PID namespace with it */
		for (int i = 0; i < count; i++)
			if (o[i].pid > 0)
				kill(o[i].pid, SIGKILL);
	return ok;
}
