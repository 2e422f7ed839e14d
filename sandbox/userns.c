/* SPDX-License-Identifier: MIT */
#include "sandbox/userns.h"

#include "sandbox/child.h"
#include "sandbox/state.h"
#include "sandbox/uid.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

struct maker {
	uid_t owner;
	int userns; /* a network namespace's maker: the user namespace to own it */
	int ready, done;
	_Alignas(16) char stack[16384];
};

/* How long a maker may take to answer, and then to end once let go. */
#define MAKER_TIMEOUT_MS 5000

/* The first thing each maker does: it closes every descriptor but stdio
 * and its own (ready, done and a network maker's userns). Its table is a
 * copy of the daemon's, taken at the clone, so it holds the pipes of any
 * maker another thread started in the same moment; two makers each
 * holding the other's `done` would each wait for the other to end, and
 * their threads for them, for ever. */
static void keep_own_descriptors(const struct maker *m)
{
	int keep[3] = { m->ready, m->done, m->userns };
	for (int i = 1; i < 3; i++) /* sorted, three at most */
		for (int j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
			int t = keep[j];
			keep[j] = keep[j - 1];
			keep[j - 1] = t;
		}
	unsigned next = 3;
	for (int i = 0; i < 3; i++) {
		if (keep[i] < (int)next)
			continue; /* unset (0), stdio, or a repeat */
		if ((unsigned)keep[i] > next)
			syscall(SYS_close_range, next, (unsigned)keep[i] - 1, 0);
		next = (unsigned)keep[i] + 1;
	}
	syscall(SYS_close_range, next, ~0U, 0);
}

/* Runs in a child that shares the daemon's memory (a fork of the daemon
 * would copy its page tables: tens of ms). Its uid changes by raw system
 * calls, which change this task alone: glibc's would change every thread
 * of what it takes for its own process. It becomes the owner, makes the
 * namespace, says so, and waits until the daemon closes `done`. */
static int maker_main(void *arg)
{
	struct maker *m = arg;
	keep_own_descriptors(m);
	char byte = 'u';
	if (syscall(SYS_setgroups, 0, NULL) != 0 ||
	    syscall(SYS_setresgid, m->owner, m->owner, m->owner) != 0 ||
	    syscall(SYS_setresuid, m->owner, m->owner, m->owner) != 0 ||
	    syscall(SYS_unshare, CLONE_NEWUSER) != 0)
		byte = 'e';
	(void)!write(m->ready, &byte, 1);
	(void)!read(m->done, &byte, 1);
	return 0;
}

static bool write_map(pid_t pid, const char *file, const char *map, struct error *err)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%ld/%s", (long)pid, file);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	size_t len = strlen(map);
	bool written = fd >= 0 && write(fd, map, len) == (ssize_t)len;
	int saved = errno;
	if (fd >= 0)
		close(fd);
	return written || error_set(err, saved, "cannot write %s (\"%.*s\")", path,
				    (int)strcspn(map, "\n"), map);
}

/* A maker child under way: its pid, the pipes it talks on, and whether it
 * did not answer in time (err then says so). */
struct started {
	pid_t pid;
	int ready_read, done_write;
	bool late;
};

/* Starts a child running fn on m's stack; false (err set) when it did not
 * start or did not answer `want`. Either way finish_maker cleans up. */
static bool start_maker(int (*fn)(void *), struct maker *m, char want, struct started *st,
			struct error *err)
{
	*st = (struct started){ .pid = -1, .ready_read = -1, .done_write = -1 };
	int ready[2], done[2];
	if (pipe2(ready, O_CLOEXEC) != 0)
		return error_set(err, errno, "cannot create a pipe");
	if (pipe2(done, O_CLOEXEC) != 0) {
		close(ready[0]);
		close(ready[1]);
		return error_set(err, errno, "cannot create a pipe");
	}
	m->ready = ready[1];
	m->done = done[0];
	st->pid = clone(fn, m->stack + sizeof(m->stack), CLONE_VM | SIGCHLD, m);
	int saved = errno;
	close(ready[1]);
	close(done[0]);
	st->ready_read = ready[0];
	st->done_write = done[1];
	if (st->pid < 0)
		return error_set(err, saved, "cannot start a process to make a namespace");
	char byte = 0;
	struct pollfd answer = { .fd = ready[0], .events = POLLIN };
	int polled;
	while ((polled = poll(&answer, 1, MAKER_TIMEOUT_MS)) < 0 && errno == EINTR)
		;
	st->late = polled == 0;
	if (st->late)
		return error_set(err, ETIMEDOUT,
				 "the process making a namespace did not answer within %d s",
				 MAKER_TIMEOUT_MS / 1000);
	return read(ready[0], &byte, 1) == 1 && byte == want;
}

/* Lets the child go and waits for it (killed at the deadline). */
static void finish_maker(struct started *st)
{
	if (st->ready_read >= 0)
		close(st->ready_read);
	if (st->done_write >= 0)
		close(st->done_write);
	if (st->pid > 0)
		sandbox_reap(st->pid, MAKER_TIMEOUT_MS);
}

/* The namespace `kind` of the maker, opened while it waits. */
static int open_namespace(const struct started *st, const char *kind, struct error *err)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%ld/ns/%s", (long)st->pid, kind);
	int ns = open(path, O_RDONLY | O_CLOEXEC);
	if (ns < 0)
		error_set(err, errno, "cannot open %s", path);
	return ns;
}

int sandbox_userns_make(uid_t first, uint32_t count, struct error *err)
{
	struct maker m = { .owner = first };
	struct started st;
	int ns = -1;
	char map[64];
	snprintf(map, sizeof(map), "0 %u %u\n", (unsigned)first, (unsigned)count);
	if (!start_maker(maker_main, &m, 'u', &st, err)) {
		if (st.pid > 0 && !st.late)
			error_set(err, 0,
				  "cannot create a user namespace as uid %u (are unprivileged user "
				  "namespaces allowed? sysctl kernel.unprivileged_userns_clone)",
				  (unsigned)first);
	} else if (write_map(st.pid, "uid_map", map, err) &&
		   write_map(st.pid, "gid_map", map, err)) {
		ns = open_namespace(&st, "user", err);
	}
	finish_maker(&st);
	return ns;
}

/* As maker_main, as the daemon's own uid: the maps come from outside. */
static int own_maker_main(void *arg)
{
	struct maker *m = arg;
	keep_own_descriptors(m);
	char byte = syscall(SYS_unshare, CLONE_NEWUSER) == 0 ? 'o' : 'e';
	(void)!write(m->ready, &byte, 1);
	(void)!read(m->done, &byte, 1);
	return 0;
}

int sandbox_userns_make_own(bool (*write_maps)(pid_t pid, void *arg, struct error *err), void *arg,
			    struct error *err)
{
	struct maker m = { .owner = geteuid() };
	struct started st;
	int ns = -1;
	if (!start_maker(own_maker_main, &m, 'o', &st, err)) {
		if (st.pid > 0 && !st.late)
			error_set(
				err, 0,
				"cannot create a user namespace (are unprivileged user namespaces "
				"allowed? sysctl kernel.unprivileged_userns_clone)");
	} else if (write_maps(st.pid, arg, err)) {
		ns = open_namespace(&st, "user", err);
	}
	finish_maker(&st);
	return ns;
}

/* Sets the loopback interface up, which gives it 127.0.0.1 and ::1. */
static bool loopback_up(void)
{
	int sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sock < 0)
		return false;
	struct ifreq request = { 0 };
	snprintf(request.ifr_name, sizeof(request.ifr_name), "lo");
	bool up = ioctl(sock, SIOCGIFFLAGS, &request) == 0;
	request.ifr_flags |= IFF_UP;
	up = up && ioctl(sock, SIOCSIFFLAGS, &request) == 0;
	close(sock);
	return up;
}

/* As maker_main, for a network namespace: it joins the user namespace
 * (the daemon's root may), which then owns the one it makes. */
static int net_maker_main(void *arg)
{
	struct maker *m = arg;
	keep_own_descriptors(m);
	char byte = 'n';
	if (setns(m->userns, CLONE_NEWUSER) != 0 || syscall(SYS_unshare, CLONE_NEWNET) != 0 ||
	    !loopback_up())
		byte = 'e';
	(void)!write(m->ready, &byte, 1);
	(void)!read(m->done, &byte, 1);
	return 0;
}

int sandbox_netns_make(int userns, struct error *err)
{
	struct maker m = { .userns = userns };
	struct started st;
	int ns = -1;
	if (start_maker(net_maker_main, &m, 'n', &st, err))
		ns = open_namespace(&st, "net", err);
	else if (st.pid > 0 && !st.late)
		error_set(err, 0,
			  "cannot create the sandbox's network namespace with its loopback up");
	finish_maker(&st);
	return ns;
}

bool sandbox_userns_take_ids(struct sandbox *s, const struct sandbox_uid_range *range,
			     struct error *err)
{
	uint32_t width = sandbox_uid_width(range);
	if (!sandbox_uid_acquire(range, width, &s->host_uid, err))
		return false;
	s->uid_held = true;
	s->id_count = width;
	return (s->userns_fd = sandbox_userns_make(s->host_uid, width, err)) >= 0 &&
	       (s->netns_fd = sandbox_netns_make(s->userns_fd, err)) >= 0;
}
