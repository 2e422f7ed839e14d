/* Making and ending a sandbox: its private directory on the host, the
 * bubblewrap command line, the init inside, and the cleanup of what a
 * killed daemon left behind.
 *
 * bwrap always runs as an unprivileged host user. A daemon running as root
 * forks, drops to a uid of the sandbox's own (SANDBOX_UID_BASE plus a
 * random offset: sessions cannot touch each other's files even by plain
 * permissions) and runs bwrap, so the sandbox's root is never the host's.
 * A daemon running as an ordinary user runs bwrap as itself, which needs
 * the kernel to allow unprivileged user namespaces. */
#include "sandbox_internal.h"

#include "cgroup.h"
#include "protocol.h"
#include "tree.h"
#include "../util/log.h"

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
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SANDBOX_UID_BASE 2000000u
#define SANDBOX_UID_RANGE 1000000000u
#define INIT_START_TIMEOUT_MS 15000
#define INIT_EXIT_TIMEOUT_MS 2000
#define INIT_PATH "/run/lizard-init"
/* Files of a volume handed to a new sandbox's uid at most; beyond, the
 * session does not start rather than see files it cannot write. */
#define WORKSPACE_MAX_ENTRIES 1000000

static const char *bwrap_path(void)
{
	static const char *const candidates[] = { "/usr/bin/bwrap", "/usr/local/bin/bwrap", "/bin/bwrap" };
	for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++)
		if (access(candidates[i], X_OK) == 0)
			return candidates[i];
	return NULL;
}

/* The parent of every daemon's directories: one per host user, so a
 * daemon never trusts a directory someone else could have made. */
static bool base_dir(char *out, size_t size, struct sandbox_error *err)
{
	const char *tmp = getenv("TMPDIR");
	if (!tmp || tmp[0] != '/' || strlen(tmp) > 64)
		tmp = "/tmp";
	snprintf(out, size, "%s/lizard-sandboxes-%u", tmp, (unsigned)geteuid());
	if (mkdir(out, 0711) != 0 && errno != EEXIST) {
		sandbox_error_set(err, errno, "cannot create %s", out);
		return false;
	}
	struct stat st;
	if (lstat(out, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
		sandbox_error_set(err, 0, "%s is not a directory owned by uid %u; remove it", out,
			 (unsigned)geteuid());
		return false;
	}
	/* Sandbox users must be able to pass through to their own directory. */
	chmod(out, 0711);
	return true;
}

void sandbox_remove_tree(const char *path)
{
	struct sandbox_error err;
	if (!sandbox_tree_remove(path, &err))
		log_warn("%s", err.message);
}

void sandbox_log_tail(const char *path, char *out, size_t size)
{
	out[0] = '\0';
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	char line[256], last[256] = "";
	while (fgets(line, sizeof(line), f))
		if (strlen(line) > 1)
			snprintf(last, sizeof(last), "%s", line);
	fclose(f);
	last[strcspn(last, "\n")] = '\0';
	snprintf(out, size, "%s", last);
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

/* A daemon killed while a sandbox started may have left a volume bound
 * in its directory: unbind it before removing anything, or the removal
 * would delete the volume's files. */
static void unmount_volumes(const char *daemon_dir)
{
	DIR *dir = opendir(daemon_dir);
	if (!dir)
		return;
	struct dirent *entry;
	while ((entry = readdir(dir))) {
		if (entry->d_name[0] == '.')
			continue;
		char mount_point[640];
		snprintf(mount_point, sizeof(mount_point), "%.400s/%.200s/volume", daemon_dir, entry->d_name);
		if (umount2(mount_point, MNT_DETACH | UMOUNT_NOFOLLOW) == 0)
			log_info("unbound a volume left at %s", mount_point);
	}
	closedir(dir);
}

/* Ends the host's binding of the volume once bwrap has its own. */
static void unmount_volume(struct sandbox *s)
{
	if (!s->volume_mount[0])
		return;
	if (umount2(s->volume_mount, MNT_DETACH | UMOUNT_NOFOLLOW) != 0)
		log_warn("cannot unbind %s: %s", s->volume_mount, strerror(errno));
	s->volume_mount[0] = '\0';
}

/* Binds the volume into the sandbox's own directory, where its uid can
 * reach it, for bwrap to bind at /workspace. */
static bool mount_volume(struct sandbox *s, struct sandbox_error *err)
{
	char mount_point[240];
	snprintf(mount_point, sizeof(mount_point), "%s/volume", s->dir);
	if (mkdir(mount_point, 0700) != 0 || chown(mount_point, s->host_uid, s->host_uid) != 0)
		return sandbox_error_set(err, errno, "cannot create %s", mount_point);
	if (mount(s->workspace, mount_point, NULL, MS_BIND, NULL) != 0)
		return sandbox_error_set(err, errno, "cannot bind the volume %s", s->workspace);
	snprintf(s->volume_mount, sizeof(s->volume_mount), "%s", mount_point);
	return true;
}

void sandbox_remove_stale(void)
{
	char base[128];
	struct sandbox_error err;
	if (!base_dir(base, sizeof(base), &err))
		return;
	DIR *dir = opendir(base);
	if (!dir)
		return;
	struct dirent *entry;
	while ((entry = readdir(dir))) {
		char *end;
		long pid = strtol(entry->d_name, &end, 10);
		if (end == entry->d_name || *end || pid <= 0 || pid == (long)getpid() ||
		    daemon_alive(pid))
			continue;
		char path[400];
		snprintf(path, sizeof(path), "%s/%.200s", base, entry->d_name);
		log_info("removing sandbox files left by lizard-bridge %ld: %s", pid, path);
		unmount_volumes(path);
		sandbox_remove_tree(path);
	}
	closedir(dir);
}

static bool write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return false;
	size_t len = strlen(text);
	bool ok = write(fd, text, len) == (ssize_t)len;
	return close(fd) == 0 && ok;
}

static bool make_dirs(struct sandbox *s, struct sandbox_error *err)
{
	char base[128];
	if (!base_dir(base, sizeof(base), err))
		return false;
	char daemon_dir[160];
	snprintf(daemon_dir, sizeof(daemon_dir), "%s/%ld", base, (long)getpid());
	/* Twice: another session's end may remove the daemon's directory
	 * (sandbox_destroy) between the mkdir and the mkdtemp. */
	bool made = false;
	for (int attempt = 0; attempt < 2 && !made; attempt++) {
		if (mkdir(daemon_dir, 0711) != 0 && errno != EEXIST) {
			sandbox_error_set(err, errno, "cannot create %s", daemon_dir);
			return false;
		}
		snprintf(s->dir, sizeof(s->dir), "%s/s-XXXXXX", daemon_dir);
		made = mkdtemp(s->dir) != NULL;
	}
	if (!made) {
		sandbox_error_set(err, errno, "cannot create a private directory in %s", daemon_dir);
		s->dir[0] = '\0';
		return false;
	}
	snprintf(s->run_dir, sizeof(s->run_dir), "%s/run", s->dir);
	snprintf(s->home, sizeof(s->home), "%s/home", s->dir);
	snprintf(s->workspace, sizeof(s->workspace), "%s/workspace", s->dir);
	snprintf(s->log_path, sizeof(s->log_path), "%s/sandbox.log", s->dir);
	char passwd[240], group[240];
	snprintf(passwd, sizeof(passwd), "%s/passwd", s->dir);
	snprintf(group, sizeof(group), "%s/group", s->dir);
	/* Inside, only these users exist; the host's names stay outside. */
	char users[256], groups[128];
	snprintf(users, sizeof(users),
		 "root:x:0:0:root:/root:/bin/sh\n"
		 "user:x:%d:%d:user:" SANDBOX_HOME ":/bin/sh\n"
		 "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
		 SANDBOX_USER_ID, SANDBOX_USER_ID);
	snprintf(groups, sizeof(groups), "root:x:0:\nuser:x:%d:\nnogroup:x:65534:\n",
		 SANDBOX_USER_ID);
	if (mkdir(s->run_dir, 0700) != 0 || mkdir(s->home, 0700) != 0 ||
	    mkdir(s->workspace, 0755) != 0 || !write_text(passwd, users) ||
	    !write_text(group, groups)) {
		sandbox_error_set(err, errno, "cannot prepare %s", s->dir);
		return false;
	}
	s->log_fd = open(s->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (s->log_fd < 0) {
		sandbox_error_set(err, errno, "cannot create %s", s->log_path);
		return false;
	}
	if (s->host_uid != geteuid()) {
		const char *paths[] = { s->dir, s->run_dir, s->home, s->workspace };
		for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
			if (chown(paths[i], s->host_uid, s->host_uid) != 0) {
				sandbox_error_set(err, errno, "cannot give %s to uid %u", paths[i],
					 (unsigned)s->host_uid);
				return false;
			}
		}
	}
	return true;
}

/* What the kernel must allow, said before bwrap fails less clearly. */
static bool check_kernel(struct sandbox_error *err)
{
	FILE *f = fopen("/proc/sys/user/max_user_namespaces", "r");
	long max = -1;
	if (f) {
		if (fscanf(f, "%ld", &max) != 1)
			max = -1;
		fclose(f);
	}
	if (max == 0) {
		sandbox_error_set(err, 0, "user namespaces are disabled (/proc/sys/user/max_user_namespaces is 0); "
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
		sandbox_error_set(err, 0, "unprivileged user namespaces are disabled "
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

/* fds bwrap finds: the control socket and the daemon's binary (the init). */
#define CONTROL_FD "3"
#define EXE_FD "4"

static void build_bwrap_args(const struct sandbox *s, const char *bwrap, struct args *a,
			     char links[][128], char *storage, size_t storage_size)
{
	a->n = 0;
	add(a, bwrap, "--unshare-user", NULL);
	add(a, "--uid", "0", NULL);
	add(a, "--gid", "0", NULL);
	add(a, "--unshare-pid", "--unshare-ipc", "--unshare-uts");
	add(a, "--unshare-cgroup-try", NULL, NULL);
	if (!s->network)
		add(a, "--unshare-net", NULL, NULL);
	add(a, "--die-with-parent", NULL, NULL);
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
	char *p = storage;
	int written = snprintf(p, storage_size, "%s/passwd", s->dir);
	add(a, "--ro-bind", p, "/etc/passwd");
	p += written + 1, storage_size -= (size_t)written + 1;
	written = snprintf(p, storage_size, "%s/group", s->dir);
	add(a, "--ro-bind", p, "/etc/group");
	add(a, "--proc", "/proc", NULL);
	add(a, "--dev", "/dev", NULL);
	add(a, "--tmpfs", "/tmp", NULL);
	/* X servers put their sockets here; only root may make it. */
	add(a, "--perms", "1777", NULL);
	add(a, "--dir", "/tmp/.X11-unix", NULL);
	add(a, "--dir", "/var/tmp", NULL);
	/* Without the system's font cache every program that draws text
	 * (openbox, Chromium) would rebuild one in the fresh HOME: seconds. */
	if (access("/var/cache/fontconfig", F_OK) == 0)
		add(a, "--ro-bind", "/var/cache/fontconfig", "/var/cache/fontconfig");
	add(a, "--bind", s->home, SANDBOX_HOME);
	add(a, "--bind", s->volume_mount[0] ? s->volume_mount : s->workspace, SANDBOX_WORKSPACE);
	add(a, "--bind", s->run_dir, SANDBOX_RUN_DIR);
	add(a, "--ro-bind-fd", EXE_FD, INIT_PATH);
	add(a, "--chdir", SANDBOX_HOME, NULL);
	add(a, "--", INIT_PATH, "sandbox-init");
	add(a, CONTROL_FD, "isolated", NULL);
}

/* In the child, before exec: only async-signal-safe calls. */
static _Noreturn void exec_sandbox(const struct sandbox *s, char *const *argv, int control,
				   int exe_fd, pid_t parent, const struct sandbox_cgroup_join *join)
{
	char *const env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", NULL };
	/* Before the uid change: cgroup.procs belongs to the daemon's user. */
	if (join && sandbox_cgroup_join_self(join) != 0)
		_exit(125);
	if (s->host_uid != geteuid()) {
		if (setgroups(0, NULL) != 0 || setresgid(s->host_uid, s->host_uid, s->host_uid) != 0 ||
		    setresuid(s->host_uid, s->host_uid, s->host_uid) != 0)
			_exit(126);
	}
	/* After the uid change, which clears it. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(126);
	setpgid(0, 0);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	int null_fd = open("/dev/null", O_RDWR);
	dup2(null_fd, STDIN_FILENO);
	dup2(s->log_fd, STDOUT_FILENO);
	dup2(s->log_fd, STDERR_FILENO);
	/* control to 3, the binary to 4: move both out of the way first. */
	int high_control = fcntl(control, F_DUPFD_CLOEXEC, 10);
	int high_exe = exe_fd >= 0 ? fcntl(exe_fd, F_DUPFD_CLOEXEC, 10) : -1;
	dup2(high_control, 3);
	if (high_exe >= 0)
		dup2(high_exe, 4);
	close_range(high_exe >= 0 ? 5 : 4, ~0U, 0);
	if (chdir(s->home) != 0)
		_exit(126);
	execve(argv[0], argv, env);
	_exit(127);
}

static bool wait_for_init(struct sandbox *s, struct sandbox_error *err)
{
	struct pollfd pfd = { .fd = s->control, .events = POLLIN };
	int n;
	while ((n = poll(&pfd, 1, INIT_START_TIMEOUT_MS)) < 0 && errno == EINTR)
		;
	char hello;
	if (n > 0 && recv(s->control, &hello, 1, 0) == 1)
		return true;
	char tail[256];
	sandbox_log_tail(s->log_path, tail, sizeof(tail));
	sandbox_error_set(err, 0, "the sandbox did not start%s%s%s", tail[0] ? " (bwrap said: " : "",
		 tail, tail[0] ? ")" : "");
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
	snprintf(s->description, sizeof(s->description),
		 "Linux namespaces on the host's shared kernel (not a virtual machine): own PID, "
		 "mount, user, IPC and UTS namespaces%s; host system directories read-only, own "
		 "HOME, /tmp and /workspace, nothing else of the host's files; programs run as an "
		 "unprivileged user (host uid %u for the sandbox's root). %s %s",
		 s->network ? "" : " and a network namespace with loopback only",
		 (unsigned)s->host_uid,
		 s->network ? "The network is the host's: its loopback services and abstract "
			      "UNIX sockets are reachable."
			    : "",
		 limited ? "CPU, memory and processes are limited by its cgroup (its size)."
			 : "No limits on CPU, memory or processes.");
}

struct sandbox *sandbox_create(const struct sandbox_options *o, struct sandbox_error *err)
{
	struct sandbox *s = calloc(1, sizeof(*s));
	if (!s) {
		sandbox_error_set(err, 0, "out of memory");
		return NULL;
	}
	s->control = -1;
	s->log_fd = -1;
	s->network = o->network;
	pthread_mutex_init(&s->lock, NULL);
	const char *bench = getenv("LIZARD_BENCH_UNSANDBOXED");
	s->isolated = !(bench && strcmp(bench, "1") == 0);
	s->host_uid = geteuid();
	if (s->isolated && geteuid() == 0) {
		uint32_t r = 0;
		if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
			r = (uint32_t)getpid() * 7919u + (uint32_t)time(NULL);
		s->host_uid = SANDBOX_UID_BASE + r % SANDBOX_UID_RANGE;
	}
	const char *bwrap = NULL;
	if (s->isolated) {
		if (!(bwrap = bwrap_path())) {
			sandbox_error_set(err, 0, "bubblewrap is not installed (no /usr/bin/bwrap); local sessions "
				 "need it: apt-get install bubblewrap");
			goto fail;
		}
		if (!check_kernel(err))
			goto fail;
	}
	if (!make_dirs(s, err))
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
	}
	if (!build_env(s, o)) {
		sandbox_error_set(err, 0, "out of memory");
		goto fail;
	}
	struct sandbox_cgroup_join join = { .count = 0 };
	if (o->cgroup && !sandbox_cgroup_join_open(o->cgroup, &join, err))
		goto fail;

	int pair[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
		sandbox_error_set(err, errno, "cannot create a socket pair");
		sandbox_cgroup_join_close(&join);
		goto fail;
	}
	int exe_fd = open("/proc/self/exe", O_PATH | O_CLOEXEC);
	struct args a;
	char links[6][128], storage[512];
	char *plain[] = { "/proc/self/exe", "sandbox-init", "3", "plain", NULL };
	if (s->isolated)
		build_bwrap_args(s, bwrap, &a, links, storage, sizeof(storage));
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0)
		exec_sandbox(s, s->isolated ? (char *const *)a.v : plain, pair[1], exe_fd, parent,
			     o->cgroup ? &join : NULL);
	int fork_errno = errno;
	sandbox_cgroup_join_close(&join);
	close(pair[1]);
	if (exe_fd >= 0)
		close(exe_fd);
	s->control = pair[0];
	if (pid < 0) {
		sandbox_error_set(err, fork_errno, "cannot fork");
		goto fail;
	}
	s->pid = pid;
	bool started = wait_for_init(s, err);
	unmount_volume(s);
	if (!started)
		goto fail;
	describe(s, o->cgroup != NULL);
	log_debug("sandbox in %s (host uid %u, %s)", s->dir, (unsigned)s->host_uid,
		  s->isolated ? "isolated" : "NOT isolated");
	return s;

fail:
	sandbox_destroy(s);
	return NULL;
}

void sandbox_destroy(struct sandbox *s)
{
	if (!s)
		return;
	/* A start that failed before its end: never remove through the binding. */
	unmount_volume(s);
	if (s->control >= 0)
		close(s->control); /* the init exits, and its namespace with it */
	if (s->pid > 0) {
		int waited = 0, status;
		while (waitpid(s->pid, &status, WNOHANG) == 0) {
			if (waited >= INIT_EXIT_TIMEOUT_MS) {
				kill(s->pid, SIGKILL);
				while (waitpid(s->pid, &status, 0) < 0 && errno == EINTR)
					;
				break;
			}
			struct timespec tick = { 0, 5 * 1000000L };
			nanosleep(&tick, NULL);
			waited += 5;
		}
	}
	if (s->log_fd >= 0)
		close(s->log_fd);
	if (s->dir[0]) {
		sandbox_remove_tree(s->dir);
		/* The daemon's directory goes with its last session. */
		char *slash = strrchr(s->dir, '/');
		*slash = '\0';
		rmdir(s->dir);
	}
	for (size_t i = 0; s->env && s->env[i]; i++)
		free(s->env[i]);
	free(s->env);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

const char *sandbox_run_dir(const struct sandbox *s)
{
	return s->run_dir;
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
	sandbox_log_tail(s->log_path, out, size);
}

bool sandbox_give_file(const struct sandbox *s, const char *host_path)
{
	return s->host_uid == geteuid() || chown(host_path, s->host_uid, s->host_uid) == 0;
}
