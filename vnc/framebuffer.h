/* SPDX-License-Identifier: MIT */
/* The live picture of one desktop, shared between the VNC connection thread
 * (the only writer) and any number of readers (screenshots, waits).
 *
 * Pixels are 4 bytes each in memory order R, G, B, X. Every change bumps a
 * frame counter and records the time, under one mutex with a condition
 * variable, so readers can wait for "a frame after N" or "no change for Q ms"
 * instead of sleeping blindly. */
#ifndef LIZARD_VNC_FRAMEBUFFER_H
#define LIZARD_VNC_FRAMEBUFFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vnc_framebuffer;

/* Largest screen accepted, each side: an 8192x8192 picture is 256 MiB, and
 * the VNC client keeps a second one. */
#define VNC_MAX_SCREEN_SIDE 8192

/* A copy of (part of) the framebuffer that the caller owns. */
struct vnc_image {
	int width, height;
	uint8_t *pixels; /* RGBX, stride width * 4 */
};

struct vnc_rect {
	int x, y, width, height;
};

enum vnc_wait_result {
	VNC_WAIT_OK = 0,
	VNC_WAIT_TIMEOUT,
	VNC_WAIT_CLOSED,
};

/* Whether every pixel of a width x height block at origin (rows stride
 * bytes apart) has the colour of the first, the padding byte aside. Whole
 * pixels a row at a time: a full screen takes a fraction of a millisecond,
 * and a block that is not one colour usually ends in its first row. */
bool vnc_one_colour(const uint8_t *origin, size_t stride, int width, int height);

struct vnc_framebuffer *vnc_framebuffer_create(void);
void vnc_framebuffer_destroy(struct vnc_framebuffer *fb);

/* Writer side (VNC thread). */
bool vnc_framebuffer_resize(struct vnc_framebuffer *fb, int width, int height);
/* Pixels of src as R, G, B, X in memory (the framebuffer's order). */
void vnc_framebuffer_write_rect(struct vnc_framebuffer *fb, const uint8_t *src, int src_stride,
				int x, int y, int width, int height);
/* The same from pixels as B, G, R, X in memory: what Xvnc and most
 * servers on little-endian machines hold, so they need not convert. */
void vnc_framebuffer_write_rect_bgrx(struct vnc_framebuffer *fb, const uint8_t *src, int src_stride,
				     int x, int y, int width, int height);
/* The server's CopyRect: the rectangle at (src_x, src_y) is copied to
 * dest, within this framebuffer. False (nothing done) when either lies
 * outside the screen. */
bool vnc_framebuffer_copy_rect(struct vnc_framebuffer *fb, int src_x, int src_y,
			       const struct vnc_rect *dest);
/* Publishes the rectangles written since the last commit as one frame. */
void vnc_framebuffer_commit(struct vnc_framebuffer *fb);
/* Cursor shape in RGBA (alpha 0 or 255), or width 0 for none. */
void vnc_framebuffer_set_cursor_shape(struct vnc_framebuffer *fb, const uint8_t *rgba, int width,
				      int height, int hot_x, int hot_y);
void vnc_framebuffer_set_cursor_position(struct vnc_framebuffer *fb, int x, int y);
/* Marks the picture as no longer live; waiters wake with VNC_WAIT_CLOSED.
 * reopen clears that for a reconnect. */
void vnc_framebuffer_close(struct vnc_framebuffer *fb);
void vnc_framebuffer_reopen(struct vnc_framebuffer *fb);

/* Reader side. */
void vnc_framebuffer_size(struct vnc_framebuffer *fb, int *width, int *height);
void vnc_framebuffer_cursor_position(struct vnc_framebuffer *fb, int *x, int *y);
uint64_t vnc_framebuffer_sequence(struct vnc_framebuffer *fb);

/* Copies the region (whole screen when region is NULL) into out, drawing the
 * cursor in when with_cursor. Returns false when the region lies outside the
 * screen, the screen has no size yet, or memory runs out. *sequence (if not
 * NULL) gets the frame counter of the copy. */
bool vnc_framebuffer_snapshot(struct vnc_framebuffer *fb, const struct vnc_rect *region,
			      bool with_cursor, struct vnc_image *out, uint64_t *sequence);
void vnc_image_finish(struct vnc_image *image);

/* What changed, in order: pixels written to rect, or (copy) rect filled
 * from the same-sized rectangle at (src_x, src_y). The framebuffer keeps
 * the last VNC_FRAMEBUFFER_CHANGES of them so that viewers can replay the
 * copies instead of sending the pixels again. A resize is a write of the
 * whole screen. */
#define VNC_FRAMEBUFFER_CHANGES 4096
struct vnc_framebuffer_change {
	struct vnc_rect rect;
	bool copy;
	int src_x, src_y;
};

/* Direct access for encoders, valid between lock and unlock, during which
 * the connection thread waits: copy what is needed and let go quickly. */
struct vnc_framebuffer_view {
	const uint8_t *pixels; /* RGBX, stride width * 4 */
	int width, height;
	const uint64_t *row_version; /* per row: grows whenever the row changes */
	uint64_t sequence;
	uint64_t cursor_version;       /* grows when the pointer moves or changes shape */
	uint64_t cursor_shape_version; /* grows when its shape changes */
	struct vnc_rect cursor;        /* where the pointer covers the screen */
	uint64_t change_serial;        /* changes of complete updates end here */
	struct vnc_framebuffer *fb;
};

void vnc_framebuffer_lock_view(struct vnc_framebuffer *fb, struct vnc_framebuffer_view *view);
void vnc_framebuffer_unlock_view(struct vnc_framebuffer_view *view);
/* Change number serial (< view->change_serial), or false when it is
 * older than what the framebuffer keeps. A commit seals the newest
 * change: later writes never grow a change a reader may see. */
bool vnc_framebuffer_view_change(const struct vnc_framebuffer_view *view, uint64_t serial,
				 struct vnc_framebuffer_change *out);
/* The pointer as an RGBA image of cursor.width x cursor.height (alpha 255
 * where it is drawn, 0 elsewhere), for viewers that draw it themselves. */
void vnc_framebuffer_view_cursor_image(const struct vnc_framebuffer_view *view, uint8_t *rgba);
/* Draws the pointer into dst, an RGBX buffer showing area of the screen. */
void vnc_framebuffer_view_draw_cursor(const struct vnc_framebuffer_view *view, uint8_t *dst,
				      int dst_stride, const struct vnc_rect *area);

/* Calls listener(context) whenever the picture or the pointer changed
 * (a frame, as counted by the sequence) and when the picture is closed,
 * so a consumer wakes at once instead of polling. It runs on the writer's
 * thread with the framebuffer's lock held: it must be quick and take no
 * lock that is ever held while calling into the framebuffer. One listener;
 * NULL removes it (after which it is no longer called). */
void vnc_framebuffer_set_listener(struct vnc_framebuffer *fb, void (*listener)(void *context),
				  void *context);

enum vnc_wait_result vnc_framebuffer_wait_frame_after(struct vnc_framebuffer *fb, uint64_t sequence,
						      int timeout_ms);
/* Waits until the picture is complete: the server's first update since
 * the connection (or the latest resize) has arrived in full. */
enum vnc_wait_result vnc_framebuffer_wait_picture(struct vnc_framebuffer *fb, int timeout_ms);
/* How many pixels have been drawn so far, and a wait until at_least (> 0)
 * more have been since a count taken earlier. Drawn means changed, inside
 * a rectangle of more than one colour: a program painting its window,
 * not a freshly mapped window still filled with its background (Chromium's
 * stays so for a second or more on a cold start), nor the pointer moving.
 * Pixels the server resends unchanged do not count. */
uint64_t vnc_framebuffer_drawn_pixels(struct vnc_framebuffer *fb);
enum vnc_wait_result vnc_framebuffer_wait_drawn(struct vnc_framebuffer *fb, uint64_t drawn_pixels,
						uint64_t at_least, int timeout_ms);

/* Waits until the screen has not changed for quiet_ms, counting from
 * since_ms (clock_monotonic_ms time, e.g. when an action was sent) at the
 * earliest, for at most timeout_ms. */
enum vnc_wait_result vnc_framebuffer_wait_settled(struct vnc_framebuffer *fb, int64_t since_ms,
						  int quiet_ms, int timeout_ms);

#endif
