/* SPDX-License-Identifier: MIT */
#include "sandbox/bwrap.h"
#include "sandbox/init_binary.h"

#include "sandbox/child.h"
#include "sandbox/network.h"
#include "sandbox/protocol.h"
#include "sandbox/root_fuse.h"
#include "sandbox/state.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Where the daemon's binary appears inside, for bwrap to start as init. */
#define INIT_PATH "/run/lizard-init"
/* With an image (another system's root) or a FUSE root (root_fuse.h), the
 * host's /usr appears read-only at SANDBOX_HOST_USR: an init that is not
 * static (the daemon's binary, or any sanitizer build) runs with the
 * host's dynamic loader and libraries from there, the image's programs
 * with their own. */
#define HOST_USR SANDBOX_HOST_USR

void sandbox_bwrap_host_loader(char *out, size_t size)
{
	static const char *const loaders[] = { "/lib64/ld-linux-x86-64.so.2",
					       "/lib/ld-linux-aarch64.so.1" };
	char resolved[PATH_MAX];
	out[0] = '\0';
	for (size_t i = 0; i < sizeof(loaders) / sizeof(loaders[0]) && !out[0]; i++)
		if (realpath(loaders[i], resolved) && strncmp(resolved, "/usr/", 5) == 0)
			snprintf(out, size, "%s%.3000s", HOST_USR, resolved + 4);
}

const char *sandbox_bwrap_path(void)
{
	static const char *const candidates[] = { "/usr/bin/bwrap", "/usr/local/bin/bwrap",
						  "/bin/bwrap" };
	for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++)
		if (access(candidates[i], X_OK) == 0)
			return candidates[i];
	return NULL;
}

bool sandbox_bwrap_check_kernel(struct error *err)
{
	FILE *f = fopen("/proc/sys/user/max_user_namespaces", "r");
	long max = -1;
	if (f) {
		if (fscanf(f, "%ld", &max) != 1)
			max = -1;
		fclose(f);
	}
	if (max == 0) {
		error_set(err, 0,
			  "user namespaces are disabled (/proc/sys/user/max_user_namespaces is 0); "
			  "local sessions need them: sysctl user.max_user_namespaces=10000");
		return false;
	}
	f = fopen("/proc/sys/kernel/unprivileged_userns_clone", "r");
	long allowed = 1;
	if (f) {
		if (fscanf(f, "%ld", &allowed) != 1)
			allowed = 1;
		fclose(f);
	}
	if (allowed == 0) {
		error_set(err, 0,
			  "unprivileged user namespaces are disabled "
			  "(/proc/sys/kernel/unprivileged_userns_clone is 0); local sessions need "
			  "them: sysctl kernel.unprivileged_userns_clone=1");
		return false;
	}
	return true;
}

#define MAX_BWRAP_ARGS 128
/* A staged lower's path inside (root_fuse.h). */
#define STAGED_PATH 96

struct args {
	const char *v[MAX_BWRAP_ARGS];
	int n;
	bool overflow; /* an option did not fit: the sandbox must not start */
};

static void add(struct args *a, const char *first, const char *second, const char *third)
{
	const char *items[] = { first, second, third };
	for (int i = 0; i < 3 && items[i]; i++) {
		if (a->n < MAX_BWRAP_ARGS - 1)
			a->v[a->n++] = items[i];
		else
			a->overflow = true;
	}
	a->v[a->n] = NULL;
}

/* Top-level system paths, as the host has them: symlinks into /usr on a
 * merged-/usr system, directories otherwise. */
static void add_system_path(struct args *a, const char *path, char *link_buffer, size_t size)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return;
	if (S_ISLNK(st.st_mode)) {
		ssize_t len = readlink(path, link_buffer, size - 1);
		if (len <= 0)
			return;
		link_buffer[len] = '\0';
		add(a, "--symlink", link_buffer, path);
	} else if (S_ISDIR(st.st_mode)) {
		add(a, "--ro-bind", path, path);
	}
}

/* The numbers build_bwrap_args and the command line write out. */
_Static_assert(SANDBOX_BWRAP_FD_INFO == 5 && SANDBOX_BWRAP_FD_ARGS == 6 &&
		       SANDBOX_BWRAP_FD_PASSWD == 7 && SANDBOX_BWRAP_FD_GROUP == 8 &&
		       SANDBOX_BWRAP_FD_SECCOMP == 9 && SANDBOX_BWRAP_FD_USERNS == 10 &&
		       SANDBOX_BWRAP_FD_RESOLV == 11,
	       "bwrap's options name these descriptors by number");

/* A FUSE root's lowers and layers, where the init finds them (root_fuse.h);
 * staged names go in staged. */
static void add_fuse_staging(const struct sandbox *s, struct args *a, char staged[][STAGED_PATH])
{
	add(a, "--tmpfs", SANDBOX_ROOT_FUSE_DIR, NULL);
	for (int i = 0; i < SANDBOX_ROOT_OVERLAID; i++) {
		char flat[64];
		if (!s->root_lower[i][0])
			continue;
		sandbox_root_flat(sandbox_root_overlaid[i], flat, sizeof(flat));
		snprintf(staged[i], STAGED_PATH, "%s/lower/%s", SANDBOX_ROOT_FUSE_DIR, flat);
		add(a, "--ro-bind", s->root_lower[i], staged[i]);
	}
	/* One mount for upper and work: fuse-overlayfs renames across them. */
	add(a, "--bind", s->layers, SANDBOX_ROOT_FUSE_DIR "/layers");
	add(a, "--dev-bind", "/dev/fuse", "/dev/fuse");
}

static void build_bwrap_args(const struct sandbox *s, struct args *a, char links[][128],
			     char staged[][STAGED_PATH], const char *resolv_dest)
{
	a->n = 0;
	a->overflow = false;
	/* First, so that no command line can lack it: bwrap loads the filter
	 * right before the init's exec wherever the option stands, and the
	 * init and all it starts run under it. */
	add(a, "--seccomp", "9", NULL);
	/* A root daemon's sandbox joins the namespace the daemon made with
	 * all of its ids mapped (userns.h); bwrap makes one that maps only
	 * the daemon's user otherwise. */
	if (s->userns_fd >= 0)
		add(a, "--userns", "10", NULL);
	else
		add(a, "--unshare-user", NULL, NULL);
	add(a, "--uid", "0", NULL);
	add(a, "--gid", "0", NULL);
	add(a, "--unshare-pid", "--unshare-ipc", "--unshare-uts");
	/* Always its own network: loopback only, or slirp4netns's (network.h),
	 * never the host's with its loopback services. A root daemon's child
	 * joins the one the daemon made (userns.h) before its exec. */
	if (s->netns_fd < 0)
		add(a, "--unshare-net", NULL, NULL);
	add(a, "--unshare-cgroup-try", NULL, NULL);
	add(a, "--die-with-parent", "--info-fd", "5");
	/* The init is root of the sandbox with a root's capabilities there
	 * (never on the host): mapping the user's namespace onto it needs
	 * CAP_SETFCAP, and `user: root` means root inside. */
	add(a, "--cap-add", "ALL", NULL);
	add(a, "--hostname", "sandbox", NULL);
	/* A writable root (root.h) brings /usr, /etc and the package
	 * databases along as overlays mounted in it. */
	if (s->rootfs[0])
		add(a, "--bind", s->rootfs, "/");
	else
		add(a, "--ro-bind", "/usr", "/usr");
	static const char *const system_paths[] = { "/bin",   "/sbin",  "/lib",
						    "/lib32", "/lib64", "/libx32" };
	/* An image has its own. */
	for (int i = 0; i < 6 && !s->image_dir[0]; i++)
		add_system_path(a, system_paths[i], links[i], 128);
	if (!s->rootfs[0])
		add(a, "--ro-bind", "/etc", "/etc");
	/* A writable root has its own, in its layer (root_private.h). */
	if (!s->rootfs[0]) {
		add(a, "--ro-bind-data", "7", "/etc/passwd");
		add(a, "--ro-bind-data", "8", "/etc/group");
	}
	if (resolv_dest)
		add(a, "--ro-bind-data", "11", resolv_dest);
	add(a, "--proc", "/proc", NULL);
	add(a, "--dev", "/dev", NULL);
	if (s->root_fuse)
		add_fuse_staging(s, a, staged);
	/* On the session's disk when it has one, so that /tmp counts against
	 * the disk and not, as a tmpfs would, against its memory. */
	if (s->on_disk)
		add(a, "--bind", s->tmp_dir, "/tmp");
	else
		add(a, "--tmpfs", "/tmp", NULL);
	/* X servers put their sockets here. It is the run directory's, so the
	 * host reaches a display by its socket's path: the abstract socket
	 * stays in the sandbox's network namespace. */
	add(a, "--bind", s->x11_dir, "/tmp/.X11-unix");
	add(a, "--dir", "/var/tmp", NULL);
	if (s->rootfs[0])
		add(a, "--dir", "/var/log", NULL);
	/* Without the system's font cache every program that draws text
	 * (openbox, Chromium) would rebuild one in the fresh HOME: seconds. */
	if (!s->image_dir[0] && access("/var/cache/fontconfig", F_OK) == 0)
		add(a, "--ro-bind", "/var/cache/fontconfig", "/var/cache/fontconfig");
	add(a, "--bind", s->home, s->inside_home);
	add(a, "--bind", s->volume_mount[0] ? s->volume_mount : s->workspace, s->inside_workspace);
	add(a, "--bind", s->run_dir, s->inside_run_dir);
	add(a, "--ro-bind-fd", "4", INIT_PATH);
	if ((s->image_dir[0] && !sandbox_init_binary()->is_static) || s->root_fuse)
		add(a, "--ro-bind", "/usr", HOST_USR);
	add(a, "--chdir", s->inside_home, NULL);
}

/* Inside, only these users exist; the host's names stay outside. */
static void users_and_groups(const struct sandbox *s, char *users, size_t users_size, char *groups,
			     size_t groups_size)
{
	snprintf(users, users_size,
		 "root:x:0:0:root:/root:/bin/sh\n"
		 "user:x:%d:%d:user:%s:/bin/sh\n"
		 "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
		 SANDBOX_USER_ID, SANDBOX_USER_ID, s->inside_home);
	snprintf(groups, groups_size, "root:x:0:\nuser:x:%d:\nnogroup:x:65534:\n", SANDBOX_USER_ID);
}

/* Where the inside's resolv.conf goes: over /etc/resolv.conf or, when that
 * is a link (systemd-resolved, resolvconf), over what it points to, which
 * bwrap creates on the sandbox's own root when it is not there. */
static const char *resolv_conf_destination(char *buffer, size_t size)
{
	struct stat st;
	if (lstat("/etc/resolv.conf", &st) != 0 || !S_ISLNK(st.st_mode))
		return "/etc/resolv.conf";
	char target[256];
	ssize_t len = readlink("/etc/resolv.conf", target, sizeof(target) - 1);
	if (len <= 0)
		return "/etc/resolv.conf";
	target[len] = '\0';
	const char *rest = target;
	while (strncmp(rest, "../", 3) == 0)
		rest += 3; /* /etc/.. is / */
	if (target[0] == '/')
		snprintf(buffer, size, "%s", target);
	else if (rest != target)
		snprintf(buffer, size, "/%s", rest);
	else
		snprintf(buffer, size, "/etc/%s", target);
	return strstr(buffer, "/../") ? "/etc/resolv.conf" : buffer;
}

/* A pipe's read end holding text, for bwrap to read to its end. */
static int data_fd(const char *text, size_t len)
{
	int pipe_fds[2];
	if (len > 60 * 1024 || pipe2(pipe_fds, O_CLOEXEC) != 0)
		return -1; /* more than a pipe holds without a reader */
	bool ok = write(pipe_fds[1], text, len) == (ssize_t)len;
	close(pipe_fds[1]);
	if (!ok) {
		close(pipe_fds[0]);
		return -1;
	}
	return pipe_fds[0];
}

bool sandbox_bwrap_prepare(struct sandbox *s, int control, int seccomp_fd,
			   struct sandbox_bwrap_fds *fds)
{
	*fds = (struct sandbox_bwrap_fds){ .fd = { control, -1, -1, -1, -1, -1, -1, -1, -1 },
					   .count = 1,
					   .info_read = -1,
					   .args_write = -1 };
	sandbox_bwrap_host_loader(fds->loader, sizeof(fds->loader));
	snprintf(fds->libraries, sizeof(fds->libraries), "%s", fds->loader);
	char *slash = strrchr(fds->libraries, '/');
	if (slash)
		*slash = '\0';
	if (!s->isolated) {
		if (seccomp_fd >= 0)
			close(seccomp_fd);
		return true;
	}
	char users[512], groups[128], resolv[2048];
	/* A FUSE root has it in its layer (root.c). */
	bool want_resolv = s->network && !s->root_fuse;
	users_and_groups(s, users, sizeof(users), groups, sizeof(groups));
	if (want_resolv)
		sandbox_network_resolv_conf(resolv, sizeof(resolv), &s->has_dns);
	int info[2] = { -1, -1 }, args[2] = { -1, -1 };
	if (pipe2(info, O_CLOEXEC) == 0)
		fds->info_read = info[0];
	if (pipe2(args, O_CLOEXEC) == 0)
		fds->args_write = args[1];
	fds->fd[1] = open(sandbox_init_binary()->path, O_PATH | O_CLOEXEC);
	fds->fd[2] = info[1];
	fds->fd[3] = args[0];
	fds->fd[4] = data_fd(users, strlen(users));
	fds->fd[5] = data_fd(groups, strlen(groups));
	fds->fd[6] = seccomp_fd;
	/* Always a descriptor in its place, so that the next keeps its number. */
	fds->fd[7] = s->userns_fd >= 0 ? fcntl(s->userns_fd, F_DUPFD_CLOEXEC, 3)
				       : open("/dev/null", O_RDONLY | O_CLOEXEC);
	fds->count = 8;
	if (want_resolv)
		fds->fd[fds->count++] = data_fd(resolv, strlen(resolv));
	bool prepared = fds->info_read >= 0 && fds->args_write >= 0;
	for (int i = 1; i < fds->count; i++)
		prepared = prepared && fds->fd[i] >= 0;
	return prepared;
}

bool sandbox_bwrap_send_args(struct sandbox *s, struct sandbox_bwrap_fds *fds, struct error *err)
{
	int to = fds->args_write;
	fds->args_write = -1;
	if (to < 0)
		return true; /* not isolated: the init reads none */
	struct args a;
	char links[6][128], staged[SANDBOX_ROOT_OVERLAID][STAGED_PATH];
	char resolv_buffer[300];
	bool want_resolv = s->network && !s->root_fuse;
	build_bwrap_args(s, &a, links, staged,
			 want_resolv ? resolv_conf_destination(resolv_buffer, sizeof(resolv_buffer))
				     : NULL);
	char serialized[16 * 1024];
	size_t len = 0;
	for (int i = 0; i < a.n && !a.overflow; i++) {
		size_t item = strlen(a.v[i]) + 1;
		if (len + item > sizeof(serialized)) {
			a.overflow = true;
			break;
		}
		memcpy(serialized + len, a.v[i], item);
		len += item;
	}
	if (a.overflow) {
		fds->args_write = to; /* the caller ends bwrap first, then closes it */
		return error_set(err, 0, "the sandbox's bwrap command line does not fit");
	}
	/* Whole or not at all: bwrap reads to the end, so the end comes only
	 * after the last byte. A pipe smaller than the line (a user's pipes
	 * limited by pipe-user-pages-soft) takes it in parts as bwrap reads. */
	for (size_t sent = 0; sent < len;) {
		ssize_t n = write(to, serialized + sent, len - sent);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int saved = errno;
			fds->args_write = to;
			return error_set(err, saved, "cannot pass bwrap its command line");
		}
		sent += (size_t)n;
	}
	close(to);
	return true;
}

void sandbox_bwrap_close_fds(struct sandbox_bwrap_fds *fds)
{
	for (int i = 0; i < fds->count; i++)
		if (fds->fd[i] >= 0)
			close(fds->fd[i]);
	fds->count = 0;
}

_Noreturn void sandbox_bwrap_exec(const struct sandbox *s, const char *bwrap,
				  const struct sandbox_bwrap_fds *fds, pid_t parent,
				  const struct sandbox_cgroup_join *join)
{
	char *plain[] = { "/proc/self/exe", "sandbox-init", "3", "plain", NULL };
	/* bwrap, 3 options, loader with 2, the init with 3, fuse mode with 3. */
	char *isolated[16];
	int n = 0;
	isolated[n++] = (char *)bwrap;
	isolated[n++] = "--args";
	isolated[n++] = "6";
	isolated[n++] = "--";
	/* Where / has no /usr of the host's when the init starts. */
	if ((s->image_dir[0] || s->root_fuse) && fds->loader[0] &&
	    !sandbox_init_binary()->is_static) {
		isolated[n++] = (char *)fds->loader;
		isolated[n++] = "--library-path";
		isolated[n++] = (char *)fds->libraries;
	}
	isolated[n++] = INIT_PATH;
	isolated[n++] = "sandbox-init";
	isolated[n++] = "3";
	isolated[n++] = "isolated";
	if (s->root_fuse) {
		isolated[n++] = SANDBOX_ROOT_FUSE_MODE;
		isolated[n++] = (char *)fds->loader;
		isolated[n++] = (char *)fds->libraries;
	}
	isolated[n] = NULL;
	char *const *argv = s->isolated ? isolated : plain;
	char *const env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", NULL };
	/* As the daemon's root still: joining needs CAP_SYS_ADMIN here. */
	if (s->netns_fd >= 0 && setns(s->netns_fd, CLONE_NEWNET) != 0)
		_exit(126);
	sandbox_child_setup(join, s->host_uid, parent);
	int null_fd = open("/dev/null", O_RDWR);
	dup2(null_fd, STDIN_FILENO);
	dup2(s->log_fd, STDOUT_FILENO);
	dup2(s->log_fd, STDERR_FILENO);
	/* Move them all out of the way first: one may sit on a target. */
	int high[SANDBOX_BWRAP_FD_END - SANDBOX_BWRAP_FD_CONTROL];
	for (int i = 0; i < fds->count; i++)
		if ((high[i] = fcntl(fds->fd[i], F_DUPFD_CLOEXEC, 20)) < 0)
			_exit(126);
	for (int i = 0; i < fds->count; i++)
		dup2(high[i], SANDBOX_BWRAP_FD_CONTROL + i);
	close_range((unsigned)(SANDBOX_BWRAP_FD_CONTROL + fds->count), ~0U, 0);
	if (chdir(s->home) != 0)
		_exit(126);
	execve(argv[0], argv, env);
	_exit(127);
}

pid_t sandbox_bwrap_read_pid(int info_read, int timeout_ms)
{
	char json[1024];
	size_t used = 0;
	for (;;) {
		struct pollfd pfd = { .fd = info_read, .events = POLLIN };
		if (used + 1 >= sizeof(json) || poll(&pfd, 1, timeout_ms) <= 0)
			break;
		ssize_t n = read(info_read, json + used, sizeof(json) - 1 - used);
		if (n <= 0)
			break;
		used += (size_t)n;
		json[used] = '\0';
		const char *key = strstr(json, "\"child-pid\":");
		char *end;
		long pid = key ? strtol(key + 12, &end, 10) : 0;
		if (key && pid > 0 && (*end == ',' || *end == '\n' || *end == '}'))
			return (pid_t)pid;
	}
	return 0;
}
