/* SPDX-License-Identifier: MIT */
/* A session's viewer hub and its viewers, shared by the files of
 * bridge/viewer/ (hub.c plans rounds and keeps the viewers' accounts,
 * encode.c makes their updates, control.c tracks what a viewer holds
 * down); types only, not public. */
#ifndef LIZARD_BRIDGE_VIEWER_HUB_STATE_H
#define LIZARD_BRIDGE_VIEWER_HUB_STATE_H

#include "bridge/viewer/types.h"
#include "bridge/viewer/region.h"
#include "bridge/viewer/wire.h"
#include "vnc/capture.h"
#include "vnc/png.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* The hub wakes when the framebuffer changes or a viewer becomes ready
 * (acknowledged, sent, joined); with neither it looks again after this
 * long, for lossy regions due their exact refresh. */
#define IDLE_WAIT_MS 50
/* Flow control: a viewer gets another update while fewer than this many
 * are unpainted (the page acknowledges each once painted), and the bytes
 * of those stay under MAX_IN_FLIGHT_BYTES (one update may be larger). */
#define MAX_IN_FLIGHT 2
#define MAX_IN_FLIGHT_BYTES (1u << 20)
/* Copies kept per viewer; more turn into pixels. */
#define MAX_COPIES 16
/* Viewers served per round; the rest get theirs in the next. */
#define MAX_JOBS 64
/* Lossy regions get their exact pixels once they have been still this long. */
#define LOSSY_REFRESH_MS 300
#define JPEG_QUALITY 60
#define JPEG_MIN_AREA (128 * 128)
/* Larger images of few colours go as palette PNGs: the browser decodes
 * those natively off the page's thread, where the page's own lookup of
 * indices would hold up painting (a scrolling page fell from 28 to 9
 * updates a second); a PNG's container only matters for small ones. */
#define INDEXED_MAX_AREA (128 * 128)
/* A round's images are encoded on up to this many threads (the cores, at
 * most), when they hold at least PARALLEL_MIN_PIXELS: below that a thread
 * costs more than it saves. */
#define MAX_ENCODERS 8
/* Video failures waiting to be told to one page (video.c). */
#define VIDEO_MAX_NOTICES 8
#define PARALLEL_MIN_PIXELS (256 * 256)

/* A copy within the canvas, as the page applies it. */
struct copy {
	struct vnc_rect dest;
	int src_x, src_y;
};

struct bridge_viewer {
	struct bridge_viewers *hub;
	uint64_t id; /* unique per hub: survives the pointer being reused */
	enum bridge_viewer_role role;
	bool detached, kicked;
	struct bridge_viewer_message *pending; /* given to the server, not yet sent */
	struct bridge_viewer_message *next;    /* ready for the server to take */
	int width, height;                     /* the size it was told */
	/* What its canvas lacks: the copies to make, in order, then the
	 * pixels of damage painted from the framebuffer. */
	uint64_t change_serial; /* next framebuffer change to replay */
	struct copy copies[MAX_COPIES];
	int copy_count;
	struct bridge_region damage;
	struct bridge_region lossy; /* painted from JPEG, to refresh */
	int64_t lossy_ms;           /* when lossy last grew */
	bool fast;                  /* the page prefers JPEG where it pays */
	/* The pointer, which the page draws over its canvas itself: the
	 * shape it was sent and where. */
	bool pointer_known;
	uint64_t pointer_shape_version;
	struct vnc_rect pointer;
	size_t in_flight[MAX_IN_FLIGHT]; /* sizes of updates not yet painted */
	int in_flight_count;
	/* What it holds down on the desktop, released when it goes. Only the
	 * connection's thread touches these. */
	struct {
		uint32_t code, keysym;
	} held[BRIDGE_VIEWER_MAX_HELD];
	int held_count;
	int buttons, pointer_x, pointer_y;
	uint64_t state_seen;     /* the hub's state_version it was told */
	uint64_t clipboard_seen; /* the hub's clipboard_version it was given */
	/* Its WebRTC video (video.c): while video is set it gets no updates.
	 * The peer is the network loop's; the rest is under the hub lock. */
	struct webrtc_peer *video_peer;
	bool video;
	int video_codec;
	int64_t video_motion_ms;    /* when its screen or pointer last changed */
	uint64_t video_cursor_seen; /* the framebuffer's cursor_version then */
	/* Failures to tell its page, oldest first; more are dropped. */
	struct bridge_viewer_message *video_notices[VIDEO_MAX_NOTICES];
	int video_notice_count;
	struct bridge_viewer *next_viewer;
};

/* One update to make: for a viewer, or shared with an earlier job whose
 * viewer needs exactly the same (same_as). */
struct job {
	uint64_t viewer; /* by id: it may leave while we encode */
	bool resized, fast;
	int same_as;
	struct copy copies[MAX_COPIES];
	int copy_count;
	struct bridge_region damage;
	/* The pointer's new shape (RGBA, pointer.width x pointer.height) or
	 * only its new place, when it changed. */
	bool pointer_shape, pointer_moved;
	uint64_t pointer_shape_version;
	struct vnc_rect pointer;
	uint8_t *pointer_rgba;
	struct vnc_image images[BRIDGE_REGION_MAX]; /* the damage's pixels, when same_as < 0 */
	/* Or, for a rectangle of one colour, only that colour (no pixels). */
	bool solid[BRIDGE_REGION_MAX];
	uint8_t colour[BRIDGE_REGION_MAX][VIEWER_WIRE_FILL_COLOUR_SIZE];
	bool lossy[BRIDGE_REGION_MAX];
	/* Each damage rectangle's operation, encoded on any thread. */
	struct vnc_bytes parts[BRIDGE_REGION_MAX];
	bool part_ok[BRIDGE_REGION_MAX];
	struct bridge_viewer_message *made;
};

/* The images of one round, shared out among encoder threads. */
struct encoding {
	struct job *jobs;
	int items[MAX_JOBS * BRIDGE_REGION_MAX]; /* job * BRIDGE_REGION_MAX + rect */
	int item_count;
	atomic_int next;
};

struct webrtc_peer;
struct bridge_video;

struct bridge_viewers {
	struct vnc_framebuffer *fb;
	struct bridge_video *video; /* NULL when the server offers none */
	size_t headroom;
	void (*wake)(void *);
	void *wake_context;

	pthread_mutex_t lock;
	pthread_cond_t changed;
	char control_token[33], view_token[33];
	char *ice_servers; /* JSON, with credentials: wiped before freed */
	struct bridge_viewer *viewers;
	int count;
	uint64_t next_id;
	bool ended, stopping, running;
	bool news;              /* something changed since the hub last looked */
	bool paused;            /* the session's processes are frozen */
	uint64_t state_version; /* bumped by every pause and resume */
	/* The desktop's newest clipboard text, for control viewers: only the
	 * newest is kept, so a viewer that is behind skips the older ones. */
	struct bridge_viewer_message *clipboard;
	uint64_t clipboard_version;
	pthread_t thread;
	struct job jobs[MAX_JOBS]; /* the hub thread's */
};

#endif
