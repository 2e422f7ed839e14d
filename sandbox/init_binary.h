/* SPDX-License-Identifier: MIT */
/* Which program a sandbox's init is: lizard-init (init_main.c) beside the
 * daemon's binary (the build directory) or in ../libexec (installed), or
 * else the daemon's binary itself. Private to sandbox/. */
#ifndef LIZARD_SANDBOX_INIT_BINARY_H
#define LIZARD_SANDBOX_INIT_BINARY_H

#include <limits.h>
#include <stdbool.h>

struct sandbox_init_binary {
	char path[PATH_MAX];
	/* No dynamic loader: it runs in an image's root as it is. */
	bool is_static;
};

/* Found once; the same answer for the daemon's life. */
const struct sandbox_init_binary *sandbox_init_binary(void);

#endif
