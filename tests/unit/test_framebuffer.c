/* SPDX-License-Identifier: MIT */
/* Frame counters and waits of vnc/framebuffer.c: drawn pixels are counted
 * apart from pointer changes, background fills and pixels resent
 * unchanged, and a wait wakes once enough have been drawn. */
#include <string.h>
#include "test.h"

#include "vnc/framebuffer.h"

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

/* The serial a view would end at now: the changes of complete updates. */
static uint64_t committed_changes(struct vnc_framebuffer *fb)
{
	struct vnc_framebuffer_view view;
	vnc_framebuffer_lock_view(fb, &view);
	uint64_t serial = view.change_serial;
	vnc_framebuffer_unlock_view(&view);
	return serial;
}

/* A view sees an update's changes once the update is complete, never
 * half of them: a torn picture would go out and its rest after it. */
static void test_views_see_complete_updates(void)
{
	struct vnc_framebuffer *fb = vnc_framebuffer_create();
	ASSERT(vnc_framebuffer_resize(fb, 64, 64));
	vnc_framebuffer_commit(fb);
	uint64_t serial = committed_changes(fb);
	/* The source is a whole screen, as libvncclient's framebuffer is. */
	static uint8_t screen[64 * 64 * 4];
	memset(screen, 200, sizeof(screen));
	vnc_framebuffer_write_rect(fb, screen, 64 * 4, 0, 0, 8, 8);
	ASSERT_EQ(committed_changes(fb), serial); /* mid-update: nothing yet */
	vnc_framebuffer_write_rect(fb, screen, 64 * 4, 0, 8, 8, 8);
	vnc_framebuffer_commit(fb);
	struct vnc_framebuffer_change change;
	struct vnc_framebuffer_view view;
	vnc_framebuffer_lock_view(fb, &view);
	ASSERT_EQ(view.change_serial, serial + 1); /* both bands, as one */
	ASSERT(vnc_framebuffer_view_change(&view, serial, &change));
	vnc_framebuffer_unlock_view(&view);
	ASSERT_EQ(change.rect.height, 16);
	/* The next update's band below starts a change of its own: the one a
	 * view has seen never grows. */
	vnc_framebuffer_write_rect(fb, screen, 64 * 4, 0, 16, 8, 8);
	vnc_framebuffer_commit(fb);
	vnc_framebuffer_lock_view(fb, &view);
	ASSERT_EQ(view.change_serial, serial + 2);
	ASSERT(vnc_framebuffer_view_change(&view, serial, &change));
	vnc_framebuffer_unlock_view(&view);
	ASSERT_EQ(change.rect.height, 16);
	vnc_framebuffer_destroy(fb);
}

/* A server's B, G, R, X pixels land in our R, G, B, X order, and only
 * what differs counts as a change. */
static void test_bgrx_source_is_reordered(void)
{
	struct vnc_framebuffer *fb = vnc_framebuffer_create();
	ASSERT(vnc_framebuffer_resize(fb, 64, 64));
	vnc_framebuffer_commit(fb);
	static uint8_t screen[64 * 64 * 4];
	for (size_t i = 0; i < sizeof(screen); i += 4)
		memcpy(screen + i, (uint8_t[4]){ 30, 20, 10, 0 }, 4); /* B, G, R, X */
	vnc_framebuffer_write_rect_bgrx(fb, screen, 64 * 4, 4, 4, 8, 8);
	vnc_framebuffer_commit(fb);
	struct vnc_framebuffer_view view;
	vnc_framebuffer_lock_view(fb, &view);
	const uint8_t *inside = view.pixels + ((size_t)5 * 64 + 6) * 4;
	const uint8_t *outside = view.pixels + ((size_t)3 * 64 + 6) * 4;
	ASSERT_EQ(inside[0], 10);
	ASSERT_EQ(inside[1], 20);
	ASSERT_EQ(inside[2], 30);
	ASSERT_EQ(outside[0], 0);
	vnc_framebuffer_unlock_view(&view);
	/* The same pixels again change nothing. */
	uint64_t serial = committed_changes(fb);
	vnc_framebuffer_write_rect_bgrx(fb, screen, 64 * 4, 4, 4, 8, 8);
	vnc_framebuffer_commit(fb);
	ASSERT_EQ(committed_changes(fb), serial);
	vnc_framebuffer_destroy(fb);
}

/* One colour is decided on red, green and blue only, to the last pixel. */
static void test_one_colour_reads_to_the_end(void)
{
	static uint8_t block[16 * 8 * 4];
	for (size_t i = 0; i < sizeof(block); i += 4)
		memcpy(block + i, (uint8_t[4]){ 1, 2, 3, (uint8_t)i }, 4);
	ASSERT(vnc_one_colour(block, 16 * 4, 16, 8));
	block[sizeof(block) - 2] = 4; /* the last pixel's blue */
	ASSERT(!vnc_one_colour(block, 16 * 4, 16, 8));
	ASSERT(vnc_one_colour(block, 16 * 4, 15, 8)); /* left of it: still one */
}

int main(void)
{
	RUN_TEST(test_only_drawing_counts);
	RUN_TEST(test_drawn_wait_wakes_on_paint_and_close);
	RUN_TEST(test_listener_hears_frames_pointer_and_close);
	RUN_TEST(test_change_log_holds_what_differs);
	RUN_TEST(test_views_see_complete_updates);
	RUN_TEST(test_bgrx_source_is_reordered);
	RUN_TEST(test_one_colour_reads_to_the_end);
	TEST_EXIT();
}
