/* SPDX-License-Identifier: MIT */
/* The sandbox's half of sandbox/port.h: runs in a child of the init, in
 * the sandbox's network namespace, as the sandbox's user. Private to
 * sandbox/. */
#ifndef LIZARD_SANDBOX_PORT_INSIDE_H
#define LIZARD_SANDBOX_PORT_INSIDE_H

#include <stdbool.h>

/* argv: "@connect" PORT. Dials 127.0.0.1:PORT and sends on fd 3 one
 * message: an int32 errno (0 on success), with the connected socket as
 * SCM_RIGHTS when it is 0. Exit status 0 when the message went out. */
int sandbox_port_inside_run(char **argv);
/* Whether argv names this built-in. */
bool sandbox_port_inside_is(char **argv);

#endif
