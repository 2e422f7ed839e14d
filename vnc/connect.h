/* SPDX-License-Identifier: MIT */
/* Our own connect to a VNC server, made before libvncclient sees the
 * socket: so the bridge holds the socket from the start and can end it
 * whatever libvncclient is blocked in (watchdog.h). The connect itself has
 * a deadline and gives up when the caller abandons it. */
#ifndef LIZARD_VNC_CONNECT_H
#define LIZARD_VNC_CONNECT_H

#include "util/error.h"

#include <stdatomic.h>
#include <stdint.h>

struct vnc_target;

/* A connected, non-blocking (as libvncclient expects) stream socket to
 * target's UNIX socket path or TCP host and port, with TCP_NODELAY; gives
 * up at deadline_ms (clock_monotonic_ms) or within about 200 ms of abandon
 * (may be NULL) becoming true. -1 with err otherwise. */
int vnc_connect_socket(const struct vnc_target *target, int64_t deadline_ms,
		       const atomic_bool *abandon, struct error *err);

#endif
