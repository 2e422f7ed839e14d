/* SPDX-License-Identifier: MIT */
#include "test.h"

#include "util/base64.h"
#include "vnc/capture.h"

#include "png_decode.h"

/* A framebuffer filled with a pattern that differs in every pixel. */
static struct vnc_framebuffer *patterned(int width, int height, unsigned seed)
{
	struct vnc_framebuffer *fb = vnc_framebuffer_create();
	vnc_framebuffer_resize(fb, width, height);
	unsigned char *px = malloc((size_t)width * height * 4);
	for (int i = 0; i < width * height; i++) {
		px[i * 4] = (unsigned char)(i * 7 + seed);
		px[i * 4 + 1] = (unsigned char)(i / width * 3);
		px[i * 4 + 2] = (unsigned char)(i % width);
		px[i * 4 + 3] = 0;
	}
	vnc_framebuffer_write_rect(fb, px, width * 4, 0, 0, width, height);
	vnc_framebuffer_commit(fb);
	free(px);
	return fb;
}

static int differing_pixels(struct vnc_framebuffer *fb, const unsigned char *rgb)
{
	struct vnc_image image;
	vnc_framebuffer_snapshot(fb, NULL, false, &image, NULL);
	int wrong = 0;
	for (int i = 0; i < image.width * image.height; i++)
		wrong += memcmp(rgb + i * 3, image.pixels + i * 4, 3) != 0;
	vnc_image_finish(&image);
	return wrong;
}

static struct vnc_capture_request whole(int width, int height)
{
	return (struct vnc_capture_request){ .source = { 0, 0, width, height },
					     .width = width,
					     .height = height,
					     .format = VNC_FORMAT_PNG };
}

static void banded_png_decodes_to_the_framebuffer(void)
{
	struct vnc_framebuffer *fb = patterned(333, 101, 1);
	struct vnc_capture_request r = whole(333, 101);
	struct vnc_bytes png;
	struct error err;
	ASSERT(vnc_capture(fb, NULL, &r, &png, NULL, &err));
	int w, h;
	unsigned char *rgb = decode_rgb(&png, &w, &h);
	ASSERT(rgb != NULL);
	ASSERT_EQ(w, 333);
	ASSERT_EQ(h, 101);
	ASSERT_EQ(differing_pixels(fb, rgb), 0);
	free(rgb);
	vnc_bytes_finish(&png);
	vnc_framebuffer_destroy(fb);
}

static void cache_reencodes_only_what_changed_and_stays_exact(void)
{
	struct vnc_framebuffer *fb = patterned(200, 120, 2);
	struct vnc_capture_cache *cache = vnc_capture_cache_create();
	struct vnc_capture_request r = whole(200, 120);
	struct vnc_bytes first, second, third;
	bool unchanged;
	struct error err;
	ASSERT(vnc_capture(fb, cache, &r, &first, &unchanged, &err));
	ASSERT(!unchanged);
	ASSERT(vnc_capture(fb, cache, &r, &second, &unchanged, &err));
	ASSERT(unchanged);
	ASSERT_EQ(first.len, second.len);
	ASSERT_EQ(memcmp(first.data, second.data, first.len), 0);

	/* Change a few rows in the middle band only. */
	/* write_rect takes a screen-shaped source, as libvncclient's buffer is. */
	unsigned char *source = malloc(200 * 120 * 4);
	memset(source, 0xab, 200 * 120 * 4);
	vnc_framebuffer_write_rect(fb, source, 200 * 4, 10, 50, 150, 3);
	free(source);
	vnc_framebuffer_commit(fb);
	ASSERT(vnc_capture(fb, cache, &r, &third, &unchanged, &err));
	ASSERT(!unchanged);
	int w, h;
	unsigned char *rgb = decode_rgb(&third, &w, &h);
	ASSERT(rgb != NULL);
	ASSERT_EQ(differing_pixels(fb, rgb), 0);
	ASSERT_EQ(rgb[(51 * 200 + 20) * 3], 0xab);
	free(rgb);
	vnc_bytes_finish(&first);
	vnc_bytes_finish(&second);
	vnc_bytes_finish(&third);
	vnc_capture_cache_destroy(cache);
	vnc_framebuffer_destroy(fb);
}

static void moving_the_pointer_redraws_it(void)
{
	struct vnc_framebuffer *fb = patterned(100, 100, 3);
	struct vnc_capture_cache *cache = vnc_capture_cache_create();
	struct vnc_capture_request r = whole(100, 100);
	r.with_cursor = true;
	struct vnc_bytes a, b;
	struct error err;
	vnc_framebuffer_set_cursor_position(fb, 10, 10);
	ASSERT(vnc_capture(fb, cache, &r, &a, NULL, &err));
	vnc_framebuffer_set_cursor_position(fb, 60, 70);
	bool unchanged;
	ASSERT(vnc_capture(fb, cache, &r, &b, &unchanged, &err));
	ASSERT(!unchanged);
	int w, h;
	unsigned char *rgb = decode_rgb(&b, &w, &h);
	/* The default arrow's tip is black at the pointer; the old spot is clean. */
	ASSERT_EQ(rgb[(70 * 100 + 60) * 3], 0);
	struct vnc_image clean;
	vnc_framebuffer_snapshot(fb, NULL, false, &clean, NULL);
	ASSERT_EQ(memcmp(rgb + (10 * 100 + 10) * 3, clean.pixels + (10 * 100 + 10) * 4, 3), 0);
	vnc_image_finish(&clean);
	free(rgb);
	vnc_bytes_finish(&a);
	vnc_bytes_finish(&b);
	vnc_capture_cache_destroy(cache);
	vnc_framebuffer_destroy(fb);
}

/* The base64 text is the PNG's, whole, with no padding anywhere (every
 * chunk is a multiple of three bytes), and an unchanged screen gives the
 * very same text back. */
static void base64_text_is_the_png_and_follows_changes(void)
{
	struct vnc_framebuffer *fb = patterned(333, 101, 5);
	struct vnc_capture_cache *cache = vnc_capture_cache_create();
	struct vnc_capture_request r = whole(333, 101);
	r.with_cursor = true;
	vnc_framebuffer_set_cursor_position(fb, 20, 20);
	struct error err;
	for (int round = 0; round < 3; round++) {
		struct blob *text, *again;
		struct vnc_bytes png;
		bool unchanged;
		ASSERT(vnc_capture_base64(fb, cache, &r, &text, &unchanged, &err));
		ASSERT(!unchanged);
		ASSERT(vnc_capture(fb, NULL, &r, &png, NULL, &err));
		struct blob *expected = base64_encode(png.data, png.len);
		ASSERT_STR_EQ(text->data, expected->data);
		ASSERT_EQ(text->len, expected->len);
		ASSERT(strchr(text->data, '=') == NULL);
		blob_unref(expected);
		int w, h;
		unsigned char *rgb = decode_rgb(&png, &w, &h);
		ASSERT(rgb != NULL);
		free(rgb);
		vnc_bytes_finish(&png);

		ASSERT(vnc_capture_base64(fb, cache, &r, &again, &unchanged, &err));
		ASSERT(unchanged);
		ASSERT(again == text);
		blob_unref(again);
		blob_unref(text);

		/* Next round: new rows in one band, and the pointer elsewhere. */
		unsigned char *source = malloc(333 * 101 * 4);
		memset(source, 0x40 * round, 333 * 101 * 4);
		vnc_framebuffer_write_rect(fb, source, 333 * 4, 5, 40 + round * 20, 100, 4);
		free(source);
		vnc_framebuffer_commit(fb);
		vnc_framebuffer_set_cursor_position(fb, 50 + round * 90, 80);
	}
	vnc_capture_cache_destroy(cache);
	vnc_framebuffer_destroy(fb);
}

static void scaling_averages_boxes(void)
{
	struct vnc_framebuffer *fb = vnc_framebuffer_create();
	vnc_framebuffer_resize(fb, 4, 2);
	/* Left half black, right half white: scaled to 2x1 it stays so. */
	unsigned char px[4 * 2 * 4] = { 0 };
	for (int y = 0; y < 2; y++)
		for (int x = 2; x < 4; x++)
			memset(px + (y * 4 + x) * 4, 255, 3);
	vnc_framebuffer_write_rect(fb, px, 16, 0, 0, 4, 2);
	vnc_framebuffer_commit(fb);
	struct vnc_capture_request r = { .source = { 0, 0, 4, 2 }, .width = 2, .height = 1 };
	struct vnc_bytes png;
	struct error err;
	ASSERT(vnc_capture(fb, NULL, &r, &png, NULL, &err));
	int w, h;
	unsigned char *rgb = decode_rgb(&png, &w, &h);
	ASSERT_EQ(w, 2);
	ASSERT_EQ(h, 1);
	ASSERT_EQ(rgb[0], 0);
	ASSERT_EQ(rgb[3], 255);
	free(rgb);
	vnc_bytes_finish(&png);
	vnc_framebuffer_destroy(fb);
}

static void regions_and_jpeg(void)
{
	struct vnc_framebuffer *fb = patterned(64, 64, 4);
	struct vnc_capture_request r = { .source = { 8, 16, 20, 10 }, .width = 20, .height = 10 };
	struct vnc_bytes out;
	struct error err;
	ASSERT(vnc_capture(fb, NULL, &r, &out, NULL, &err));
	int w, h;
	unsigned char *rgb = decode_rgb(&out, &w, &h);
	struct vnc_image crop;
	vnc_framebuffer_snapshot(fb, &r.source, false, &crop, NULL);
	int wrong = 0;
	for (int i = 0; i < 200; i++)
		wrong += memcmp(rgb + i * 3, crop.pixels + i * 4, 3) != 0;
	ASSERT_EQ(wrong, 0);
	vnc_image_finish(&crop);
	free(rgb);
	vnc_bytes_finish(&out);

	r.format = VNC_FORMAT_JPEG;
	r.jpeg_quality = 80;
	ASSERT(vnc_capture(fb, NULL, &r, &out, NULL, &err));
	ASSERT(out.len > 100 && out.data[0] == 0xff && out.data[1] == 0xd8);
	vnc_bytes_finish(&out);

	r.format = VNC_FORMAT_PNG;
	r.source = (struct vnc_rect){ 60, 60, 10, 10 };
	ASSERT(!vnc_capture(fb, NULL, &r, &out, NULL, &err));
	ASSERT_CONTAINS(err.message, "not inside the 64x64 screen");
	vnc_framebuffer_destroy(fb);
}

int main(void)
{
	RUN_TEST(banded_png_decodes_to_the_framebuffer);
	RUN_TEST(cache_reencodes_only_what_changed_and_stays_exact);
	RUN_TEST(moving_the_pointer_redraws_it);
	RUN_TEST(base64_text_is_the_png_and_follows_changes);
	RUN_TEST(scaling_averages_boxes);
	RUN_TEST(regions_and_jpeg);
	TEST_EXIT();
}
