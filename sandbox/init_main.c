/* SPDX-License-Identifier: MIT */
/* lizard-init: the sandbox's init (init.c) as a program of its own, linked
 * statically where it can be, so that a session's start does not pay for
 * loading the daemon's libraries and an image's root needs none of the
 * host's. The daemon runs it as `lizard-init sandbox-init FD MODE`, the
 * way it runs itself when there is no lizard-init beside it. */
#include "sandbox/init.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "sandbox-init") == 0)
		return sandbox_init_main(argc - 2, argv + 2);
	fprintf(stderr, "lizard-init: the init of lizard-bridge's sandboxes, not for people\n");
	return 2;
}
