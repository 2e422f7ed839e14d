/* SPDX-License-Identifier: MIT */
/* Building a template: a sandbox with a writable root (root.h) started
 * from the host's system or from another template's files, files written
 * into it and commands run in it as root (with the network), then its
 * files kept like a snapshot's (snapshot.h) and the sandbox ended. What
 * the commands print goes to a log callback as it comes. Nothing is kept
 * when a step fails: dest is the caller's to remove. */
#ifndef LIZARD_SANDBOX_TEMPLATE_H
#define LIZARD_SANDBOX_TEMPLATE_H

#include "util/error.h"

#include <stdbool.h>
#include <stddef.h>

struct sandbox_uid_range;

struct sandbox_template_file {
	const char *path; /* inside, absolute */
	const void *data;
	size_t len;
	unsigned mode;
};

struct sandbox_template_build {
	/* A template's or snapshot's directory to start from; NULL: the host. */
	const char *from_dir;
	/* Or a whole root filesystem (sandbox_options.image_dir); NULL: none. */
	const char *image_dir;
	const struct sandbox_template_file *files;
	size_t file_count;
	const char *const *commands; /* /bin/sh -c, as root, in order; NULL-terminated or NULL */
	const char *const *envs;     /* NAME=value for the commands; may be NULL */
	int command_timeout_ms;
	const struct sandbox_uid_range *uid_range; /* as in sandbox_options */
	/* Told each step and what the commands print; may be NULL. */
	void (*log)(void *context, const char *text, size_t len);
	void *context;
};

/* Builds into dest, a new empty directory of the daemon's. */
bool sandbox_template_build(const struct sandbox_template_build *build, const char *dest,
			    struct error *err);

/* A Debian release's root filesystem at dir (a new path) with mmdebstrap
 * (variant apt, so apt-get works inside), packages ("a,b", or "") added:
 * owned by root when the daemon is, as a writable root's idmapped mount
 * expects. The host's own release comes from the host's apt sources (for
 * another, mmdebstrap's default, deb.debian.org), and what the host's apt
 * cache holds is taken from there instead of downloaded. */
bool sandbox_template_debootstrap(const char *release, const char *packages, const char *dir,
				  int timeout_ms, struct error *err);

#endif
