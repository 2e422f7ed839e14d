/* SPDX-License-Identifier: MIT */
/* The struct vnc_conn, shared by the files that make up one connection:
 * conn.c (open, destroy, the VNC thread and the input queue), callbacks.c
 * (the rfbClient and what libvncclient calls back), watchdog.c (the stall
 * watchdog). Types only, not public: callers see the opaque struct of
 * conn.h. It does not include conn.h, since the files below conn.c would
 * then depend on conn.c's module and close a circle with it. */
#ifndef LIZARD_VNC_CONN_STATE_H
#define LIZARD_VNC_CONN_STATE_H

#include "vnc/framebuffer.h"

#include <pthread.h>
#include <rfb/rfbclient.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Input on its way to the server (conn.c). */
struct vnc_command;

/* What the VNC thread is doing in libvncclient, where a stalled peer can
 * hold it: the watchdog judges by this. */
enum vnc_conn_busy { VNC_CONN_IDLE, VNC_CONN_READING, VNC_CONN_SENDING };

struct vnc_conn {
	rfbClient *client;
	struct vnc_framebuffer *fb;
	uint8_t *client_pixels; /* libvncclient decodes into this; we own it */
	bool bgrx;              /* ... as B, G, R, X: the server's own order */
	char *password;
	bool password_missing;
	char desktop_name[128];

	/* Ours; libvncclient has a dup. shutdown() on either ends the socket
	 * for both, and ours stays open (so its number is not reused) until
	 * the watchdog is gone. */
	int sock;

	pthread_t thread;
	bool thread_started;
	int wake_fd;

	pthread_t watchdog;
	bool watchdog_started;
	pthread_cond_t watch; /* CLOCK_MONOTONIC */
	const atomic_bool *abandon;
	int64_t handshake_deadline_ms; /* 0 once connected */
	int stall_limit_ms;            /* VNC_STALL_MS */
	pid_t thread_id;               /* of the VNC thread, for its read count */
	pthread_t thread_self;         /* valid while thread_id != 0 && !thread_exited */
	bool thread_exited;
	enum vnc_conn_busy busy; /* what the VNC thread is doing in libvncclient */
	int64_t stall_since_ms;  /* no progress either way since */
	int last_unread;
	long long last_read_bytes;
	bool cut;        /* the watchdog shut the socket down */
	bool watch_done; /* the watchdog may go */
	char cut_reason[200];

	pthread_mutex_t lock;
	pthread_cond_t command_done; /* CLOCK_MONOTONIC */
	struct vnc_command *queue_head, *queue_tail;
	size_t queued;
	bool stopping;
	bool paused;
	bool failed;
	char failure[256];
	char *cut_text; /* the server's latest clipboard, as UTF-8 */
	/* A vnc_cut_text_fn (conn.h), spelled out for the reason above. */
	void (*on_cut_text)(void *context, const char *utf8, size_t len);
	void *on_cut_text_context;

	/* CopyRect: libvncclient's own copy, and the destination it reports
	 * as an update right after, which the framebuffer already holds. */
	GotCopyRectProc library_copy_rect;
	struct vnc_rect copied;
};

#endif
