/* Making and ending a sandbox: its private directory on the host, the
 * bubblewrap command line, the init inside, and the cleanup of what a
 * killed daemon left behind.
 *
 * bwrap always runs as an unprivileged host user. A daemon running as root
 * forks, drops to a uid of the sandbox's own (uid.h: from the daemon's
 * range, never one that is taken, so sessions cannot touch each other's
 * files, nor anyone else's, even by plain permissions) and runs bwrap, so
 * the sandbox's root is never the host's.
 * A daemon running as an ordinary user runs bwrap as itself, which needs
 * the kernel to allow unprivileged user namespaces. */

#include "sandbox/sandbox.h"
#include "sandbox/state.h"
#include "sandbox/child.h"
#include "sandbox/stale.h"
#include "sandbox/cgroup.h"
#include "sandbox/disk.h"
#include "sandbox/log.h"
#include "sandbox/network.h"
#include "sandbox/protocol.h"
#include "sandbox/seccomp.h"
#include "sandbox/tree.h"
#include "sandbox/uid.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define INIT_START_TIMEOUT_MS 15000
#define INIT_EXIT_TIMEOUT_MS 2000
#define INIT_PATH "/run/lizard-init"
/* Files of a volume handed to a new sandbox's uid at most; beyond, the
 * session does not start rather than see files it cannot write. */
#define WORKSPACE_MAX_ENTRIES 1000000
#define VOLUME_RELEASE_TIMEOUT_MS 5000

static const char *bwrap_path(void)
{
	static const char *const candidates[] = { "/usr/bin/bwrap", "/usr/local/bin/bwrap", "/bin/bwrap" };
	for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++)
		if (access(candidates[i], X_OK) == 0)
			return candidates[i];
	return NULL;
}

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

/* Ends the host's binding of the volume once bwrap has its own. */
static bool unmount_volume(struct sandbox *s, struct error *err)
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

/* Mounts a volume's disk image at the sandbox's own dir/volume for bwrap
 * to bind at /workspace, and gives its files to the sandbox's uid. */
static bool mount_volume_image(struct sandbox *s, const char *image, struct error *err)
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
	return s->host_uid == geteuid() ||
	       sandbox_tree_chown(mount_point, s->host_uid, s->host_uid, WORKSPACE_MAX_ENTRIES, err);
}

/* The private directory stays the daemon's (0711: the sandbox's uid may
 * pass through to bind what is inside); only run, home and workspace are
 * the sandbox's, and those the daemon holds by descriptor from here on. */
/* The session's own disk, mounted at dir/disk: where its directories go. */
static bool make_disk(struct sandbox *s, uint64_t bytes, struct error *err)
{
	if (!sandbox_disk_make(s->dir_fd, s->dir, "disk.img", bytes, geteuid(), false, err))
		return false;
	snprintf(s->disk_mount, sizeof(s->disk_mount), "%s/disk", s->dir);
	if (mkdirat(s->dir_fd, "disk", 0700) != 0)
		return error_set(err, errno, "cannot create %s", s->disk_mount);
	if (!sandbox_disk_mount(s->dir_fd, s->dir, "disk.img", s->disk_mount, &s->disk_loop, err))
		return false;
	s->on_disk = true;
	s->disk_fd = openat(s->dir_fd, "disk", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->disk_fd < 0)
		return error_set(err, errno, "cannot open %s", s->disk_mount);
	/* The disk's root, like dir, stays the daemon's. */
	fchmod(s->disk_fd, 0711);
	return true;
}

static bool make_dirs(struct sandbox *s, uint64_t disk_bytes, struct error *err)
{
	char base[128];
	if (!sandbox_base_dir(base, sizeof(base), err))
		return false;
	char daemon_dir[160];
	snprintf(daemon_dir, sizeof(daemon_dir), "%s/%ld", base, (long)getpid());
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
	if (disk_bytes && !make_disk(s, disk_bytes, err))
		return false;
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
	static const struct { const char *name; mode_t mode; bool in_run, disk_only; } dirs[] = {
		{ "home", 0700, false, false }, { "workspace", 0755, false, false },
		{ "tmp", 01777, false, true }, { ".X11-unix", 0700, true, false },
	};
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		if (dirs[i].disk_only && !s->on_disk)
			continue;
		int fd = make_dir_at(dirs[i].in_run ? s->run_fd : parent, dirs[i].name, dirs[i].mode,
				     s->host_uid, dirs[i].in_run ? s->run_dir : under, err);
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

/* What the kernel must allow, said before bwrap fails less clearly. */
static bool check_kernel(struct error *err)
{
	FILE *f = fopen("/proc/sys/user/max_user_namespaces", "r");
	long max = -1;
	if (f) {
		if (fscanf(f, "%ld", &max) != 1)
			max = -1;
		fclose(f);
	}
	if (max == 0) {
		error_set(err, 0, "user namespaces are disabled (/proc/sys/user/max_user_namespaces is 0); "
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
		error_set(err, 0, "unprivileged user namespaces are disabled "
			 "(/proc/sys/kernel/unprivileged_userns_clone is 0); local sessions need "
			 "them: sysctl kernel.unprivileged_userns_clone=1");
		return false;
	}
	return true;
}

#define MAX_BWRAP_ARGS 96

struct args {
	const char *v[MAX_BWRAP_ARGS];
	int n;
};

static void add(struct args *a, const char *first, const char *second, const char *third)
{
	const char *items[] = { first, second, third };
	for (int i = 0; i < 3 && items[i]; i++)
		if (a->n < MAX_BWRAP_ARGS - 1)
			a->v[a->n++] = items[i];
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

/* What bwrap finds at fds 3 and up (sandbox_create makes them). Its options
 * come through a pipe (--args) and the small files it places inside
 * through pipes too (--ro-bind-data), so neither /proc/1/cmdline inside
 * (bwrap's own process) nor the mount table names the private directory's
 * host path for them. */
enum bwrap_fd {
	FD_CONTROL = 3, /* the init's control socket */
	FD_EXE,         /* the daemon's binary: the init */
	FD_INFO,        /* bwrap writes the sandbox's host pid here */
	FD_ARGS,
	FD_PASSWD,
	FD_GROUP,
	FD_SECCOMP,     /* the system call filter (seccomp.h) */
	FD_RESOLV,      /* with a network only */
	FD_END
};
/* The numbers build_bwrap_args writes out. */
_Static_assert(FD_INFO == 5 && FD_ARGS == 6 && FD_PASSWD == 7 && FD_GROUP == 8 &&
		       FD_SECCOMP == 9 && FD_RESOLV == 10,
	       "bwrap's options name these descriptors by number");

static void build_bwrap_args(const struct sandbox *s, struct args *a, char links[][128],
			     const char *resolv_dest)
{
	a->n = 0;
	add(a, "--unshare-user", NULL, NULL);
	add(a, "--uid", "0", NULL);
	add(a, "--gid", "0", NULL);
	add(a, "--unshare-pid", "--unshare-ipc", "--unshare-uts");
	/* Always its own network: loopback only, or slirp4netns's (network.h),
	 * never the host's with its loopback services. */
	add(a, "--unshare-net", "--unshare-cgroup-try", NULL);
	add(a, "--die-with-parent", "--info-fd", "5");
	/* The init is root of the sandbox with a root's capabilities there
	 * (never on the host): mapping the user's namespace onto it needs
	 * CAP_SETFCAP, and `user: root` means root inside. */
	add(a, "--cap-add", "ALL", NULL);
	add(a, "--hostname", "sandbox", NULL);
	add(a, "--ro-bind", "/usr", "/usr");
	static const char *const system_paths[] = { "/bin", "/sbin", "/lib", "/lib32", "/lib64",
						    "/libx32" };
	for (int i = 0; i < 6; i++)
		add_system_path(a, system_paths[i], links[i], 128);
	add(a, "--ro-bind", "/etc", "/etc");
	add(a, "--ro-bind-data", "7", "/etc/passwd");
	add(a, "--ro-bind-data", "8", "/etc/group");
	if (resolv_dest)
		add(a, "--ro-bind-data", "10", resolv_dest);
	add(a, "--proc", "/proc", NULL);
	add(a, "--dev", "/dev", NULL);
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
	/* Without the system's font cache every program that draws text
	 * (openbox, Chromium) would rebuild one in the fresh HOME: seconds. */
	if (access("/var/cache/fontconfig", F_OK) == 0)
		add(a, "--ro-bind", "/var/cache/fontconfig", "/var/cache/fontconfig");
	add(a, "--bind", s->home, SANDBOX_HOME);
	add(a, "--bind", s->volume_mount[0] ? s->volume_mount : s->workspace, SANDBOX_WORKSPACE);
	add(a, "--bind", s->run_dir, SANDBOX_RUN_DIR);
	add(a, "--ro-bind-fd", "4", INIT_PATH);
	add(a, "--chdir", SANDBOX_HOME, NULL);
	/* Loaded last, right before the init's exec: the init and all it
	 * starts run under it. */
	add(a, "--seccomp", "9", NULL);
}

/* Inside, only these users exist; the host's names stay outside. */
static void users_and_groups(char *users, size_t users_size, char *groups, size_t groups_size)
{
	snprintf(users, users_size,
		 "root:x:0:0:root:/root:/bin/sh\n"
		 "user:x:%d:%d:user:" SANDBOX_HOME ":/bin/sh\n"
		 "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
		 SANDBOX_USER_ID, SANDBOX_USER_ID);
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


/* In the child, before exec: only async-signal-safe calls. fds[i] becomes
 * fd 3 + i; fds[0] is the control socket, the only one without bwrap. */
static _Noreturn void exec_sandbox(const struct sandbox *s, char *const *argv, const int *fds,
				   int fd_count, pid_t parent, const struct sandbox_cgroup_join *join)
{
	char *const env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", NULL };
	sandbox_child_setup(join, s->host_uid, parent);
	int null_fd = open("/dev/null", O_RDWR);
	dup2(null_fd, STDIN_FILENO);
	dup2(s->log_fd, STDOUT_FILENO);
	dup2(s->log_fd, STDERR_FILENO);
	/* Move them all out of the way first: one may sit on a target. */
	int high[FD_END - FD_CONTROL];
	for (int i = 0; i < fd_count; i++)
		if ((high[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 20)) < 0)
			_exit(126);
	for (int i = 0; i < fd_count; i++)
		dup2(high[i], FD_CONTROL + i);
	close_range((unsigned)(FD_CONTROL + fd_count), ~0U, 0);
	if (chdir(s->home) != 0)
		_exit(126);
	execve(argv[0], argv, env);
	_exit(127);
}

static bool wait_for_init(struct sandbox *s, struct error *err)
{
	struct pollfd pfd = { .fd = s->control, .events = POLLIN };
	int n;
	while ((n = poll(&pfd, 1, INIT_START_TIMEOUT_MS)) < 0 && errno == EINTR)
		;
	char hello;
	if (n > 0 && recv(s->control, &hello, 1, 0) == 1)
		return true;
	char tail[256];
	sandbox_log_last_line(s->log, tail, sizeof(tail));
	error_set(err, 0, "the sandbox did not start%s%s%s", tail[0] ? " (bwrap said: " : "",
		 tail, tail[0] ? ")" : "");
	return false;
}

/* The host pid of the sandbox's first process, from bwrap's --info-fd
 * JSON ({"child-pid": N, ...}), written before the init starts. */
static pid_t read_sandbox_pid(int info_fd)
{
	char json[1024];
	size_t used = 0;
	for (;;) {
		struct pollfd pfd = { .fd = info_fd, .events = POLLIN };
		if (used + 1 >= sizeof(json) || poll(&pfd, 1, INIT_START_TIMEOUT_MS) <= 0)
			break;
		ssize_t n = read(info_fd, json + used, sizeof(json) - 1 - used);
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

/* Starts the inside's own network (network.h) once the sandbox is up, not
 * as soon as bwrap names its pid: slirp4netns sets the loopback up, which
 * races with bwrap's own setup of it (bwrap then fails with "loopback:
 * Failed RTM_NEWADDR", about one start in twenty-five). */
static bool start_network(struct sandbox *s, const struct sandbox_cgroup_join *join,
			  struct error *err)
{
	if (s->init_pid <= 0)
		return error_set(err, 0, "bwrap did not say the sandbox's pid (--info-fd)");
	return sandbox_network_start(&s->net, s->init_pid, s->host_uid, s->log_fd, join, err);
}

/* The init is the last thing the OOM killer may take: the init raises
 * every program above itself (init.c), and where the daemon may lower a
 * score (CAP_SYS_RESOURCE, which not every root has) it is never taken. */
static void protect_init(struct sandbox *s)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%ld/oom_score_adj", (long)s->init_pid);
	int fd = s->init_pid > 0 && geteuid() == 0 ? open(path, O_WRONLY | O_CLOEXEC) : -1;
	/* Best effort: without CAP_SYS_RESOURCE it stays at 0, below every
	 * program all the same. */
	if (fd >= 0) {
		(void)!write(fd, "-1000", 5);
		close(fd);
	}
}

/* Waits for the helper; a failure carries the last thing it said. */
static bool wait_network(struct sandbox *s, struct error *err)
{
	if (sandbox_network_wait(&s->net, err))
		return true;
	char tail[200], message[sizeof(err->message)];
	sandbox_log_last_line(s->log, tail, sizeof(tail));
	if (tail[0] && err) {
		snprintf(message, sizeof(message), "%s", err->message);
		error_set(err, 0, "%.300s (it said: %s)", message, tail);
	}
	return false;
}

static bool build_env(struct sandbox *s, const struct sandbox_options *o)
{
	const char *fixed[] = { "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
				"LANG=C.UTF-8", "LC_ALL=C.UTF-8", "TMPDIR=/tmp", "USER=user",
				"LOGNAME=user", "SHELL=/bin/sh" };
	size_t count = sizeof(fixed) / sizeof(fixed[0]) + 3;
	for (size_t i = 0; o->envs && o->envs[i]; i++)
		count++;
	s->env = calloc(count + 1, sizeof(char *));
	if (!s->env)
		return false;
	size_t n = 0;
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		s->env[n++] = strdup(fixed[i]);
	if (asprintf(&s->env[n++], "HOME=%s", s->inside_home) < 0)
		s->env[n - 1] = NULL;
	if (asprintf(&s->env[n++], "XDG_RUNTIME_DIR=%s", s->inside_run_dir) < 0)
		s->env[n - 1] = NULL;
	for (size_t i = 0; o->envs && o->envs[i]; i++)
		s->env[n++] = strdup(o->envs[i]);
	for (size_t i = 0; i < n; i++)
		if (!s->env[i])
			return false;
	return true;
}

static void describe(struct sandbox *s, bool limited)
{
	if (!s->isolated) {
		snprintf(s->description, sizeof(s->description),
			 "NOT isolated: started unsandboxed for a benchmark comparison "
			 "(LIZARD_BENCH_UNSANDBOXED)");
		return;
	}
	const char *network =
		!s->network ? "The network is loopback only."
		: s->has_dns
			? "The network goes out through slirp4netns (IPv4, outbound only): the host's "
			  "loopback services are out of reach, its other addresses are not, and DNS asks "
			  "the host's upstream nameservers."
			: "The network goes out through slirp4netns (IPv4, outbound only): the host's "
			  "loopback services are out of reach, its other addresses are not; names do not "
			  "resolve (the host has only a local resolver).";
	snprintf(s->description, sizeof(s->description),
		 "Linux namespaces on the host's shared kernel (not a virtual machine): own PID, "
		 "mount, user, IPC, UTS and network namespaces; host system directories read-only, "
		 "own HOME, /tmp and /workspace, nothing else of the host's files (the mount table "
		 "still shows the host paths its binds come from); programs run as an unprivileged "
		 "user (host uid %u for the sandbox's root). A seccomp filter refuses (EPERM) what "
		 "a desktop does not need: keyrings, perf events, io_uring, BPF, userfaultfd, kernel "
		 "modules and kexec, open_by_handle_at, reboot, swap, setting the clock, the kernel "
		 "log, socket families but UNIX, IPv4, IPv6 and netlink, raw and packet sockets, "
		 "netfilter and xfrm, and personality flags that weaken memory protections; a 32-bit "
		 "or x32 system call kills its process. %s %s",
		 (unsigned)s->host_uid, network,
		 limited ? "CPU, memory and processes are limited by its cgroup (its size)."
			 : "No limits on CPU, memory or processes.");
}

struct sandbox *sandbox_create(const struct sandbox_options *o, struct error *err)
{
	struct sandbox *s = calloc(1, sizeof(*s));
	if (!s) {
		error_set(err, 0, "out of memory");
		return NULL;
	}
	s->control = -1;
	s->log_fd = -1;
	s->dir_fd = s->run_fd = s->disk_fd = s->disk_loop = s->volume_loop = -1;
	s->net.exit_fd = s->net.ready_fd = -1;
	s->network = o->network;
	pthread_mutex_init(&s->lock, NULL);
	const char *bench = getenv("LIZARD_BENCH_UNSANDBOXED");
	s->isolated = !(bench && strcmp(bench, "1") == 0);
	s->host_uid = geteuid();
	if (s->isolated && geteuid() == 0) {
		if (!sandbox_uid_acquire(o->uid_range, &s->host_uid, err))
			goto fail;
		s->uid_held = true;
	}
	const char *bwrap = NULL;
	if (s->isolated) {
		if (!(bwrap = bwrap_path())) {
			error_set(err, 0, "bubblewrap is not installed (no /usr/bin/bwrap); local sessions "
				 "need it: apt-get install bubblewrap");
			goto fail;
		}
		if (!check_kernel(err))
			goto fail;
		/* Never the host's network instead. */
		if (s->network && !sandbox_network_helper()) {
			error_set(err, 0, SANDBOX_NETWORK_PACKAGE " is not installed (no /usr/bin/"
				 SANDBOX_NETWORK_PACKAGE "); local sessions with a network need it: apt-get "
				 "install " SANDBOX_NETWORK_PACKAGE " (or create the session with network: false)");
			goto fail;
		}
	}
	if (!make_dirs(s, s->isolated ? o->disk_bytes : 0, err))
		goto fail;
	snprintf(s->inside_home, sizeof(s->inside_home), "%s", s->isolated ? SANDBOX_HOME : s->home);
	snprintf(s->inside_run_dir, sizeof(s->inside_run_dir), "%s",
		 s->isolated ? SANDBOX_RUN_DIR : s->run_dir);
	snprintf(s->inside_workspace, sizeof(s->inside_workspace), "%s",
		 s->isolated ? SANDBOX_WORKSPACE : s->workspace);
	if (o->workspace_dir) {
		snprintf(s->workspace, sizeof(s->workspace), "%s", o->workspace_dir);
		snprintf(s->inside_workspace, sizeof(s->inside_workspace), "%s",
			 s->isolated ? SANDBOX_WORKSPACE : s->workspace);
		/* The last session that used it had another uid. */
		if (s->host_uid != geteuid() &&
		    !sandbox_tree_chown(s->workspace, s->host_uid, s->host_uid, WORKSPACE_MAX_ENTRIES, err))
			goto fail;
		if (s->isolated && s->host_uid != geteuid() && !mount_volume(s, err))
			goto fail;
	} else if (o->workspace_image) {
		if (!s->isolated) {
			error_set(err, 0, "volumes with a size limit need the sandbox");
			goto fail;
		}
		if (!mount_volume_image(s, o->workspace_image, err))
			goto fail;
	}
	if (!build_env(s, o)) {
		error_set(err, 0, "out of memory");
		goto fail;
	}
	struct sandbox_cgroup_join join = { .count = 0 };
	if (o->cgroup && !sandbox_cgroup_join_open(o->cgroup, &join, err))
		goto fail;

	/* Never a sandbox without it. */
	int seccomp_fd = s->isolated ? sandbox_seccomp_filter_fd(err) : -1;
	if (s->isolated && seccomp_fd < 0) {
		sandbox_cgroup_join_close(&join);
		goto fail;
	}
	int pair[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
		error_set(err, errno, "cannot create a socket pair");
		sandbox_cgroup_join_close(&join);
		if (seccomp_fd >= 0)
			close(seccomp_fd);
		goto fail;
	}
	/* fds for bwrap (enum bwrap_fd); the pipes' write ends are closed. */
	int fds[FD_END - FD_CONTROL] = { pair[1], -1, -1, -1, -1, -1, -1, -1 };
	int fd_count = 1, info_read = -1;
	bool prepared = true;
	char *bwrap_argv[] = { (char *)bwrap, "--args", "6", "--", INIT_PATH, "sandbox-init", "3",
			       "isolated", NULL };
	char *plain[] = { "/proc/self/exe", "sandbox-init", "3", "plain", NULL };
	if (s->isolated) {
		struct args a;
		char links[6][128], resolv_buffer[300], users[256], groups[128], resolv[2048];
		bool want_resolv = s->network;
		users_and_groups(users, sizeof(users), groups, sizeof(groups));
		if (want_resolv)
			sandbox_network_resolv_conf(resolv, sizeof(resolv), &s->has_dns);
		build_bwrap_args(s, &a, links,
				 want_resolv ? resolv_conf_destination(resolv_buffer, sizeof(resolv_buffer))
					     : NULL);
		char serialized[16 * 1024];
		size_t len = 0;
		for (int i = 0; i < a.n; i++) {
			size_t item = strlen(a.v[i]) + 1;
			if (len + item > sizeof(serialized))
				break;
			memcpy(serialized + len, a.v[i], item);
			len += item;
		}
		int info[2] = { -1, -1 };
		if (pipe2(info, O_CLOEXEC) == 0)
			info_read = info[0];
		fds[1] = open("/proc/self/exe", O_PATH | O_CLOEXEC);
		fds[2] = info[1];
		fds[3] = data_fd(serialized, len);
		fds[4] = data_fd(users, strlen(users));
		fds[5] = data_fd(groups, strlen(groups));
		fds[6] = seccomp_fd;
		fd_count = 7;
		if (want_resolv)
			fds[fd_count++] = data_fd(resolv, strlen(resolv));
		for (int i = 1; i < fd_count; i++)
			prepared = prepared && fds[i] >= 0;
	}
	pid_t parent = getpid();
	pid_t pid = prepared ? fork() : -1;
	if (pid == 0)
		exec_sandbox(s, s->isolated ? bwrap_argv : plain, fds, fd_count, parent,
			     o->cgroup ? &join : NULL);
	int fork_errno = errno;
	for (int i = 0; i < fd_count; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	s->control = pair[0];
	if (pid < 0) {
		error_set(err, fork_errno, prepared ? "cannot fork" : "cannot prepare what bwrap reads");
		sandbox_cgroup_join_close(&join);
		if (info_read >= 0)
			close(info_read);
		goto fail;
	}
	s->pid = pid;
	bool started = wait_for_init(s, err);
	started = unmount_volume(s, started ? err : NULL) && started;
	if (started && s->isolated) {
		s->init_pid = read_sandbox_pid(info_read);
		protect_init(s);
	}
	if (started && s->isolated && s->network)
		started = start_network(s, o->cgroup ? &join : NULL, err) && wait_network(s, err);
	sandbox_cgroup_join_close(&join);
	if (info_read >= 0)
		close(info_read);
	if (!started)
		goto fail;
	describe(s, o->cgroup != NULL);
	return s;

fail:
	/* What failed is in err already; what the cleanup meets is less. */
	sandbox_destroy(s, NULL);
	return NULL;
}


void sandbox_kill(struct sandbox *s)
{
	if (!s)
		return;
	/* The init exits when its control socket hangs up, and its PID
	 * namespace with it; bwrap killed takes the init along at once
	 * (--die-with-parent), even when the init does not get to look. */
	if (s->control >= 0)
		shutdown(s->control, SHUT_RDWR);
	pthread_mutex_lock(&s->lock);
	if (s->isolated && s->pid > 0)
		kill(s->pid, SIGKILL);
	pthread_mutex_unlock(&s->lock);
}

void sandbox_end(struct sandbox *s)
{
	if (!s)
		return;
	sandbox_kill(s);
	/* Reaped under the lock, so that no kill reaches a pid reused since. */
	pthread_mutex_lock(&s->lock);
	if (s->pid > 0)
		sandbox_reap(s->pid, INIT_EXIT_TIMEOUT_MS);
	s->pid = 0;
	pthread_mutex_unlock(&s->lock);
	sandbox_network_stop(&s->net);
}

int sandbox_watch_fd(const struct sandbox *s)
{
	return s->control;
}

/* The first failure is the one err keeps; the rest is done all the same. */
static bool keep_first(bool ok, struct error *err, const struct error *failed)
{
	if (!ok && err && !err->message[0])
		*err = *failed;
	return ok;
}

bool sandbox_destroy(struct sandbox *s, struct error *err)
{
	if (!s)
		return true;
	error_clear(err);
	struct error failed;
	bool ok = true;
	/* A start that failed before its end: never remove through the binding. */
	ok = keep_first(unmount_volume(s, &failed), err, &failed) && ok;
	if (s->control >= 0)
		close(s->control); /* the init exits, and its namespace with it */
	if (s->pid > 0)
		sandbox_reap(s->pid, INIT_EXIT_TIMEOUT_MS);
	sandbox_network_stop(&s->net);
	sandbox_log_destroy(s->log);
	if (s->run_fd >= 0)
		close(s->run_fd);
	if (s->disk_fd >= 0)
		close(s->disk_fd);
	/* The disk's image goes with the directory; its loop device lets go
	 * once this last mount of it does. */
	if (s->on_disk && umount2(s->disk_mount, MNT_DETACH | UMOUNT_NOFOLLOW) != 0)
		ok = keep_first(error_set(&failed, errno, "cannot unmount %s", s->disk_mount), err,
				&failed) && ok;
	if (s->dir_fd >= 0)
		close(s->dir_fd);
	/* The volume's image may be mounted again by the next session only
	 * once this one's mount of it is gone everywhere. */
	if (!sandbox_disk_released(s->volume_loop, VOLUME_RELEASE_TIMEOUT_MS))
		ok = keep_first(error_set(&failed, 0, "the loop device of a volume (loop%d) still "
					  "holds it after %d s", s->volume_loop,
					  VOLUME_RELEASE_TIMEOUT_MS / 1000),
				err, &failed) && ok;
	if (s->dir[0]) {
		ok = keep_first(sandbox_tree_remove(s->dir, &failed), err, &failed) && ok;
		/* The daemon's directory goes with its last session. */
		char *slash = strrchr(s->dir, '/');
		*slash = '\0';
		rmdir(s->dir);
	}
	for (size_t i = 0; s->env && s->env[i]; i++)
		free(s->env[i]);
	free(s->env);
	/* Its processes and files are gone: another sandbox may have it. */
	if (s->uid_held)
		sandbox_uid_release(s->host_uid);
	pthread_mutex_destroy(&s->lock);
	free(s);
	return ok;
}

const char *sandbox_run_dir(const struct sandbox *s)
{
	return s->run_dir;
}

bool sandbox_disk_use(const struct sandbox *s, uint64_t *used, uint64_t *total)
{
	return s->on_disk && sandbox_disk_usage(s->disk_fd, used, total);
}

bool sandbox_isolated(const struct sandbox *s)
{
	return s->isolated;
}

bool sandbox_has_network(const struct sandbox *s)
{
	return s->network;
}

const char *sandbox_describe_isolation(const struct sandbox *s)
{
	return s->description;
}

const char *sandbox_inside_home(const struct sandbox *s)
{
	return s->inside_home;
}

const char *sandbox_inside_run_dir(const struct sandbox *s)
{
	return s->inside_run_dir;
}

bool sandbox_set_env(struct sandbox *s, const char *name, const char *value)
{
	char *entry;
	if (asprintf(&entry, "%s=%s", name, value) < 0)
		return false;
	size_t name_len = strlen(name);
	pthread_mutex_lock(&s->lock);
	size_t n = 0;
	for (; s->env[n]; n++) {
		if (strncmp(s->env[n], name, name_len) == 0 && s->env[n][name_len] == '=') {
			free(s->env[n]);
			s->env[n] = entry;
			pthread_mutex_unlock(&s->lock);
			return true;
		}
	}
	char **grown = realloc(s->env, (n + 2) * sizeof(char *));
	if (grown) {
		grown[n] = entry;
		grown[n + 1] = NULL;
		s->env = grown;
	} else {
		free(entry);
	}
	pthread_mutex_unlock(&s->lock);
	return grown != NULL;
}

void sandbox_last_log_line(const struct sandbox *s, char *out, size_t size)
{
	sandbox_log_last_line(s->log, out, size);
}

int sandbox_run_create_file(struct sandbox *s, const char *name, struct error *err)
{
	int fd = openat(s->run_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		error_set(err, errno, "cannot create %s/%s", s->run_dir, name);
		return -1;
	}
	if (s->host_uid != geteuid() && fchown(fd, s->host_uid, s->host_uid) != 0) {
		error_set(err, errno, "cannot give %s/%s to uid %u", s->run_dir, name,
				  (unsigned)s->host_uid);
		close(fd);
		unlinkat(s->run_fd, name, 0);
		return -1;
	}
	return fd;
}

bool sandbox_run_has(struct sandbox *s, const char *name, mode_t type)
{
	struct stat st;
	return fstatat(s->run_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       (st.st_mode & S_IFMT) == type;
}

int sandbox_run_open_socket(struct sandbox *s, const char *name, struct error *err)
{
	int fd = openat(s->run_fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		error_set(err, errno, "cannot open %s/%s", s->run_dir, name);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!S_ISSOCK(st.st_mode) || st.st_uid != s->host_uid) {
		error_set(err, 0, "%s/%s is not a socket of the sandbox's user (uid %u)",
				  s->run_dir, name, (unsigned)s->host_uid);
		close(fd);
		return -1;
	}
	return fd;
}
