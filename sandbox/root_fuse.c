/* SPDX-License-Identifier: MIT */
#include "sandbox/root_fuse.h"
#include "sandbox/idmap.h"

#include "util/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *const sandbox_root_overlaid[SANDBOX_ROOT_OVERLAID + 1] = {
	"usr", "etc", "var/lib/dpkg", "var/lib/apt", "var/cache/apt", "var/cache/debconf", NULL
};

/* fuse-overlayfs mounts in milliseconds; a loaded machine gets room, and
 * the daemon, which waits 15 s for the init, gets this one's message. */
#define MOUNT_DEADLINE_MS 8000
/* Where the server mounts, in the staging directory. */
#define MERGED SANDBOX_ROOT_FUSE_DIR "/merged"

/* The server, once it has mounted: the init's child. */
static pid_t server_pid;

void sandbox_root_flat(const char *name, char *out, size_t size)
{
	snprintf(out, size, "%s", name);
	for (char *c = out; *c; c++)
		if (*c == '/')
			*c = '-';
}

/* Whether this user namespace maps more than its root (the daemon's
 * subordinate ids: subid.h). */
static bool maps_more_than_root(void)
{
	char map[512];
	return sandbox_identity_map("uid_map", map, sizeof(map)) > 1;
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

/* The one fuse-overlayfs of the staged lowers (lower/<flat> each) under
 * the layers (upper/<flat>) at MERGED, in the foreground: a child of the
 * init, in the sandbox's PID namespace. One server for all the overlaid
 * directories: each costs about 20 ms of CPU to start.
 * static_nlink: a directory's link count is 1, as on filesystems that do
 * not count (find(1) knows the convention); counting the subdirectories
 * of /usr/bin and /usr/lib/x86_64-linux-gnu on their first lookup was
 * most of a session's first exec (about 80 ms here). */
static pid_t start_server(const char *loader, const char *libraries)
{
	char options[640], tool[128];
	snprintf(options, sizeof(options),
		 "lowerdir=%s/lower,upperdir=%s/layers/upper,workdir=%s/layers/work,"
		 "%s,allow_other,noacl,static_nlink",
		 SANDBOX_ROOT_FUSE_DIR, SANDBOX_ROOT_FUSE_DIR, SANDBOX_ROOT_FUSE_DIR,
		 owners(maps_more_than_root()));
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
			 MERGED,
			 NULL };
	char *envp[] = { NULL };
	execve(loader, argv, envp);
	_exit(127);
}

/* Waits, up to the deadline, for the server to mount MERGED, whose device
 * was below; false, with a message, when it ends first or time runs out.
 * table (the mount table, open from before the server's start) wakes the
 * wait when a mount comes (POLLPRI), a pidfd when the server ends. */
static bool wait_mounted(pid_t server, dev_t below, int table)
{
	int pidfd = (int)syscall(SYS_pidfd_open, server, 0);
	int64_t deadline = clock_monotonic_ms() + MOUNT_DEADLINE_MS;
	bool mounted = false;
	for (;;) {
		struct stat st;
		int status;
		if (stat(MERGED, &st) == 0 && st.st_dev != below) {
			mounted = true;
			break;
		}
		if (waitpid(server, &status, WNOHANG) == server) {
			fprintf(stderr,
				"sandbox-init: fuse-overlayfs ended (status %d) before mounting\n",
				status);
			break;
		}
		int64_t left = deadline - clock_monotonic_ms();
		if (left <= 0) {
			fprintf(stderr, "sandbox-init: fuse-overlayfs did not mount in %d ms\n",
				MOUNT_DEADLINE_MS);
			break;
		}
		struct pollfd wake[] = { { .fd = table, .events = POLLPRI },
					 { .fd = pidfd, .events = POLLIN } };
		if (table >= 0 && pidfd >= 0)
			poll(wake, 2, (int)left);
		else
			nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	}
	if (pidfd >= 0)
		close(pidfd);
	return mounted;
}

/* Each overlaid directory whose lower bwrap staged: its part of MERGED
 * bound over it. */
static bool bind_overlaid(void)
{
	for (size_t i = 0; sandbox_root_overlaid[i]; i++) {
		char flat[64], lower[128], part[160], target[80];
		struct stat st;
		sandbox_root_flat(sandbox_root_overlaid[i], flat, sizeof(flat));
		snprintf(lower, sizeof(lower), "%s/lower/%s", SANDBOX_ROOT_FUSE_DIR, flat);
		if (stat(lower, &st) != 0 && errno == ENOENT)
			continue; /* the host has none */
		snprintf(part, sizeof(part), "%s/%s", MERGED, flat);
		snprintf(target, sizeof(target), "/%s", sandbox_root_overlaid[i]);
		if (mount(part, target, NULL, MS_BIND, NULL) != 0) {
			fprintf(stderr, "sandbox-init: cannot bind %s over %s: %s\n", part, target,
				strerror(errno));
			return false;
		}
	}
	return true;
}

/* In the programs' mount namespace: out of every program's reach from now
 * on, the layers but through the overlays, and FUSE itself (a way to stall
 * the kernel mid-copy). Only there: the server finds the lowers through
 * the staging directory's mounts, which a detach would take from under it
 * too. The unlink takes /dev/fuse from the init's namespace as well (the
 * server holds it open). */
static bool hide_staging(void)
{
	if (umount2(SANDBOX_ROOT_FUSE_DIR, MNT_DETACH) != 0 ||
	    umount2("/dev/fuse", MNT_DETACH) != 0 || unlink("/dev/fuse") != 0) {
		perror("sandbox-init: cannot hide the root's layers and /dev/fuse");
		return false;
	}
	/* An empty read-only mount over its directory: a program's rmdir of
	 * it would detach the init's staging mounts too (the kernel unmounts
	 * what is on a removed directory in every namespace). */
	if (mount("tmpfs", SANDBOX_ROOT_FUSE_DIR, "tmpfs",
		  MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0") != 0) {
		perror("sandbox-init: cannot cover the root's staging directory");
		return false;
	}
	return true;
}

bool sandbox_root_fuse_mount(const char *loader, const char *libraries)
{
	struct stat st;
	if (mkdir(MERGED, 0700) != 0 || stat(MERGED, &st) != 0) {
		fprintf(stderr, "sandbox-init: cannot make %s: %s\n", MERGED, strerror(errno));
		return false;
	}
	int table = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	pid_t server = start_server(loader, libraries);
	if (server < 0) {
		perror("sandbox-init: cannot fork");
		if (table >= 0)
			close(table);
		return false;
	}
	bool mounted = wait_mounted(server, st.st_dev, table);
	if (table >= 0)
		close(table);
	if (mounted && bind_overlaid()) {
		server_pid = server;
		return true;
	}
	/* The init ends, and the PID namespace with it. */
	kill(server, SIGKILL);
	return false;
}

/* In the programs' init: a mount namespace of its own, without the
 * staging directory, where a procfs of the programs' PID namespace covers
 * the sandbox's (which lists the server). The /proc entries that set the
 * kernel's knobs are bound read-only over themselves: the sandbox's root
 * owns some of /proc/sys (pid_max of its PID namespace: set low, no
 * program could fork). */
static bool mount_own_proc(void)
{
	static const char *const covered[] = { "/proc/sys", "/proc/sysrq-trigger", "/proc/irq",
					       "/proc/bus" };
	const unsigned long locked = MS_NOSUID | MS_NODEV | MS_NOEXEC;
	if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
		perror("sandbox-init: cannot make the programs' mount namespace");
		return false;
	}
	if (!hide_staging())
		return false;
	if (mount("proc", "/proc", "proc", locked, NULL) != 0) {
		perror("sandbox-init: cannot mount the programs' /proc");
		return false;
	}
	for (size_t i = 0; i < sizeof(covered) / sizeof(covered[0]); i++) {
		struct stat st;
		if (stat(covered[i], &st) != 0 && errno == ENOENT)
			continue;
		if (mount(covered[i], covered[i], NULL, MS_BIND | MS_REC, NULL) != 0 ||
		    mount(NULL, covered[i], NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | locked,
			  NULL) != 0) {
			fprintf(stderr, "sandbox-init: cannot make %s read-only: %s\n", covered[i],
				strerror(errno));
			return false;
		}
	}
	return true;
}

bool sandbox_root_fuse_nest(int control)
{
	if (unshare(CLONE_NEWPID) != 0) {
		perror("sandbox-init: cannot make the programs' PID namespace");
		return false;
	}
	pid_t programs = fork();
	if (programs < 0) {
		perror("sandbox-init: cannot fork");
		return false;
	}
	if (programs == 0)
		return mount_own_proc();
	/* The daemon's hangup must reach the programs' init alone. */
	close(control);
	for (;;) {
		int status;
		pid_t pid = waitpid(-1, &status, 0);
		if (pid == programs)
			_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
		/* Without its server the root is gone (ENOTCONN): so is the
		 * sandbox, and the daemon hears of it. */
		if (pid == server_pid) {
			fprintf(stderr, "sandbox-init: fuse-overlayfs ended (status %d)\n", status);
			kill(programs, SIGKILL);
		}
		if (pid < 0 && errno != EINTR)
			_exit(1);
	}
}
