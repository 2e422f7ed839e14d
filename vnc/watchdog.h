/* SPDX-License-Identifier: MIT */
/* The stall watchdog of one connection: a thread that ends the socket
 * (shutdown(), on the bridge's own descriptor) when the connection must go
 * while the VNC thread may be blocked in libvncclient: asked to stop or
 * abandoned, the handshake over its deadline, or a server that for the
 * stall limit neither sends (the VNC thread's read count in /proc stays
 * put) nor takes what we send (the socket's unsent bytes do not shrink).
 * libvncclient 0.9.14 would otherwise wait in select() without a timeout;
 * after the cut the watchdog keeps signalling the VNC thread until it is
 * out, since on a UNIX socket shutdown() alone does not make a full send
 * buffer look writable. */
#ifndef LIZARD_VNC_WATCHDOG_H
#define LIZARD_VNC_WATCHDOG_H

#include <stdbool.h>

struct vnc_conn;

/* Installs the handler of the signal that interrupts the VNC thread's
 * select(), without SA_RESTART. Once per process. */
void vnc_watchdog_global_init(void);
/* Starts conn's watchdog, which cuts after stall_limit_ms without
 * progress. False when the thread cannot be made. */
bool vnc_watchdog_start(struct vnc_conn *conn, int stall_limit_ms);
/* First thing on the VNC thread: lets the watchdog read its read count and
 * signal it out of libvncclient. */
void vnc_watchdog_attach_thread(struct vnc_conn *conn);
/* Stops and joins the watchdog; nothing when it never started. */
void vnc_watchdog_stop(struct vnc_conn *conn);

#endif
