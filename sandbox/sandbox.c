/* SPDX-License-Identifier: MIT */
/* Making and ending a sandbox: the checks before, its private directory
 * (private_dir.c), bubblewrap started with the init inside (bwrap.c), the
 * network helper, and the cleanup, whatever fails on the way.
 *
 * bwrap always runs as an unprivileged host user. A daemon running as root
 * forks, drops to a uid of the sandbox's own (uid.h: from the daemon's
 * range, never one that is taken, so sessions cannot touch each other's
 * files, nor anyone else's, even by plain permissions) and runs bwrap, so
 * the sandbox's root is never the host's.
 * A daemon running as an ordinary user runs bwrap as itself, which needs
 * the kernel to allow unprivileged user namespaces. */

#include "sandbox/sandbox.h"
#include "sandbox/bwrap.h"
#include "sandbox/cgroup.h"
#include "sandbox/child.h"
#include "sandbox/disk.h"
#include "sandbox/disk_spare.h"
#include "sandbox/log.h"
#include "sandbox/network.h"
#include "sandbox/private_dir.h"
#include "sandbox/root.h"
#include "sandbox/seccomp.h"
#include "sandbox/snapshot.h"
#include "sandbox/state.h"
#include "sandbox/subid.h"
#include "sandbox/tree.h"
#include "sandbox/uid.h"
#include "sandbox/userns.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define INIT_START_TIMEOUT_MS 15000
#define INIT_EXIT_TIMEOUT_MS 2000
#define VOLUME_RELEASE_TIMEOUT_MS 5000

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
	error_set(err, 0, "the sandbox did not start%s%s%s", tail[0] ? " (bwrap said: " : "", tail,
		  tail[0] ? ")" : "");
	return false;
}

/* Starts the inside's own network (network.h). In a namespace bwrap made
 * (an ordinary daemon's), once the sandbox is up, not as soon as bwrap
 * names its pid: slirp4netns sets the loopback up, which races with bwrap's
 * own setup of it (bwrap then fails with "loopback: Failed RTM_NEWADDR",
 * about one start in twenty-five). In one the daemon made (userns.h), as
 * soon as the session's log exists: it comes up while the rest of the
 * sandbox is made. */
static bool start_network(struct sandbox *s, const struct sandbox_cgroup_join *join,
			  struct error *err)
{
	struct sandbox_network_target target = { .userns_fd = s->userns_fd,
						 .netns_fd = s->netns_fd,
						 .pid = s->init_pid };
	return sandbox_network_start(&s->net, &target, s->host_uid, s->log_fd, join, err);
}

/* The early start of a root daemon's network, in the session's cgroup. */
static bool start_network_early(struct sandbox *s, const struct sandbox_options *o,
				struct error *err)
{
	struct sandbox_cgroup_join join = { .count = 0 };
	if (o->cgroup && !sandbox_cgroup_join_open(o->cgroup, &join, err))
		return false;
	bool started = start_network(s, o->cgroup ? &join : NULL, err);
	sandbox_cgroup_join_close(&join);
	return started;
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
				"LANG=C.UTF-8",
				"LC_ALL=C.UTF-8",
				"TMPDIR=/tmp",
				"USER=user",
				"LOGNAME=user",
				"SHELL=/bin/sh" };
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

void sandbox_allow_fuse_root(bool allow)
{
	sandbox_root_allow_fuse(allow);
}

static void describe(struct sandbox *s, bool limited)
{
	struct error why;
	char root[512];
	if ((s->rootfs[0] || sandbox_root_available(&why)) && sandbox_root_uses_fuse())
		snprintf(root, sizeof(root),
			 "a writable root of its own over the host's system directories, made by "
			 "fuse-overlayfs inside the sandbox as the daemon is not root (its changes "
			 "are the session's and go with it; the host's files never change and show "
			 "as root's; %s)",
			 sandbox_subids(NULL)
				 ? "ids 1 to 65535 inside are the daemon user's "
				   "subordinate ids, from /etc/subuid and /etc/subgid"
				 : "giving a file to another user fails: only the daemon's "
				   "uid is mapped, as its user has no subordinate ids in "
				   "/etc/subuid and /etc/subgid");
	else if (s->rootfs[0] || sandbox_root_available(&why))
		snprintf(root, sizeof(root),
			 "a writable root of its own over %s (its changes are the session's and go "
			 "with it; the host's files never change)",
			 s->image_dir[0] ? "a Debian release's root built for its template"
					 : "the host's system directories");
	else
		snprintf(root, sizeof(root), "host system directories read-only (%.300s)",
			 why.message);
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
	char ids[160];
	if (s->id_count > 1)
		snprintf(ids, sizeof(ids),
			 "its ids 0 to %u are host uids %u to %u, none of them anyone else's, "
			 "its root the first",
			 (unsigned)s->id_count - 1, (unsigned)s->host_uid,
			 (unsigned)(s->host_uid + (s->id_count - 1)));
	else
		snprintf(ids, sizeof(ids), "host uid %u for the sandbox's root",
			 (unsigned)s->host_uid);
	snprintf(
		s->description, sizeof(s->description),
		"Linux namespaces on the host's shared kernel (not a virtual machine): own PID, "
		"mount, user, IPC, UTS and network namespaces; %s, own HOME, /tmp and /workspace, nothing else of the host's files (the mount table "
		"still shows the host paths its binds come from); programs run as an unprivileged "
		"user (%s). A seccomp filter refuses (EPERM) what "
		"a desktop does not need: keyrings, perf events, io_uring, BPF, userfaultfd, kernel "
		"modules and kexec, open_by_handle_at, reboot, swap, setting the clock, the kernel "
		"log, socket families but UNIX, IPv4, IPv6 and netlink, raw and packet sockets, "
		"netfilter and xfrm, and personality flags that weaken memory protections; a 32-bit "
		"or x32 system call kills its process. %s %s",
		root, ids, network,
		limited ? "CPU, memory and processes are limited by its cgroup (its size)."
			: "No limits on CPU, memory or processes.");
}

/* What the child that becomes bwrap needs. */
struct bwrap_child {
	const struct sandbox *s;
	const char *bwrap;
	const struct sandbox_bwrap_fds *fds;
	pid_t parent;
	const struct sandbox_cgroup_join *join;
};

static void bwrap_child_main(void *data)
{
	const struct bwrap_child *c = data;
	sandbox_bwrap_exec(c->s, c->bwrap, c->fds, c->parent, c->join);
}

static struct sandbox *create(const struct sandbox_options *o, struct error *err)
{
	struct sandbox *s = calloc(1, sizeof(*s));
	if (!s) {
		error_set(err, 0, "out of memory");
		return NULL;
	}
	s->control = -1;
	s->log_fd = -1;
	s->dir_fd = s->run_fd = s->disk_fd = s->disk_loop = s->volume_loop = s->rootfs_fd = -1;
	s->userns_fd = s->netns_fd = -1;
	s->net.exit_fd = s->net.ready_fd = -1;
	s->network = o->network;
	pthread_mutex_init(&s->lock, NULL);
	const char *bench = getenv("LIZARD_BENCH_UNSANDBOXED");
	s->isolated = !(bench && strcmp(bench, "1") == 0);
	s->host_uid = geteuid();
	s->id_count = 1;
	bool root_daemon = s->isolated && geteuid() == 0;
	/* The benchmark's comparison with the read-only root of before. */
	const char *bench_read_only = getenv("LIZARD_BENCH_READ_ONLY_ROOT");
	bool writable = !(bench_read_only && strcmp(bench_read_only, "1") == 0);
	struct error read_only;
	error_set(&read_only, 0, "LIZARD_BENCH_READ_ONLY_ROOT=1 keeps the host's root read-only");
	bool make_root = s->isolated && writable && sandbox_root_available(&read_only);
	const char *bwrap = NULL;
	if (s->isolated) {
		if (!(bwrap = sandbox_bwrap_path())) {
			error_set(err, 0,
				  "bubblewrap is not installed (no /usr/bin/bwrap); local sessions "
				  "need it: apt-get install bubblewrap");
			goto fail;
		}
		if (!sandbox_bwrap_check_kernel(err))
			goto fail;
		/* Never the host's network instead. */
		if (s->network && !sandbox_network_helper()) {
			error_set(err, 0,
				  SANDBOX_NETWORK_PACKAGE
				  " is not installed (no /usr/bin/" SANDBOX_NETWORK_PACKAGE
				  "); local sessions with a network need it: apt-get "
				  "install " SANDBOX_NETWORK_PACKAGE
				  " (or create the session with network: false)");
			goto fail;
		}
	}
	/* A root daemon's session on the host's directories may find its
	 * ids, namespaces and root made ahead with its disk (root_ahead.h). */
	struct sandbox_disk_want disk = {
		.bytes = s->isolated ? o->disk_bytes : 0,
		.root = root_daemon && make_root && !o->image_dir && !o->restore_dir &&
			!sandbox_root_uses_fuse(),
		.range = o->uid_range,
	};
	if (!sandbox_private_dir_make(s, &disk, err))
		goto fail;
	struct sandbox_subids subids;
	if (root_daemon && !s->root_ahead) {
		/* A root made ahead and waiting gives back its ids when no
		 * others are left. */
		bool ids = sandbox_userns_take_ids(s, o->uid_range, err);
		if (!ids && err && err->code == EUSERS && sandbox_disk_spare_drop_roots())
			ids = sandbox_userns_take_ids(s, o->uid_range, err);
		if (!ids)
			goto fail;
	} else if (s->isolated && !root_daemon && sandbox_subids(&subids)) {
		/* Root inside is still the daemon's uid; other ids are its
		 * subordinate ones (subid.h). bwrap makes the network. */
		if ((s->userns_fd = sandbox_subid_userns(&subids, err)) < 0)
			goto fail;
	}
	if (!sandbox_private_dir_fill(s, err))
		goto fail;
	bool early_network = s->isolated && s->network && s->netns_fd >= 0;
	if (early_network && !start_network_early(s, o, err))
		goto fail;
	snprintf(s->inside_home, sizeof(s->inside_home), "%s",
		 s->isolated ? SANDBOX_HOME : s->home);
	snprintf(s->inside_run_dir, sizeof(s->inside_run_dir), "%s",
		 s->isolated ? SANDBOX_RUN_DIR : s->run_dir);
	snprintf(s->inside_workspace, sizeof(s->inside_workspace), "%s",
		 s->isolated ? SANDBOX_WORKSPACE : s->workspace);
	/* Without one, the host's system directories are read-only
	 * (describe says why). */
	s->has_volume = o->workspace_dir || o->workspace_image;
	if (o->image_dir)
		snprintf(s->image_dir, sizeof(s->image_dir), "%s", o->image_dir);
	else if (o->restore_dir)
		sandbox_snapshot_image(o->restore_dir, s->image_dir, sizeof(s->image_dir));
	/* bwrap's command line says how the init starts on it (bwrap.h). */
	s->root_fuse = make_root && sandbox_root_uses_fuse();

	/* bwrap starts now, and loads while the root and the volume are made;
	 * it waits for its options, which name them. */
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
	/* What the child finds at fds 3 and up; the pipes' write ends are closed. */
	struct sandbox_bwrap_fds fds;
	bool prepared = sandbox_bwrap_prepare(s, pair[1], seccomp_fd, &fds);
	struct bwrap_child child = { s, bwrap, &fds, getpid(), o->cgroup ? &join : NULL };
	pid_t pid = prepared ? sandbox_child_start(bwrap_child_main, &child) : -1;
	int fork_errno = errno;
	sandbox_bwrap_close_fds(&fds);
	s->control = pair[0];
	if (pid < 0) {
		error_set(err, fork_errno,
			  prepared ? "cannot start bwrap" : "cannot prepare what bwrap reads");
		goto started_fail;
	}
	s->pid = pid;

	if (make_root && !s->root_ahead && !sandbox_root_make(s, o->restore_dir, err))
		goto started_fail;
	if ((o->restore_dir || s->image_dir[0]) && !s->rootfs[0]) {
		error_set(err, 0, "restoring a snapshot needs a writable root: %s",
			  s->isolated ? read_only.message : "this sandbox is not isolated");
		goto started_fail;
	}
	if (o->workspace_dir) {
		snprintf(s->workspace, sizeof(s->workspace), "%s", o->workspace_dir);
		snprintf(s->inside_workspace, sizeof(s->inside_workspace), "%s",
			 s->isolated ? SANDBOX_WORKSPACE : s->workspace);
		if (!sandbox_private_dir_take_volume(s, err))
			goto started_fail;
	} else if (o->workspace_image) {
		if (!s->isolated) {
			error_set(err, 0, "volumes with a size limit need the sandbox");
			goto started_fail;
		}
		if (!sandbox_private_dir_mount_volume_image(s, o->workspace_image, err))
			goto started_fail;
	}
	if (!build_env(s, o)) {
		error_set(err, 0, "out of memory");
		goto started_fail;
	}
	if (!sandbox_bwrap_send_args(s, &fds, err))
		goto started_fail;

	bool started = wait_for_init(s, err);
	started = sandbox_private_dir_unbind_volume(s, started ? err : NULL) && started;
	sandbox_root_release_host(s);
	if (started && s->isolated) {
		s->init_pid = sandbox_bwrap_read_pid(fds.info_read, INIT_START_TIMEOUT_MS);
		protect_init(s);
	}
	if (started && s->isolated && s->network && !early_network)
		started = start_network(s, o->cgroup ? &join : NULL, err);
	if (started && s->isolated && s->network)
		started = wait_network(s, err);
	sandbox_cgroup_join_close(&join);
	if (fds.info_read >= 0)
		close(fds.info_read);
	if (!started)
		goto fail;
	describe(s, o->cgroup != NULL);
	return s;

started_fail:
	/* bwrap, if it runs, has had no options yet: it is ended before it
	 * could read any (and without them it would fail, bwrap.h). */
	if (s->pid > 0)
		kill(s->pid, SIGKILL);
	if (fds.args_write >= 0)
		close(fds.args_write);
	if (fds.info_read >= 0)
		close(fds.info_read);
	sandbox_cgroup_join_close(&join);
fail:
	/* What failed is in err already; what the cleanup meets is less. */
	sandbox_destroy(s, NULL);
	return NULL;
}

struct sandbox *sandbox_create(const struct sandbox_options *o, struct error *err)
{
	sandbox_disk_spare_hold(); /* no spare is formatted meanwhile */
	struct sandbox *s = create(o, err);
	sandbox_disk_spare_release();
	return s;
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
	ok = keep_first(sandbox_private_dir_unbind_volume(s, &failed), err, &failed) && ok;
	sandbox_root_release_host(s);
	if (s->rootfs_fd >= 0)
		close(s->rootfs_fd);
	if (s->control >= 0)
		close(s->control); /* the init exits, and its namespace with it */
	if (s->pid > 0)
		sandbox_reap(s->pid, INIT_EXIT_TIMEOUT_MS);
	/* Its namespaces went with its init: nothing mounts the copies now. */
	sandbox_root_release_copies(s);
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
				&failed) &&
		     ok;
	if (s->dir_fd >= 0)
		close(s->dir_fd);
	/* The volume's image may be mounted again by the next session only
	 * once this one's mount of it is gone everywhere. */
	if (!sandbox_disk_released(s->volume_loop, VOLUME_RELEASE_TIMEOUT_MS))
		ok = keep_first(error_set(&failed, 0,
					  "the loop device of a volume (loop%d) still "
					  "holds it after %d s",
					  s->volume_loop, VOLUME_RELEASE_TIMEOUT_MS / 1000),
				err, &failed) &&
		     ok;
	if (s->dir[0]) {
		ok = keep_first(sandbox_subid_remove(s->dir, &failed), err, &failed) && ok;
		/* The daemon's directory goes with its last session. */
		sandbox_disk_spare_remove_dir(s->daemon_dir);
	}
	for (size_t i = 0; s->env && s->env[i]; i++)
		free(s->env[i]);
	free(s->env);
	/* Its processes and files are gone: another sandbox may have it. */
	if (s->netns_fd >= 0)
		close(s->netns_fd);
	if (s->userns_fd >= 0)
		close(s->userns_fd);
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
	int fd = openat(s->run_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			0600);
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

bool sandbox_run_remove(struct sandbox *s, const char *name, struct error *err)
{
	if (unlinkat(s->run_fd, name, 0) != 0 && errno != ENOENT)
		return error_set(err, errno, "cannot remove %s/%s", s->run_dir, name);
	return true;
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

bool sandbox_remove_files(const char *path, struct error *err)
{
	return sandbox_subid_remove(path, err);
}

bool sandbox_adopt_cgroup(struct sandbox *s, struct sandbox_cgroup *cg, struct error *err)
{
	/* A FUSE root's server and second init are children of the init's
	 * that the daemon does not know by pid. */
	if (s->root_fuse)
		return error_set(err, 0, "a sandbox with a FUSE root cannot change cgroups");
	pid_t pids[] = { s->pid, s->init_pid, s->net.pid };
	for (size_t i = 0; i < sizeof(pids) / sizeof(pids[0]); i++)
		if (pids[i] > 0 && !sandbox_cgroup_attach_pid(cg, pids[i], err))
			return false;
	describe(s, true);
	return true;
}
