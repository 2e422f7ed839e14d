/* Frame counters and waits of vnc/framebuffer.c: drawn pixels are counted
 * apart from pointer changes, background fills and pixels resent
 * unchanged, and a wait wakes once enough have been drawn. The change log
 * holds what differs, and scrolled rows as a copy. */
#include "test.h"

#include "../../vnc/framebuffer.h"

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#define SIDE 8

/* Publishes a 4x4 square at (0, 0): one grey level, or a checkerboard of
 * two when pattern is set. */
static void paint_square(struct vnc_framebuffer *fb, uint8_t level, bool pattern)
{
	uint8_t square[SIDE * SIDE * 4];
	for (int i = 0; i < SIDE * SIDE; i++)
		memset(square + i * 4, pattern && (i + i / SIDE) % 2 ? level / 2 : level, 4);
	vnc_framebuffer_write_rect(fb, square, SIDE * 4, 0, 0, 4, 4);
	vnc_framebuffer_commit(fb);
}

static void test_only_drawing_counts(void)
{
	struct vnc_framebuffer *fb = vnc_framebuffer_create();
	ASSERT(vnc_framebuffer_resize(fb, SIDE, SIDE));
	vnc_framebuffer_commit(fb);
	uint64_t drawn = vnc_framebuffer_drawn_pixels(fb);
	uint64_t frames = vnc_framebuffer_sequence(fb);

	/* The pointer moving or changing shape is a frame, but no drawing. */
	uint8_t shape[2 * 2 * 4] = { 0 };
	vnc_framebuffer_set_cursor_shape(fb, shape, 2, 2, 0, 0);
	vnc_framebuffer_set_cursor_position(fb, 3, 4);
	ASSERT_EQ(vnc_framebuffer_sequence(fb), frames + 2);
	ASSERT_EQ(vnc_framebuffer_drawn_pixels(fb), drawn);
	ASSERT_EQ(vnc_framebuffer_wait_drawn(fb, drawn, 1, 50), VNC_WAIT_TIMEOUT);
	ASSERT_EQ(vnc_framebuffer_wait_frame_after(fb, frames, 50), VNC_WAIT_OK);

	/* Resending what is there changes nothing, not even the frame count. */
	frames = vnc_framebuffer_sequence(fb);
	paint_square(fb, 0, false);
	ASSERT_EQ(vnc_framebuffer_sequence(fb), frames);

	/* A flat fill is a change (settling sees it) but not drawing. */
	paint_square(fb, 240, false);
	ASSERT_EQ(vnc_framebuffer_sequence(fb), frames + 1);
	ASSERT_EQ(vnc_framebuffer_drawn_pixels(fb), drawn);

	paint_square(fb, 100, true);
	ASSERT_EQ(vnc_framebuffer_drawn_pixels(fb), drawn + 16);
	ASSERT_EQ(vnc_framebuffer_wait_drawn(fb, drawn, 16, 50), VNC_WAIT_OK);
	ASSERT_EQ(vnc_framebuffer_wait_drawn(fb, drawn, 17, 50), VNC_WAIT_TIMEOUT);
	vnc_framebuffer_destroy(fb);
}

static void *paint_later(void *arg)
{
	struct timespec pause = { 0, 100 * 1000000L };
	nanosleep(&pause, NULL);
	paint_square(arg, 200, true);
	return NULL;
}

static void *close_later(void *arg)
{
	struct timespec pause = { 0, 100 * 1000000L };
	nanosleep(&pause, NULL);
	vnc_framebuffer_close(arg);
	return NULL;
}

static void test_drawn_wait_wakes_on_paint_and_close(void)
{
	struct vnc_framebuffer *fb = vnc_framebuffer_create();
	ASSERT(vnc_framebuffer_resize(fb, SIDE, SIDE));
	vnc_framebuffer_commit(fb);
	uint64_t drawn = vnc_framebuffer_drawn_pixels(fb);
	pthread_t thread;
	pthread_create(&thread, NULL, paint_later, fb);
	/* The deadline is for robustness only; the paint comes long before. */
	enum vnc_wait_result r = vnc_framebuffer_wait_drawn(fb, drawn, 16, 10000);
	pthread_join(thread, NULL);
	ASSERT_EQ(r, VNC_WAIT_OK);

	drawn = vnc_framebuffer_drawn_pixels(fb);
	pthread_create(&thread, NULL, close_later, fb);
	r = vnc_framebuffer_wait_drawn(fb, drawn, 1, 10000);
	pthread_join(thread, NULL);
	ASSERT_EQ(r, VNC_WAIT_CLOSED);
	vnc_framebuffer_destroy(fb);
}

static void count_call(void *context)
{
	(*(int *)context)++;
}

/* The viewer hub sleeps until told: every committed frame, pointer move
 * and close tells it, and nothing does once the listener is removed. */
static void test_listener_hears_frames_pointer_and_close(void)
{
	struct vnc_framebuffer *fb = vnc_framebuffer_create();
	ASSERT(vnc_framebuffer_resize(fb, 64, 64));
	int calls = 0;
	vnc_framebuffer_set_listener(fb, count_call, &calls);
	paint_square(fb, 200, true);
	ASSERT_EQ(calls, 1);
	vnc_framebuffer_commit(fb); /* nothing new: no frame, no call */
	ASSERT_EQ(calls, 1);
	vnc_framebuffer_set_cursor_position(fb, 5, 6);
	ASSERT_EQ(calls, 2);
	vnc_framebuffer_close(fb);
	ASSERT_EQ(calls, 3);
	vnc_framebuffer_set_listener(fb, NULL, NULL);
	vnc_framebuffer_reopen(fb);
	paint_square(fb, 10, true);
	ASSERT_EQ(calls, 3);
	vnc_framebuffer_destroy(fb);
}

/* A server resends a block of which three pixels changed: viewers are
 * told the box around each run of changed rows, not the block. */
static void test_change_log_holds_what_differs(void)
{
	struct vnc_framebuffer *fb = vnc_framebuffer_create();
	ASSERT(vnc_framebuffer_resize(fb, 64, 64));
	uint8_t block[64 * 64 * 4] = { 0 };
	vnc_framebuffer_write_rect(fb, block, 64 * 4, 0, 0, 64, 64); /* the same: no change */
	vnc_framebuffer_commit(fb);
	struct vnc_framebuffer_view view;
	vnc_framebuffer_lock_view(fb, &view);
	uint64_t serial = view.change_serial;
	vnc_framebuffer_unlock_view(&view);
	block[(10 * 64 + 20) * 4] = 9;
	block[(11 * 64 + 7) * 4 + 2] = 9;
	block[(40 * 64 + 30) * 4 + 1] = 9;
	vnc_framebuffer_write_rect(fb, block, 64 * 4, 0, 0, 64, 64);
	vnc_framebuffer_commit(fb);
	vnc_framebuffer_lock_view(fb, &view);
	struct vnc_framebuffer_change first, second;
	ASSERT_EQ(view.change_serial, serial + 2);
	ASSERT(vnc_framebuffer_view_change(&view, serial, &first));
	ASSERT(vnc_framebuffer_view_change(&view, serial + 1, &second));
	vnc_framebuffer_unlock_view(&view);
	ASSERT_EQ(first.rect.x, 7);
	ASSERT_EQ(first.rect.y, 10);
	ASSERT_EQ(first.rect.width, 14);
	ASSERT_EQ(first.rect.height, 2);
	ASSERT_EQ(second.rect.x, 30);
	ASSERT_EQ(second.rect.y, 40);
	ASSERT_EQ(second.rect.width, 1);
	ASSERT_EQ(second.rect.height, 1);
	vnc_framebuffer_destroy(fb);
}

/* A page of text lines: row r holds a pattern of its line (r + offset),
 * blank between lines, so no two lines look alike. */
#define PAGE_W 128
#define PAGE_H 96
static void draw_page(uint8_t *pixels, int offset)
{
	memset(pixels, 255, PAGE_W * PAGE_H * 4);
	for (int r = 0; r < PAGE_H; r++) {
		int line = r + offset;
		if (line % 6 == 5)
			continue;
		for (int x = 4 + line % 7; x < PAGE_W - 4; x += 3 + (line * 7 + x) % 5)
			memset(pixels + ((size_t)r * PAGE_W + x) * 4, line * 37 % 200, 3);
	}
}

/* The changes logged since serial, at most max of them; returns how many. */
static int changes_since(struct vnc_framebuffer *fb, uint64_t serial,
			 struct vnc_framebuffer_change *out, int max)
{
	struct vnc_framebuffer_view view;
	vnc_framebuffer_lock_view(fb, &view);
	int n = 0;
	while (n < max && vnc_framebuffer_view_change(&view, serial + n, &out[n]))
		n++;
	vnc_framebuffer_unlock_view(&view);
	return n;
}

static uint64_t next_serial(struct vnc_framebuffer *fb)
{
	struct vnc_framebuffer_view view;
	vnc_framebuffer_lock_view(fb, &view);
	uint64_t serial = view.change_serial;
	vnc_framebuffer_unlock_view(&view);
	return serial;
}

/* A framebuffer showing the page at its first line (drawn into page), or
 * NULL when it could not be made. */
static struct vnc_framebuffer *show_page(uint8_t *page)
{
	struct vnc_framebuffer *fb = vnc_framebuffer_create();
	if (!fb || !vnc_framebuffer_resize(fb, PAGE_W, PAGE_H)) {
		vnc_framebuffer_destroy(fb);
		return NULL;
	}
	draw_page(page, 0);
	vnc_framebuffer_write_rect(fb, page, PAGE_W * 4, 0, 0, PAGE_W, PAGE_H);
	vnc_framebuffer_commit(fb);
	return fb;
}

/* A page scrolled by 20 rows, sent as plain pixels in bands the way a
 * server sends a large area: logged as one copy from 20 rows below, then
 * damage for the 20 new rows only; the picture is the new page. */
static void test_scrolled_rows_become_a_copy(void)
{
	static uint8_t page[PAGE_W * PAGE_H * 4], scrolled[PAGE_W * PAGE_H * 4];
	struct vnc_framebuffer *fb = show_page(page);
	ASSERT(fb);
	uint64_t serial = next_serial(fb);

	draw_page(scrolled, 20);
	for (int band = 0; band < PAGE_H; band += 32)
		vnc_framebuffer_write_rect(fb, scrolled, PAGE_W * 4, 0, band, PAGE_W, 32);
	vnc_framebuffer_commit(fb);
	struct vnc_framebuffer_change c[8];
	int n = changes_since(fb, serial, c, 8);
	ASSERT_EQ(n, 2);
	ASSERT(c[0].copy);
	ASSERT_EQ(c[0].rect.x, 0);
	ASSERT_EQ(c[0].rect.y, 0);
	ASSERT_EQ(c[0].rect.width, PAGE_W);
	ASSERT_EQ(c[0].rect.height, PAGE_H - 20);
	ASSERT_EQ(c[0].src_x, 0);
	ASSERT_EQ(c[0].src_y, 20);
	ASSERT(!c[1].copy);
	ASSERT(c[1].rect.y >= PAGE_H - 20);
	ASSERT(c[1].rect.y + c[1].rect.height == PAGE_H);

	struct vnc_image image;
	ASSERT(vnc_framebuffer_snapshot(fb, NULL, false, &image, NULL));
	ASSERT(memcmp(image.pixels, scrolled, sizeof(scrolled)) == 0);
	vnc_image_finish(&image);
	vnc_framebuffer_destroy(fb);
}

/* New content that is no shift of the old is logged as damage only, and
 * so is a change too small to search. */
static void test_unshifted_change_is_damage(void)
{
	static uint8_t page[PAGE_W * PAGE_H * 4], other[PAGE_W * PAGE_H * 4];
	struct vnc_framebuffer *fb = show_page(page);
	ASSERT(fb);
	uint64_t serial = next_serial(fb);

	draw_page(other, 1000);
	vnc_framebuffer_write_rect(fb, other, PAGE_W * 4, 0, 0, PAGE_W, PAGE_H);
	vnc_framebuffer_commit(fb);
	struct vnc_framebuffer_change c[8];
	int n = changes_since(fb, serial, c, 8);
	ASSERT(n >= 1);
	for (int i = 0; i < n; i++)
		ASSERT(!c[i].copy);

	/* A narrow column scrolled: below the width worth a search. */
	serial = next_serial(fb);
	draw_page(page, 1010);
	vnc_framebuffer_write_rect(fb, page, PAGE_W * 4, 0, 0, 32, PAGE_H);
	vnc_framebuffer_commit(fb);
	n = changes_since(fb, serial, c, 8);
	ASSERT(n >= 1);
	for (int i = 0; i < n; i++)
		ASSERT(!c[i].copy);
	vnc_framebuffer_destroy(fb);
}

int main(void)
{
	RUN_TEST(test_only_drawing_counts);
	RUN_TEST(test_drawn_wait_wakes_on_paint_and_close);
	RUN_TEST(test_listener_hears_frames_pointer_and_close);
	RUN_TEST(test_change_log_holds_what_differs);
	RUN_TEST(test_scrolled_rows_become_a_copy);
	RUN_TEST(test_unshifted_change_is_damage);
	TEST_EXIT();
}
