/* SPDX-License-Identifier: MIT */
/* slirp4netns for a sandbox's network namespace (see network.h).
 *
 * It runs as the sandbox's own host uid, the owner of the sandbox's user
 * namespace, which it joins to reach the network namespace: the same for a
 * root daemon (which drops to that uid) and for an ordinary one. Its own
 * --enable-sandbox cannot be used that way (slirp4netns 1.2.0 fails with
 * "setegid(0)" when it joins a user namespace without being host root);
 * its seccomp filter is on. */
#include "sandbox/child.h"
#include "sandbox/network.h"


#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define READY_TIMEOUT_MS 5000
#define EXIT_TIMEOUT_MS 1000
#define MAX_NAMESERVERS 3 /* what the C library reads */
/* slirp4netns's largest: fewer, larger packets through the user-mode stack. */
#define MTU "65520"

const char *sandbox_network_helper(void)
{
	static const char *const candidates[] = { "/usr/bin/slirp4netns",
						  "/usr/local/bin/slirp4netns" };
	for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++)
		if (access(candidates[i], X_OK) == 0)
			return candidates[i];
	return NULL;
}

/* Whether a nameserver can be asked from inside: an IPv4 address (the
 * inside has no IPv6) that is neither the host's loopback, which stays out
 * of reach, nor in slirp's own 10.0.2.0/24. */
static bool reachable_nameserver(const char *text)
{
	struct in_addr addr;
	if (inet_pton(AF_INET, text, &addr) != 1)
		return false;
	uint32_t a = ntohl(addr.s_addr);
	return (a >> 24) != 127 && a != 0 && (a >> 8) != 0x0a0002;
}

/* Appends the usable nameservers of one resolv.conf (and, once, its search
 * line); returns how many it added. *saw_loopback: it named a local one. */
static int read_resolv_conf(const char *path, char *out, size_t size, size_t *used, int have,
			    bool *saw_loopback)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	char line[512];
	int added = 0;
	while (fgets(line, sizeof(line), f)) {
		char key[16], value[256];
		if (sscanf(line, "%15s %255s", key, value) != 2)
			continue;
		int n = 0;
		if (strcmp(key, "nameserver") == 0) {
			if (!reachable_nameserver(value)) {
				*saw_loopback = *saw_loopback || strncmp(value, "127.", 4) == 0;
				continue;
			}
			if (have + added >= MAX_NAMESERVERS)
				continue;
			n = snprintf(out + *used, size - *used, "nameserver %s\n", value);
			added++;
		} else if (strcmp(key, "search") == 0 || strcmp(key, "domain") == 0) {
			n = snprintf(out + *used, size - *used, "%s", line);
		}
		if (n > 0 && (size_t)n < size - *used)
			*used += (size_t)n;
	}
	fclose(f);
	return added;
}

void sandbox_network_resolv_conf(char *out, size_t size, bool *has_dns)
{
	size_t used = (size_t)snprintf(out, size,
				       "# the sandbox's: the host's upstream nameservers\n");
	bool saw_loopback = false;
	int count = read_resolv_conf("/etc/resolv.conf", out, size, &used, 0, &saw_loopback);
	/* systemd-resolved's stub (127.0.0.53) is out of reach; the servers it
	 * asks are listed here. */
	if (count == 0 && saw_loopback)
		count = read_resolv_conf("/run/systemd/resolve/resolv.conf", out, size, &used, 0,
					 &saw_loopback);
	*has_dns = count > 0;
	if (!*has_dns && used < size)
		snprintf(
			out + used, size - used,
			"# none: the host names only local resolvers, which the sandbox cannot reach\n");
}

/* In the child, before exec: only async-signal-safe calls. The
 * namespaces' descriptors, when given, become 5 and 6. */
static _Noreturn void exec_helper(const char *helper, char *const *argv, uid_t uid, int log_fd,
				  int exit_read, int ready_write,
				  const struct sandbox_network_target *t, pid_t parent,
				  const struct sandbox_cgroup_join *join)
{
	char *const env[] = { "PATH=/usr/bin:/bin", "LANG=C.UTF-8", NULL };
	sandbox_child_setup(join, uid, parent);
	int null_fd = open("/dev/null", O_RDWR);
	int high_exit = fcntl(exit_read, F_DUPFD_CLOEXEC, 10);
	int high_ready = fcntl(ready_write, F_DUPFD_CLOEXEC, 10);
	/* Both or neither: a user namespace alone (an ordinary daemon's with
	 * subordinate ids) leaves the network to bwrap, found by its pid. */
	bool by_fd = t->userns_fd >= 0 && t->netns_fd >= 0;
	int high_user = by_fd ? fcntl(t->userns_fd, F_DUPFD_CLOEXEC, 10) : -1;
	int high_net = by_fd ? fcntl(t->netns_fd, F_DUPFD_CLOEXEC, 10) : -1;
	if (null_fd < 0 || high_exit < 0 || high_ready < 0 ||
	    (by_fd && (high_user < 0 || high_net < 0)))
		_exit(126);
	dup2(null_fd, STDIN_FILENO);
	dup2(log_fd, STDOUT_FILENO);
	dup2(log_fd, STDERR_FILENO);
	dup2(high_exit, 3);
	dup2(high_ready, 4);
	if (high_user >= 0) {
		dup2(high_user, 5);
		dup2(high_net, 6);
	}
	close_range(high_user >= 0 ? 7 : 5, ~0U, 0);
	execve(helper, argv, env);
	_exit(127);
}

/* What the child that becomes the helper needs. */
struct helper_child {
	const char *helper;
	char *const *argv;
	uid_t uid;
	int log_fd, exit_read, ready_write;
	const struct sandbox_network_target *target;
	pid_t parent;
	const struct sandbox_cgroup_join *join;
};

static void helper_child_main(void *data)
{
	const struct helper_child *c = data;
	exec_helper(c->helper, c->argv, c->uid, c->log_fd, c->exit_read, c->ready_write, c->target,
		    c->parent, c->join);
}

bool sandbox_network_start(struct sandbox_network *net, const struct sandbox_network_target *target,
			   uid_t uid, int log_fd, const struct sandbox_cgroup_join *join,
			   struct error *err)
{
	net->pid = 0;
	net->exit_fd = net->ready_fd = -1;
	const char *helper = sandbox_network_helper();
	if (!helper)
		return error_set(err, 0,
				 SANDBOX_NETWORK_PACKAGE
				 " is not installed; sessions with a "
				 "network need it: apt-get install " SANDBOX_NETWORK_PACKAGE
				 " (or create the session with network: false)");
	char userns[64], netns[64], api[200] = "";
	bool by_fd = target->userns_fd >= 0 && target->netns_fd >= 0;
	if (!by_fd && target->pid <= 0)
		return error_set(err, 0, "bwrap did not say the sandbox's pid (--info-fd)");
	if (by_fd) {
		snprintf(userns, sizeof(userns), "--userns-path=/proc/self/fd/5");
		snprintf(netns, sizeof(netns), "/proc/self/fd/6");
	} else {
		snprintf(userns, sizeof(userns), "--userns-path=/proc/%ld/ns/user",
			 (long)target->pid);
		snprintf(netns, sizeof(netns), "/proc/%ld/ns/net", (long)target->pid);
	}
	/* bench/ports.mjs compares exposed ports with slirp4netns's own port
	 * forwarding, which needs its API socket: an internal switch for that
	 * comparison only, an absolute directory of the bench's. */
	const char *api_dir = getenv("LIZARD_BENCH_SLIRP_API_DIR");
	if (api_dir && api_dir[0] == '/' && strlen(api_dir) < 120)
		snprintf(api, sizeof(api), "--api-socket=%s/slirp-%ld-%d.sock", api_dir,
			 (long)getpid(),
			 target->netns_fd >= 0 ? target->netns_fd : (int)target->pid);
	char *const argv[] = {
		(char *)helper,
		"--configure",
		"--mtu=" MTU,
		"--disable-host-loopback",
		"--disable-dns",
		"--enable-seccomp",
		"--exit-fd=3",
		"--ready-fd=4",
		userns,
		"--netns-type=path",
		netns,
		"tap0",
		NULL,
		NULL,
	};
	/* The API socket goes before the positional arguments. */
	char *with_api[sizeof(argv) / sizeof(argv[0])];
	if (api[0]) {
		size_t n = 0;
		with_api[n++] = argv[0];
		with_api[n++] = api;
		for (size_t i = 1; argv[i]; i++)
			with_api[n++] = argv[i];
		with_api[n] = NULL;
	}
	int exit_pipe[2], ready_pipe[2];
	if (pipe2(exit_pipe, O_CLOEXEC) != 0)
		return error_set(err, errno, "cannot create a pipe for " SANDBOX_NETWORK_PACKAGE);
	if (pipe2(ready_pipe, O_CLOEXEC) != 0) {
		close(exit_pipe[0]), close(exit_pipe[1]);
		return error_set(err, errno, "cannot create a pipe for " SANDBOX_NETWORK_PACKAGE);
	}
	struct helper_child child = { helper,       api[0] ? with_api : argv,
				      uid,          log_fd,
				      exit_pipe[0], ready_pipe[1],
				      target,       getpid(),
				      join };
	pid_t pid = sandbox_child_start(helper_child_main, &child);
	int fork_errno = errno;
	close(exit_pipe[0]);
	close(ready_pipe[1]);
	net->exit_fd = exit_pipe[1];
	if (pid < 0) {
		close(ready_pipe[0]);
		sandbox_network_stop(net);
		return error_set(err, fork_errno, "cannot start " SANDBOX_NETWORK_PACKAGE);
	}
	net->pid = pid;
	net->ready_fd = ready_pipe[0];
	return true;
}

bool sandbox_network_wait(struct sandbox_network *net, struct error *err)
{
	/* It writes "1" once the interface is up; an exit closes the pipe. */
	struct pollfd pfd = { .fd = net->ready_fd, .events = POLLIN };
	int n;
	while ((n = poll(&pfd, 1, READY_TIMEOUT_MS)) < 0 && errno == EINTR)
		;
	char ready = 0;
	bool up = n > 0 && read(net->ready_fd, &ready, 1) == 1 && ready == '1';
	close(net->ready_fd);
	net->ready_fd = -1;
	if (!up) {
		sandbox_network_stop(net);
		return error_set(err, 0, SANDBOX_NETWORK_PACKAGE " %s the sandbox's network",
				 n == 0 ? "did not connect, within 5 s," : "failed to connect");
	}
	return true;
}

void sandbox_network_stop(struct sandbox_network *net)
{
	if (net->ready_fd >= 0)
		close(net->ready_fd);
	net->ready_fd = -1;
	if (net->exit_fd >= 0)
		close(net->exit_fd);
	net->exit_fd = -1;
	if (net->pid <= 0)
		return;
	sandbox_reap(net->pid, EXIT_TIMEOUT_MS);
	net->pid = 0;
}
