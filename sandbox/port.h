/* SPDX-License-Identifier: MIT */
/* A TCP connection to a port on the sandbox's own loopback, opened from
 * inside its network namespace, the way RootlessKit's builtin port driver
 * does it: a built-in program of the sandbox's init (port_inside.c) dials
 * 127.0.0.1:PORT and hands the connected socket back over a UNIX socket
 * with SCM_RIGHTS. So a service bound to the sandbox's 127.0.0.1 is
 * reachable with or without network, and no host port is opened. The
 * daemon needs no setns (an ordinary user's daemon could not).
 *
 * In two steps, so that an event loop never waits for the sandbox: start
 * gives a descriptor that becomes readable once the answer is there;
 * finish reads it. */
#ifndef LIZARD_SANDBOX_PORT_H
#define LIZARD_SANDBOX_PORT_H

#include "util/error.h"

#include <stdbool.h>

struct sandbox;

/* Asks the sandbox to dial port (1..65535). *pending is the caller's to
 * poll (readable: the answer came) and to close after finish. Never waits:
 * when the init's queue has no room, it fails with err->code ENOBUFS. */
bool sandbox_port_dial_start(struct sandbox *sandbox, int port, int *pending, struct error *err);
/* The connected socket (non-blocking, close-on-exec), or -1 with err
 * (err->code ECONNREFUSED: nothing listens on the port). */
int sandbox_port_dial_finish(int pending, int port, struct error *err);

#endif
