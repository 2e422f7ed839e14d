/* SPDX-License-Identifier: MIT */
#include "sandbox/userns.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
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
	int ready, done, done_write;
	_Alignas(16) char stack[16384];
};

/* Runs in a child that shares the daemon's memory (a fork of the daemon
 * would copy its page tables: tens of ms). Its uid changes by raw system
 * calls, which change this task alone: glibc's would change every thread
 * of what it takes for its own process. It becomes the owner, makes the
 * namespace, says so, and waits until the daemon closes `done`. */
static int maker_main(void *arg)
{
	struct maker *m = arg;
	close(m->done_write);
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

int sandbox_userns_make(uid_t first, uint32_t count, struct error *err)
{
	int ready[2], done[2];
	if (pipe2(ready, O_CLOEXEC) != 0)
		return error_set(err, errno, "cannot create a pipe"), -1;
	if (pipe2(done, O_CLOEXEC) != 0) {
		close(ready[0]);
		close(ready[1]);
		return error_set(err, errno, "cannot create a pipe"), -1;
	}
	struct maker m = {
		.owner = first, .ready = ready[1], .done = done[0], .done_write = done[1]
	};
	pid_t pid = clone(maker_main, m.stack + sizeof(m.stack), CLONE_VM | SIGCHLD, &m);
	close(ready[1]);
	close(done[0]);
	int ns = -1;
	char byte = 0, map[64], path[64];
	if (pid < 0) {
		error_set(err, errno, "cannot start a process to make a user namespace");
		goto out;
	}
	if (read(ready[0], &byte, 1) != 1 || byte != 'u') {
		error_set(err, 0,
			  "cannot create a user namespace as uid %u (are unprivileged user "
			  "namespaces allowed? sysctl kernel.unprivileged_userns_clone)",
			  (unsigned)first);
		goto out;
	}
	snprintf(map, sizeof(map), "0 %u %u\n", (unsigned)first, (unsigned)count);
	if (!write_map(pid, "uid_map", map, err) || !write_map(pid, "gid_map", map, err))
		goto out;
	snprintf(path, sizeof(path), "/proc/%ld/ns/user", (long)pid);
	if ((ns = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		error_set(err, errno, "cannot open %s", path);
out:
	close(ready[0]);
	close(done[1]);
	if (pid > 0)
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
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
	close(m->done_write);
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
	int ready[2], done[2];
	if (pipe2(ready, O_CLOEXEC) != 0)
		return error_set(err, errno, "cannot create a pipe"), -1;
	if (pipe2(done, O_CLOEXEC) != 0) {
		close(ready[0]);
		close(ready[1]);
		return error_set(err, errno, "cannot create a pipe"), -1;
	}
	struct maker m = {
		.userns = userns, .ready = ready[1], .done = done[0], .done_write = done[1]
	};
	pid_t pid = clone(net_maker_main, m.stack + sizeof(m.stack), CLONE_VM | SIGCHLD, &m);
	close(ready[1]);
	close(done[0]);
	int ns = -1;
	char byte = 0, path[64];
	if (pid < 0) {
		error_set(err, errno, "cannot start a process to make a network namespace");
		goto out;
	}
	if (read(ready[0], &byte, 1) != 1 || byte != 'n') {
		error_set(err, 0,
			  "cannot create the sandbox's network namespace with its loopback up");
		goto out;
	}
	snprintf(path, sizeof(path), "/proc/%ld/ns/net", (long)pid);
	if ((ns = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		error_set(err, errno, "cannot open %s", path);
out:
	close(ready[0]);
	close(done[1]);
	if (pid > 0)
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	return ns;
}
