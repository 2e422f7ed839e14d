/* SPDX-License-Identifier: MIT */
/* The sandbox's init: the daemon's own binary, run inside every sandbox. */
#ifndef LIZARD_SANDBOX_INIT_H
#define LIZARD_SANDBOX_INIT_H


/* The hidden `lizard-bridge sandbox-init` subcommand (init.c). */
int sandbox_init_main(int argc, char **argv);

#endif
