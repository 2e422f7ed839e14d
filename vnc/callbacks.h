/* SPDX-License-Identifier: MIT */
/* The rfbClient a connection drives, and everything libvncclient calls
 * back into while the VNC thread is inside it: its logging, the password,
 * the framebuffer it decodes into, updates and copy rects, the cursor and
 * cut text. Each callback finds its struct vnc_conn through the client's
 * data and writes into the connection's vnc_framebuffer, so the rest of
 * vnc/ never sees libvncclient's buffers. libvncclient reports through
 * global function pointers without a client argument: the latest message
 * is kept per thread, for the caller to say why a connect or a read
 * failed. */
#ifndef LIZARD_VNC_CALLBACKS_H
#define LIZARD_VNC_CALLBACKS_H

#include <rfb/rfbclient.h>

struct vnc_conn;
struct vnc_target;

/* Routes libvncclient's global loggers to ours (log_debug). */
void vnc_callbacks_route_library_log(void);
/* The latest line libvncclient logged on this thread ("" when none since
 * the last clear), and forgetting it before a call that may fail. */
const char *vnc_callbacks_library_error(void);
void vnc_callbacks_clear_library_error(void);

/* A client for target with our callbacks, tied to conn and meant for a
 * socket the caller connected itself (listen mode); NULL when out of
 * memory. The caller sets client->sock and calls rfbInitClient. */
rfbClient *vnc_callbacks_make_client(struct vnc_conn *conn, const struct vnc_target *target);

#endif
