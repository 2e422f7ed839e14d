#include "framebuffer.h"

#include "../util/clock.h"

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
	/* Per row, the write that last touched it, so encoders can redo only
	 * what changed. write_version only grows, also across resizes. */
	uint64_t *row_version;
	uint64_t write_version;
	uint64_t cursor_version;

	uint64_t sequence;
	/* Pixels drawn so far: changed rows of rectangles holding more than
	 * one colour, each counting the rectangle's width, published at
	 * commit. A program drawing tells itself from a window still showing
	 * only its background fill, or from the server's pointer. */
	uint64_t drawn_pixels, pending_drawn;
	int64_t last_change_ms;
	bool pending_damage;
	bool closed;

	uint8_t *cursor_rgba;
	bool cursor_shape_known; /* false until the server sends a shape */
	bool cursor_position_known; /* false until we move it or the server says */
	int cursor_width, cursor_height, cursor_hot_x, cursor_hot_y;
	int cursor_x, cursor_y;
};

int64_t vnc_monotonic_ms(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

struct vnc_framebuffer *vnc_framebuffer_create(void)
{
	struct vnc_framebuffer *fb = calloc(1, sizeof(*fb));
	if (!fb)
		return NULL;
	clock_cond_init(&fb->changed);
	pthread_mutex_init(&fb->lock, NULL);
	fb->last_change_ms = vnc_monotonic_ms();
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
	free(fb);
}

bool vnc_framebuffer_resize(struct vnc_framebuffer *fb, int width, int height)
{
	if (width <= 0 || height <= 0 || width > 16384 || height > 16384)
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
	fb->write_version++;
	for (int y = 0; y < height; y++)
		row_version[y] = fb->write_version;
	fb->pending_damage = true;
	pthread_mutex_unlock(&fb->lock);
	return true;
}

/* Whether every pixel of the rectangle has the colour of its first one
 * (the padding byte aside). */
static bool one_colour(const uint8_t *src, int src_stride, int x, int y, int width, int height)
{
	const uint8_t *first = src + (size_t)y * src_stride + (size_t)x * 4;
	for (int row = 0; row < height; row++) {
		const uint8_t *p = src + (size_t)(y + row) * src_stride + (size_t)x * 4;
		for (int col = 0; col < width; col++, p += 4)
			if (p[0] != first[0] || p[1] != first[1] || p[2] != first[2])
				return false;
	}
	return true;
}

void vnc_framebuffer_write_rect(struct vnc_framebuffer *fb, const uint8_t *src,
				int src_stride, int x, int y, int width, int height)
{
	/* src belongs to the calling (connection) thread: no lock needed. */
	bool drawing = width > 0 && height > 0 && x >= 0 && y >= 0 &&
		       !one_colour(src, src_stride, x, y, width, height);
	pthread_mutex_lock(&fb->lock);
	/* The server is outside our trust boundary: clip what it claims. */
	if (x < 0 || y < 0 || width <= 0 || height <= 0 || x >= fb->width ||
	    y >= fb->height) {
		pthread_mutex_unlock(&fb->lock);
		return;
	}
	if (width > fb->width - x)
		width = fb->width - x;
	if (height > fb->height - y)
		height = fb->height - y;
	size_t stride = (size_t)fb->width * 4;
	fb->write_version++;
	/* Servers resend pixels that did not change (a window mapped with the
	 * colour already there, a repaint of the same text): only rows that
	 * really differ count as damage, for settling and for encoders. */
	for (int row = 0; row < height; row++) {
		uint8_t *dst = fb->pixels + (size_t)(y + row) * stride + (size_t)x * 4;
		const uint8_t *from = src + (size_t)(y + row) * src_stride + (size_t)x * 4;
		if (memcmp(dst, from, (size_t)width * 4) == 0)
			continue;
		memcpy(dst, from, (size_t)width * 4);
		fb->row_version[y + row] = fb->write_version;
		fb->pending_damage = true;
		if (drawing)
			fb->pending_drawn += (uint64_t)width;
	}
	pthread_mutex_unlock(&fb->lock);
}

static void note_change_locked(struct vnc_framebuffer *fb)
{
	fb->sequence++;
	fb->last_change_ms = vnc_monotonic_ms();
	pthread_cond_broadcast(&fb->changed);
}

void vnc_framebuffer_commit(struct vnc_framebuffer *fb)
{
	pthread_mutex_lock(&fb->lock);
	if (fb->pending_damage) {
		fb->pending_damage = false;
		fb->drawn_pixels += fb->pending_drawn;
		fb->pending_drawn = 0;
		note_change_locked(fb);
	}
	pthread_mutex_unlock(&fb->lock);
}

void vnc_framebuffer_set_cursor_shape(struct vnc_framebuffer *fb, const uint8_t *rgba,
				      int width, int height, int hot_x, int hot_y)
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
	view->fb = fb;
	if (!fb->cursor_position_known) {
		/* Nothing to draw: where it is is unknown, and servers show the
		 * pointer in the picture themselves while that is so. */
		view->cursor = (struct vnc_rect){ 0, 0, 0, 0 };
	} else if (!fb->cursor_shape_known) {
		view->cursor = (struct vnc_rect){ fb->cursor_x, fb->cursor_y, ARROW_WIDTH, ARROW_HEIGHT };
	} else {
		view->cursor = (struct vnc_rect){ fb->cursor_x - fb->cursor_hot_x,
						  fb->cursor_y - fb->cursor_hot_y, fb->cursor_width,
						  fb->cursor_height };
	}
}

void vnc_framebuffer_unlock_view(struct vnc_framebuffer_view *view)
{
	pthread_mutex_unlock(&view->fb->lock);
}

static void put_pixel(uint8_t *dst, int stride, const struct vnc_rect *area, int x, int y,
		      const uint8_t rgb[3])
{
	x -= area->x;
	y -= area->y;
	if (x < 0 || y < 0 || x >= area->width || y >= area->height)
		return;
	memcpy(dst + (size_t)y * stride + (size_t)x * 4, rgb, 3);
}

void vnc_framebuffer_view_draw_cursor(const struct vnc_framebuffer_view *view, uint8_t *dst,
				      int dst_stride, const struct vnc_rect *area)
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
						  default_arrow[cy][cx] == '#' ? black : white);
		return;
	}
	for (int cy = 0; cy < fb->cursor_height; cy++) {
		for (int cx = 0; cx < fb->cursor_width; cx++) {
			const uint8_t *src = fb->cursor_rgba + ((size_t)cy * fb->cursor_width + cx) * 4;
			if (src[3] != 0)
				put_pixel(dst, dst_stride, area, view->cursor.x + cx, view->cursor.y + cy,
					  src);
		}
	}
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

enum vnc_wait_result vnc_framebuffer_wait_frame_after(struct vnc_framebuffer *fb,
						      uint64_t sequence, int timeout_ms)
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
	int64_t give_up = vnc_monotonic_ms() + timeout_ms;
	enum vnc_wait_result result = VNC_WAIT_OK;
	pthread_mutex_lock(&fb->lock);
	for (;;) {
		if (fb->closed) {
			result = VNC_WAIT_CLOSED;
			break;
		}
		int64_t now = vnc_monotonic_ms();
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
