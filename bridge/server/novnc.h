/* SPDX-License-Identifier: MIT */
/* noVNC, the fallback viewer (see novnc.c): its page, its files, the RFB
 * WebSocket and the relay's own connection to the VNC server. */
#ifndef LIZARD_BRIDGE_SERVER_NOVNC_H
#define LIZARD_BRIDGE_SERVER_NOVNC_H

#include <libwebsockets.h>

struct http_conn;

/* GET /novnc/<session>: the page (embedded in the binary). */
void bridge_server_novnc_page(struct http_conn *c);
/* GET /novnc-files/<path>: a file of Debian's novnc package. */
void bridge_server_novnc_file(struct http_conn *c, const char *path);

extern const struct lws_protocols bridge_server_novnc_protocol;
extern const struct lws_protocols bridge_server_vnc_raw_protocol;

#endif
