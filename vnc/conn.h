/* SPDX-License-Identifier: MIT */
/* One RFB client connection. A dedicated thread owns the rfbClient: it reads
 * server messages into a vnc_framebuffer and performs every send. Other
 * threads hand it input through a bounded queue: vnc_conn_send_input waits
 * (at most VNC_INPUT_TIMEOUT_MS) until the events are on the wire,
 * vnc_conn_post_input does not wait at all.
 *
 * The bridge owns the socket (libvncclient gets a duplicate), so a watchdog
 * thread can shutdown() it whatever libvncclient is blocked in: when the
 * connection is destroyed or abandoned, when the handshake overruns, and when
 * the server stalls for VNC_STALL_MS. libvncclient
 * 0.9.14 would otherwise wait in select() without a timeout. */
#ifndef LIZARD_VNC_CONN_H
#define LIZARD_VNC_CONN_H

#include "util/error.h"
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vnc_conn;
struct vnc_framebuffer;
struct vnc_target;

enum vnc_input_type {
	VNC_INPUT_KEY,
	VNC_INPUT_POINTER,
	VNC_INPUT_PAUSE, /* lets the server see distinct moments, e.g. in drags */
};

enum vnc_button {
	VNC_BUTTON_LEFT = 1 << 0,
	VNC_BUTTON_MIDDLE = 1 << 1,
	VNC_BUTTON_RIGHT = 1 << 2,
	VNC_BUTTON_WHEEL_UP = 1 << 3,
	VNC_BUTTON_WHEEL_DOWN = 1 << 4,
	VNC_BUTTON_WHEEL_LEFT = 1 << 5,
	VNC_BUTTON_WHEEL_RIGHT = 1 << 6,
};

struct vnc_input_event {
	enum vnc_input_type type;
	uint32_t keysym; /* KEY */
	bool down;       /* KEY */
	int x, y;        /* POINTER, native pixels */
	int buttons;     /* POINTER: mask of enum vnc_button held */
	int pause_ms;    /* PAUSE */
};

/* A server that, while the VNC thread waits on it, sends nothing and
 * takes none of our bytes (or stops in the middle of a message) this long
 * is dead. */
#define VNC_STALL_MS 5000
/* Longest an input call waits for its events to go out. */
#define VNC_INPUT_TIMEOUT_MS 10000

/* Connects (blocking, bounded by connect_timeout_s for connect and
 * handshake together) and starts the thread. The framebuffer is the
 * caller's and must outlive the connection. When abandon (may be NULL)
 * becomes true, a connect in progress gives up within about 200 ms and an
 * open connection closes. On failure returns NULL with a message in err. */
struct vnc_conn *vnc_conn_open(const struct vnc_target *target, struct vnc_framebuffer *fb,
			       int connect_timeout_s, const atomic_bool *abandon,
			       struct error *err);
/* Stops the thread, fails queued input, closes the socket. NULL is fine. */
void vnc_conn_destroy(struct vnc_conn *conn);

/* Sends events in order (PAUSE events are skipped: pausing is the
 * caller's business). Returns false with a message when the connection is
 * gone, goes while sending, or the events are not out within
 * VNC_INPUT_TIMEOUT_MS (then none of them is sent later). */
bool vnc_conn_send_input(struct vnc_conn *conn, const struct vnc_input_event *events, size_t count,
			 struct error *err);
/* Queues a copy of the events and returns at once: for callers that must
 * never wait (the network loop). False when the connection is gone or the
 * queue is full (VNC_MAX_QUEUED commands). */
#define VNC_MAX_QUEUED 1024
bool vnc_conn_post_input(struct vnc_conn *conn, const struct vnc_input_event *events, size_t count,
			 struct error *err);
/* Sends cut text (Latin-1, as RFB defines it). */
bool vnc_conn_send_cut_text(struct vnc_conn *conn, const char *latin1, size_t len,
			    struct error *err);

/* Queues cut text without waiting, after any input queued before it. */
bool vnc_conn_post_cut_text(struct vnc_conn *conn, const char *latin1, size_t len,
			    struct error *err);

/* Called on the connection's thread with each clipboard text the server
 * sends (converted to UTF-8, len bytes, NUL-terminated); it must not wait.
 * fn may be NULL to stop. */
typedef void (*vnc_cut_text_fn)(void *context, const char *utf8, size_t len);
void vnc_conn_on_cut_text(struct vnc_conn *conn, vnc_cut_text_fn fn, void *context);

/* The text the server last put on the clipboard (UTF-8, caller frees), or
 * NULL when it has sent none. */
char *vnc_conn_cut_text(struct vnc_conn *conn);

/* False once the connection has failed; err then says why. */
bool vnc_conn_alive(struct vnc_conn *conn, struct error *err);
const char *vnc_conn_desktop_name(struct vnc_conn *conn);

/* While paused the connection reads nothing from the server, so a server
 * that is stopped on purpose (its processes frozen) is never declared dead
 * by the read timeout; what it sent stays queued in the socket until
 * resume. */
void vnc_conn_set_paused(struct vnc_conn *conn, bool paused);

/* Routes libvncclient's global logger to ours. Call once at start. */
void vnc_conn_global_init(void);

#endif
