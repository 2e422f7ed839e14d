/* One RFB client connection. A dedicated thread owns the rfbClient: it reads
 * server messages into a vnc_framebuffer and performs every send. Other
 * threads hand it input through vnc_conn_send_input, which blocks until the
 * events are on the wire (or the connection has failed). */
#ifndef LIZARD_VNC_CONN_H
#define LIZARD_VNC_CONN_H

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
	uint32_t keysym;  /* KEY */
	bool down;        /* KEY */
	int x, y;         /* POINTER, native pixels */
	int buttons;      /* POINTER: mask of enum vnc_button held */
	int pause_ms;     /* PAUSE */
};

/* Connects (blocking, bounded by connect_timeout_s) and starts the thread.
 * The framebuffer is the caller's and must outlive the connection. On
 * failure returns NULL with a message in err. */
struct vnc_conn *vnc_conn_open(const struct vnc_target *target, struct vnc_framebuffer *fb,
			       int connect_timeout_s, char *err, size_t err_size);
/* Stops the thread, fails queued input, closes the socket. NULL is fine. */
void vnc_conn_destroy(struct vnc_conn *conn);

/* Sends events in order. Returns false with a message when the connection
 * is gone or goes while sending. */
bool vnc_conn_send_input(struct vnc_conn *conn, const struct vnc_input_event *events,
			 size_t count, char *err, size_t err_size);
/* Sends cut text (Latin-1, as RFB defines it). */
bool vnc_conn_send_cut_text(struct vnc_conn *conn, const char *latin1, size_t len, char *err,
			    size_t err_size);

/* The text the server last put on the clipboard (UTF-8, caller frees), or
 * NULL when it has sent none. */
char *vnc_conn_cut_text(struct vnc_conn *conn);

/* False once the connection has failed; err then says why. */
bool vnc_conn_alive(struct vnc_conn *conn, char *err, size_t err_size);
const char *vnc_conn_desktop_name(struct vnc_conn *conn);

/* While paused the connection reads nothing from the server, so a server
 * that is stopped on purpose (its processes frozen) is never declared dead
 * by the read timeout; what it sent stays queued in the socket until
 * resume. */
void vnc_conn_set_paused(struct vnc_conn *conn, bool paused);

/* Routes libvncclient's global logger to ours. Call once at start. */
void vnc_conn_global_init(void);

#endif
