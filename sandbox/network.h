/* SPDX-License-Identifier: MIT */
/* The network of a sandbox that has one: its own network namespace,
 * connected to the outside by slirp4netns, a user-mode TCP/IP stack that
 * makes each connection from inside an ordinary socket of an unprivileged
 * host process. The host's loopback stays out of reach (the gateway's
 * alias to it is off, and so is slirp's DNS alias, which would forward any
 * port to the host's resolver, a loopback address on many hosts); programs
 * inside ask the host's upstream DNS servers directly. Private to
 * sandbox/. */
#ifndef LIZARD_SANDBOX_NETWORK_H
#define LIZARD_SANDBOX_NETWORK_H

#include "util/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct sandbox_cgroup_join;

#define SANDBOX_NETWORK_PACKAGE "slirp4netns"

struct sandbox_network {
	pid_t pid;    /* slirp4netns, 0 when not running */
	int exit_fd;  /* closing it tells slirp4netns to exit; -1 when none */
	int ready_fd; /* until sandbox_network_wait */
};

/* The helper's path, or NULL when it is not installed. */
const char *sandbox_network_helper(void);

/* Fills out with a resolv.conf for the inside: the host's nameservers that
 * are reachable from there (IPv4, not loopback; with systemd-resolved's
 * stub, its upstream servers). *has_dns is false when there are none: the
 * file then says so and names cannot be resolved inside. */
void sandbox_network_resolv_conf(char *out, size_t size, bool *has_dns);

/* The namespaces to connect: by descriptors (a root daemon's, made before
 * the sandbox: userns.h), or else those of a host process of the sandbox. */
struct sandbox_network_target {
	int userns_fd, netns_fd;
	pid_t pid;
};

/* Starts connecting target's network namespace to the outside;
 * sandbox_network_wait returns once its interface is up (in between, the
 * sandbox may go on starting). The helper runs as host uid, in the cgroup
 * of join (may be NULL), writes to log_fd, and dies with the daemon (death
 * signal, and exit_fd's close). */
bool sandbox_network_start(struct sandbox_network *net, const struct sandbox_network_target *target,
			   uid_t uid, int log_fd, const struct sandbox_cgroup_join *join,
			   struct error *err);
/* Fails, and stops the helper, when it exits or is not up within 5 s. */
bool sandbox_network_wait(struct sandbox_network *net, struct error *err);

/* Ends the helper and waits for it. Fine on one never started. */
void sandbox_network_stop(struct sandbox_network *net);

#endif
