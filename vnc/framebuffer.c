/* SPDX-License-Identifier: MIT */
#include "vnc/framebuffer.h"

#include "util/clock.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct vnc_framebuffer {
	pthread_mutex_t lock;
	pthread_cond_t changed; /* CLOCK_MONOTONIC */

	uint8_t *pixels;
	int width, height;
	/* A row of the writer's pixels in our order, when it sends another. */
	uint8_t reordered[VNC_MAX_SCREEN_SIDE * 4];
	/* Per row, the write that last touched it, so encoders can redo only
	 * what changed. write_version only grows, also across resizes. */
	uint64_t *row_version;
	uint64_t write_version;
	uint64_t cursor_version;
	uint64_t cursor_shape_version;

	uint64_t sequence;
	/* Pixels drawn so far: changed rows of rectangles holding more than
	 * one colour, each counting the rectangle's width, published at
	 * commit. A program drawing tells itself from a window still showing
	 * only its background fill, or from the server's pointer. */
	uint64_t drawn_pixels, pending_drawn;
	int64_t last_change_ms;
	bool pending_damage;
	bool closed;
	/* Since a resize (and at first) the picture is blank until the
	 * server's first update with pixels in it is complete (updates that
	 * carry only the pointer's shape come first). */
	bool awaiting_picture;
	bool pixels_since_resize;

	/* The change log, a ring indexed by serial. The newest entry may
	 * still grow (a server sends a write as many bands) until sealed.
	 * Views see the changes of complete updates only (before
	 * committed_serial): half an update, shown, is a torn picture and
	 * its other half sent again. */
	struct vnc_framebuffer_change *changes;
	uint64_t change_serial, committed_serial;
	bool change_sealed;

	uint8_t *cursor_rgba;
	bool cursor_shape_known;    /* false until the server sends a shape */
	bool cursor_position_known; /* false until we move it or the server says */
	int cursor_width, cursor_height, cursor_hot_x, cursor_hot_y;
	int cursor_x, cursor_y;

	void (*listener)(void *context);
	void *listener_context;
};

struct vnc_framebuffer *vnc_framebuffer_create(void)
{
	struct vnc_framebuffer *fb = calloc(1, sizeof(*fb));
	if (!fb)
		return NULL;
	fb->changes = calloc(VNC_FRAMEBUFFER_CHANGES, sizeof(*fb->changes));
	if (!fb->changes) {
		free(fb);
		return NULL;
	}
	clock_cond_init(&fb->changed);
	pthread_mutex_init(&fb->lock, NULL);
	fb->last_change_ms = clock_monotonic_ms();
	return fb;
}

void vnc_framebuffer_destroy(struct vnc_framebuffer *fb)
{
	if (!fb)
		return;
	pthread_cond_destroy(&fb->changed);
	pthread_mutex_destroy(&fb->lock);
	free(fb->pixels);
	free(fb->row_version);
	free(fb->cursor_rgba);
	free(fb->changes);
	free(fb);
}

static bool contains(const struct vnc_rect *outer, const struct vnc_rect *inner)
{
	return inner->x >= outer->x && inner->y >= outer->y &&
	       inner->x + inner->width <= outer->x + outer->width &&
	       inner->y + inner->height <= outer->y + outer->height;
}

static void log_change_locked(struct vnc_framebuffer *fb, const struct vnc_framebuffer_change *c)
{
	if (fb->change_serial > 0 && !fb->change_sealed && !c->copy) {
		/* Bands of one write (same columns, one below the other) or a
		 * part of the last write grow the newest entry instead. */
		struct vnc_framebuffer_change *last =
			&fb->changes[(fb->change_serial - 1) % VNC_FRAMEBUFFER_CHANGES];
		if (!last->copy && contains(&last->rect, &c->rect))
			return;
		if (!last->copy && last->rect.x == c->rect.x && last->rect.width == c->rect.width &&
		    last->rect.y + last->rect.height == c->rect.y) {
			last->rect.height += c->rect.height;
			return;
		}
	}
	fb->changes[fb->change_serial % VNC_FRAMEBUFFER_CHANGES] = *c;
	fb->change_serial++;
	fb->change_sealed = false;
}

bool vnc_framebuffer_resize(struct vnc_framebuffer *fb, int width, int height)
{
	if (width <= 0 || height <= 0 || width > VNC_MAX_SCREEN_SIDE ||
	    height > VNC_MAX_SCREEN_SIDE)
		return false;
	uint8_t *pixels = calloc((size_t)width * height, 4);
	uint64_t *row_version = calloc((size_t)height, sizeof(*row_version));
	if (!pixels || !row_version) {
		free(pixels);
		free(row_version);
		return false;
	}
	pthread_mutex_lock(&fb->lock);
	free(fb->pixels);
	free(fb->row_version);
	fb->pixels = pixels;
	fb->row_version = row_version;
	fb->width = width;
	fb->height = height;
	fb->awaiting_picture = true;
	fb->pixels_since_resize = false;
	fb->write_version++;
	for (int y = 0; y < height; y++)
		row_version[y] = fb->write_version;
	fb->change_sealed = true;
	log_change_locked(fb, &(struct vnc_framebuffer_change){ .rect = { 0, 0, width, height } });
	fb->pending_damage = true;
	pthread_mutex_unlock(&fb->lock);
	return true;
}

bool vnc_one_colour(const uint8_t *origin, size_t stride, int width, int height)
{
	uint32_t first, mask = 0, p;
	memcpy(&mask, (const uint8_t[4]){ 255, 255, 255, 0 }, 4);
	memcpy(&first, origin, 4);
	first &= mask;
	for (int row = 0; row < height; row++) {
		const uint8_t *line = origin + (size_t)row * stride;
		uint32_t differs = 0;
		for (int col = 0; col < width; col++) {
			memcpy(&p, line + (size_t)col * 4, 4);
			differs |= (p & mask) ^ first;
		}
		if (differs)
			return false;
	}
	return true;
}

#define RUN_GAP_ROWS 16

/* The first and last of width pixels that differ between a and b; width
 * when none does. */
static int first_difference(const uint8_t *a, const uint8_t *b, int width)
{
	if (memcmp(a, b, (size_t)width * 4) == 0)
		return width;
	int x = 0;
	while (memcmp(a + (size_t)x * 4, b + (size_t)x * 4, 4) == 0)
		x++;
	return x;
}

static int last_difference(const uint8_t *a, const uint8_t *b, int width)
{
	int x = width - 1;
	while (x > 0 && memcmp(a + (size_t)x * 4, b + (size_t)x * 4, 4) == 0)
		x--;
	return x;
}

/* B, G, R, X to R, G, B, X. */
static const uint8_t *reorder_row(uint8_t *out, const uint8_t *row, int width)
{
	for (int i = 0; i < width; i++, row += 4, out += 4) {
		out[0] = row[2];
		out[1] = row[1];
		out[2] = row[0];
		out[3] = row[3];
	}
	return out - (size_t)width * 4;
}

static void write_rect(struct vnc_framebuffer *fb, const uint8_t *src, int src_stride, int x, int y,
		       int width, int height, bool bgrx)
{
	/* src belongs to the calling (connection) thread: no lock needed. */
	bool drawing = width > 0 && height > 0 && x >= 0 && y >= 0 &&
		       !vnc_one_colour(src + (size_t)y * src_stride + (size_t)x * 4,
				       (size_t)src_stride, width, height);
	pthread_mutex_lock(&fb->lock);
	/* The server is outside our trust boundary: clip what it claims. */
	if (x < 0 || y < 0 || width <= 0 || height <= 0 || x >= fb->width || y >= fb->height) {
		pthread_mutex_unlock(&fb->lock);
		return;
	}
	if (width > fb->width - x)
		width = fb->width - x;
	if (height > fb->height - y)
		height = fb->height - y;
	size_t stride = (size_t)fb->width * 4;
	fb->write_version++;
	fb->pixels_since_resize = true;
	/* Servers resend pixels that did not change (a window mapped with the
	 * colour already there, a repaint of the same text): only rows that
	 * really differ count as damage, for settling and for encoders. */
	/* The log gets the box around what differs, per run of changed rows:
	 * a server's rectangles are blocks (64x64 for TigerVNC) of which a
	 * clock or a counter changes a few pixels. Runs closer than
	 * RUN_GAP_ROWS join, which bounds the entries a write makes. */
	struct vnc_rect run = { 0, 0, 0, 0 };
	int unchanged = 0; /* rows since the run's last changed one */
	for (int row = 0; row <= height; row++) {
		int first = width, last = 0; /* past the last row: the run ends */
		if (row < height) {
			uint8_t *dst = fb->pixels + (size_t)(y + row) * stride + (size_t)x * 4;
			const uint8_t *from = src + (size_t)(y + row) * src_stride + (size_t)x * 4;
			if (bgrx)
				from = reorder_row(fb->reordered, from, width);
			first = first_difference(dst, from, width);
			if (first < width) {
				last = last_difference(dst, from, width);
				memcpy(dst, from, (size_t)width * 4);
				fb->row_version[y + row] = fb->write_version;
				fb->pending_damage = true;
				if (drawing)
					fb->pending_drawn += (uint64_t)width;
			}
		}
		if (first == width) {
			if (run.height > 0 && (++unchanged >= RUN_GAP_ROWS || row == height)) {
				log_change_locked(fb,
						  &(struct vnc_framebuffer_change){ .rect = run });
				run.height = 0;
			}
			continue;
		}
		unchanged = 0;
		if (run.height == 0) {
			run = (struct vnc_rect){ x + first, y + row, last - first + 1, 1 };
			continue;
		}
		int left = run.x < x + first ? run.x : x + first;
		int right = run.x + run.width > x + last + 1 ? run.x + run.width : x + last + 1;
		run = (struct vnc_rect){ left, run.y, right - left, y + row - run.y + 1 };
	}
	pthread_mutex_unlock(&fb->lock);
}

void vnc_framebuffer_write_rect(struct vnc_framebuffer *fb, const uint8_t *src, int src_stride,
				int x, int y, int width, int height)
{
	write_rect(fb, src, src_stride, x, y, width, height, false);
}

void vnc_framebuffer_write_rect_bgrx(struct vnc_framebuffer *fb, const uint8_t *src, int src_stride,
				     int x, int y, int width, int height)
{
	write_rect(fb, src, src_stride, x, y, width, height, true);
}

bool vnc_framebuffer_copy_rect(struct vnc_framebuffer *fb, int src_x, int src_y,
			       const struct vnc_rect *dest)
{
	pthread_mutex_lock(&fb->lock);
	const struct vnc_rect screen = { 0, 0, fb->width, fb->height };
	const struct vnc_rect source = { src_x, src_y, dest->width, dest->height };
	if (dest->width <= 0 || dest->height <= 0 || !contains(&screen, dest) ||
	    !contains(&screen, &source)) {
		pthread_mutex_unlock(&fb->lock);
		return false;
	}
	size_t stride = (size_t)fb->width * 4, len = (size_t)dest->width * 4;
	/* Rows in the order that never reads a row already overwritten;
	 * memmove handles the overlap within a row. */
	bool upward = dest->y > src_y;
	fb->write_version++;
	for (int i = 0; i < dest->height; i++) {
		int row = upward ? dest->height - 1 - i : i;
		memmove(fb->pixels + (size_t)(dest->y + row) * stride + (size_t)dest->x * 4,
			fb->pixels + (size_t)(src_y + row) * stride + (size_t)src_x * 4, len);
		fb->row_version[dest->y + row] = fb->write_version;
	}
	log_change_locked(fb,
			  &(struct vnc_framebuffer_change){
				  .rect = *dest, .copy = true, .src_x = src_x, .src_y = src_y });
	fb->pending_damage = true;
	pthread_mutex_unlock(&fb->lock);
	return true;
}

static void note_change_locked(struct vnc_framebuffer *fb)
{
	fb->sequence++;
	fb->last_change_ms = clock_monotonic_ms();
	pthread_cond_broadcast(&fb->changed);
	if (fb->listener)
		fb->listener(fb->listener_context);
}

void vnc_framebuffer_set_listener(struct vnc_framebuffer *fb, void (*listener)(void *context),
				  void *context)
{
	pthread_mutex_lock(&fb->lock);
	fb->listener = listener;
	fb->listener_context = context;
	pthread_mutex_unlock(&fb->lock);
}

void vnc_framebuffer_commit(struct vnc_framebuffer *fb)
{
	pthread_mutex_lock(&fb->lock);
	fb->committed_serial = fb->change_serial;
	fb->change_sealed = true; /* what views may see never grows */
	if (fb->pixels_since_resize && fb->awaiting_picture) {
		fb->awaiting_picture = false;
		pthread_cond_broadcast(&fb->changed);
	}
	if (fb->pending_damage) {
		fb->pending_damage = false;
		fb->drawn_pixels += fb->pending_drawn;
		fb->pending_drawn = 0;
		note_change_locked(fb);
	}
	pthread_mutex_unlock(&fb->lock);
}

void vnc_framebuffer_set_cursor_shape(struct vnc_framebuffer *fb, const uint8_t *rgba, int width,
				      int height, int hot_x, int hot_y)
{
	uint8_t *copy = NULL;
	if (width > 0 && height > 0 && width <= 256 && height <= 256) {
		copy = malloc((size_t)width * height * 4);
		if (copy)
			memcpy(copy, rgba, (size_t)width * height * 4);
	}
	pthread_mutex_lock(&fb->lock);
	free(fb->cursor_rgba);
	fb->cursor_rgba = copy;
	fb->cursor_width = copy ? width : 0;
	fb->cursor_height = copy ? height : 0;
	fb->cursor_hot_x = hot_x;
	fb->cursor_hot_y = hot_y;
	fb->cursor_shape_known = true;
	fb->cursor_version++;
	fb->cursor_shape_version++;
	note_change_locked(fb);
	pthread_mutex_unlock(&fb->lock);
}

void vnc_framebuffer_set_cursor_position(struct vnc_framebuffer *fb, int x, int y)
{
	pthread_mutex_lock(&fb->lock);
	if (x != fb->cursor_x || y != fb->cursor_y || !fb->cursor_position_known) {
		fb->cursor_position_known = true;
		fb->cursor_x = x;
		fb->cursor_y = y;
		fb->cursor_version++;
		note_change_locked(fb);
	}
	pthread_mutex_unlock(&fb->lock);
}

void vnc_framebuffer_close(struct vnc_framebuffer *fb)
{
	pthread_mutex_lock(&fb->lock);
	fb->closed = true;
	pthread_cond_broadcast(&fb->changed);
	if (fb->listener)
		fb->listener(fb->listener_context);
	pthread_mutex_unlock(&fb->lock);
}

void vnc_framebuffer_reopen(struct vnc_framebuffer *fb)
{
	pthread_mutex_lock(&fb->lock);
	fb->closed = false;
	pthread_mutex_unlock(&fb->lock);
}

void vnc_framebuffer_size(struct vnc_framebuffer *fb, int *width, int *height)
{
	pthread_mutex_lock(&fb->lock);
	*width = fb->width;
	*height = fb->height;
	pthread_mutex_unlock(&fb->lock);
}

void vnc_framebuffer_cursor_position(struct vnc_framebuffer *fb, int *x, int *y)
{
	pthread_mutex_lock(&fb->lock);
	*x = fb->cursor_x;
	*y = fb->cursor_y;
	pthread_mutex_unlock(&fb->lock);
}

uint64_t vnc_framebuffer_sequence(struct vnc_framebuffer *fb)
{
	pthread_mutex_lock(&fb->lock);
	uint64_t sequence = fb->sequence;
	pthread_mutex_unlock(&fb->lock);
	return sequence;
}

/* Servers send the pointer shape only when it changes, so until the first
 * change we draw a plain arrow: a screenshot without any pointer would
 * hide where the next click lands. '#' is black, '-' white. */
static const char *const default_arrow[] = {
	"#           ", "##          ", "#-#         ", "#--#        ", "#---#       ",
	"#----#      ", "#-----#     ", "#------#    ", "#-------#   ", "#--------#  ",
	"#---------# ", "#------#####", "#---#--#    ", "#--# #--#   ", "#-#  #--#   ",
	"##    #--#  ", "#     #--#  ", "       ##   ",
};
#define ARROW_WIDTH 12
#define ARROW_HEIGHT ((int)(sizeof(default_arrow) / sizeof(default_arrow[0])))

void vnc_framebuffer_lock_view(struct vnc_framebuffer *fb, struct vnc_framebuffer_view *view)
{
	pthread_mutex_lock(&fb->lock);
	view->pixels = fb->pixels;
	view->width = fb->width;
	view->height = fb->height;
	view->row_version = fb->row_version;
	view->sequence = fb->sequence;
	view->cursor_version = fb->cursor_version;
	view->cursor_shape_version = fb->cursor_shape_version;
	view->change_serial = fb->committed_serial;
	view->fb = fb;
	if (!fb->cursor_position_known) {
		/* Nothing to draw: where it is is unknown, and servers show the
		 * pointer in the picture themselves while that is so. */
		view->cursor = (struct vnc_rect){ 0, 0, 0, 0 };
	} else if (!fb->cursor_shape_known) {
		view->cursor = (struct vnc_rect){ fb->cursor_x, fb->cursor_y, ARROW_WIDTH,
						  ARROW_HEIGHT };
	} else {
		view->cursor = (struct vnc_rect){ fb->cursor_x - fb->cursor_hot_x,
						  fb->cursor_y - fb->cursor_hot_y, fb->cursor_width,
						  fb->cursor_height };
	}
}

bool vnc_framebuffer_view_change(const struct vnc_framebuffer_view *view, uint64_t serial,
				 struct vnc_framebuffer_change *out)
{
	if (serial >= view->change_serial || view->change_serial - serial > VNC_FRAMEBUFFER_CHANGES)
		return false;
	*out = view->fb->changes[serial % VNC_FRAMEBUFFER_CHANGES];
	return true;
}

void vnc_framebuffer_unlock_view(struct vnc_framebuffer_view *view)
{
	pthread_mutex_unlock(&view->fb->lock);
}

/* opaque: the fourth byte is alpha, set where the pointer is drawn. */
static void put_pixel(uint8_t *dst, int stride, const struct vnc_rect *area, int x, int y,
		      const uint8_t rgb[3], bool opaque)
{
	x -= area->x;
	y -= area->y;
	if (x < 0 || y < 0 || x >= area->width || y >= area->height)
		return;
	memcpy(dst + (size_t)y * stride + (size_t)x * 4, rgb, 3);
	if (opaque)
		dst[(size_t)y * stride + (size_t)x * 4 + 3] = 255;
}

static void draw_cursor(const struct vnc_framebuffer_view *view, uint8_t *dst, int dst_stride,
			const struct vnc_rect *area, bool opaque)
{
	const struct vnc_framebuffer *fb = view->fb;
	if (!fb->cursor_position_known)
		return;
	if (!fb->cursor_shape_known) {
		static const uint8_t black[3] = { 0, 0, 0 }, white[3] = { 255, 255, 255 };
		for (int cy = 0; cy < ARROW_HEIGHT; cy++)
			for (int cx = 0; default_arrow[cy][cx]; cx++)
				if (default_arrow[cy][cx] != ' ')
					put_pixel(dst, dst_stride, area, view->cursor.x + cx,
						  view->cursor.y + cy,
						  default_arrow[cy][cx] == '#' ? black : white,
						  opaque);
		return;
	}
	for (int cy = 0; cy < fb->cursor_height; cy++) {
		for (int cx = 0; cx < fb->cursor_width; cx++) {
			const uint8_t *src = fb->cursor_rgba +
					     ((size_t)cy * fb->cursor_width + cx) * 4;
			if (src[3] != 0)
				put_pixel(dst, dst_stride, area, view->cursor.x + cx,
					  view->cursor.y + cy, src, opaque);
		}
	}
}

void vnc_framebuffer_view_draw_cursor(const struct vnc_framebuffer_view *view, uint8_t *dst,
				      int dst_stride, const struct vnc_rect *area)
{
	draw_cursor(view, dst, dst_stride, area, false);
}

void vnc_framebuffer_view_cursor_image(const struct vnc_framebuffer_view *view, uint8_t *rgba)
{
	memset(rgba, 0, (size_t)view->cursor.width * view->cursor.height * 4);
	draw_cursor(view, rgba, view->cursor.width * 4, &view->cursor, true);
}

bool vnc_framebuffer_snapshot(struct vnc_framebuffer *fb, const struct vnc_rect *region,
			      bool with_cursor, struct vnc_image *out, uint64_t *sequence)
{
	memset(out, 0, sizeof(*out));
	struct vnc_framebuffer_view view;
	vnc_framebuffer_lock_view(fb, &view);
	struct vnc_rect r = { 0, 0, view.width, view.height };
	if (region)
		r = *region;
	if (view.width <= 0 || r.x < 0 || r.y < 0 || r.width <= 0 || r.height <= 0 ||
	    r.x + r.width > view.width || r.y + r.height > view.height)
		goto refuse;
	out->pixels = malloc((size_t)r.width * r.height * 4);
	if (!out->pixels)
		goto refuse;
	out->width = r.width;
	out->height = r.height;
	size_t stride = (size_t)view.width * 4;
	for (int row = 0; row < r.height; row++)
		memcpy(out->pixels + (size_t)row * r.width * 4,
		       view.pixels + (size_t)(r.y + row) * stride + (size_t)r.x * 4,
		       (size_t)r.width * 4);
	if (with_cursor)
		vnc_framebuffer_view_draw_cursor(&view, out->pixels, r.width * 4, &r);
	if (sequence)
		*sequence = view.sequence;
	vnc_framebuffer_unlock_view(&view);
	return true;

refuse:
	vnc_framebuffer_unlock_view(&view);
	return false;
}

void vnc_image_finish(struct vnc_image *image)
{
	free(image->pixels);
	image->pixels = NULL;
	image->width = image->height = 0;
}

/* Waits until *counter (a field of fb, read under its lock) passes value. */
static enum vnc_wait_result wait_counter_after(struct vnc_framebuffer *fb, const uint64_t *counter,
					       uint64_t value, int timeout_ms)
{
	struct timespec deadline = clock_deadline_ms(timeout_ms);
	enum vnc_wait_result result = VNC_WAIT_OK;
	pthread_mutex_lock(&fb->lock);
	while (*counter <= value && !fb->closed) {
		if (pthread_cond_timedwait(&fb->changed, &fb->lock, &deadline) == ETIMEDOUT) {
			result = VNC_WAIT_TIMEOUT;
			break;
		}
	}
	if (*counter <= value && fb->closed)
		result = VNC_WAIT_CLOSED;
	pthread_mutex_unlock(&fb->lock);
	return result;
}

enum vnc_wait_result vnc_framebuffer_wait_picture(struct vnc_framebuffer *fb, int timeout_ms)
{
	struct timespec deadline = clock_deadline_ms(timeout_ms);
	enum vnc_wait_result result = VNC_WAIT_OK;
	pthread_mutex_lock(&fb->lock);
	while ((fb->awaiting_picture || fb->width <= 0) && result == VNC_WAIT_OK) {
		if (fb->closed)
			result = VNC_WAIT_CLOSED;
		else if (pthread_cond_timedwait(&fb->changed, &fb->lock, &deadline) == ETIMEDOUT)
			result = VNC_WAIT_TIMEOUT;
	}
	pthread_mutex_unlock(&fb->lock);
	return result;
}

enum vnc_wait_result vnc_framebuffer_wait_frame_after(struct vnc_framebuffer *fb, uint64_t sequence,
						      int timeout_ms)
{
	return wait_counter_after(fb, &fb->sequence, sequence, timeout_ms);
}

uint64_t vnc_framebuffer_drawn_pixels(struct vnc_framebuffer *fb)
{
	pthread_mutex_lock(&fb->lock);
	uint64_t count = fb->drawn_pixels;
	pthread_mutex_unlock(&fb->lock);
	return count;
}

enum vnc_wait_result vnc_framebuffer_wait_drawn(struct vnc_framebuffer *fb, uint64_t drawn_pixels,
						uint64_t at_least, int timeout_ms)
{
	return wait_counter_after(fb, &fb->drawn_pixels, drawn_pixels + at_least - 1, timeout_ms);
}

enum vnc_wait_result vnc_framebuffer_wait_settled(struct vnc_framebuffer *fb, int64_t since_ms,
						  int quiet_ms, int timeout_ms)
{
	int64_t give_up = clock_monotonic_ms() + timeout_ms;
	enum vnc_wait_result result = VNC_WAIT_OK;
	pthread_mutex_lock(&fb->lock);
	for (;;) {
		if (fb->closed) {
			result = VNC_WAIT_CLOSED;
			break;
		}
		int64_t now = clock_monotonic_ms();
		int64_t quiet_from = fb->last_change_ms > since_ms ? fb->last_change_ms : since_ms;
		int64_t quiet_until = quiet_from + quiet_ms;
		if (now >= quiet_until)
			break;
		if (now >= give_up) {
			result = VNC_WAIT_TIMEOUT;
			break;
		}
		int64_t wake = quiet_until < give_up ? quiet_until : give_up;
		struct timespec deadline = clock_deadline_ms(wake - now);
		pthread_cond_timedwait(&fb->changed, &fb->lock, &deadline);
	}
	pthread_mutex_unlock(&fb->lock);
	return result;
}
