/* SPDX-License-Identifier: MIT */
#include "test.h"

#include "vnc/framebuffer.h"
#include "vnc/png.h"

#include "png_decode.h"

#include <zlib.h>

/* Pixels that differ between image and what png decodes to; -1 when it
 * does not decode to an image of that size. */
static int differing_pixels(const struct vnc_image *image, const struct vnc_bytes *png)
{
	int width, height;
	unsigned char *rgb = decode_rgb(png, &width, &height);
	if (!rgb || width != image->width || height != image->height) {
		free(rgb);
		return -1;
	}
	int wrong = 0;
	for (int i = 0; i < width * height; i++)
		wrong += memcmp(rgb + i * 3, image->pixels + i * 4, 3) != 0;
	free(rgb);
	return wrong;
}

static void round_trips_every_pixel(void)
{
	struct vnc_image image = { .width = 67, .height = 45 };
	image.pixels = malloc((size_t)image.width * image.height * 4);
	for (int i = 0; i < image.width * image.height; i++) {
		image.pixels[i * 4 + 0] = (unsigned char)(i * 7);
		image.pixels[i * 4 + 1] = (unsigned char)(i * 13 + 5);
		image.pixels[i * 4 + 2] = (unsigned char)(i / 3);
		image.pixels[i * 4 + 3] = 0xee; /* the X byte must not leak in */
	}
	struct vnc_bytes png;
	ASSERT(vnc_png_encode(&image, &png));
	ASSERT(png.len > 8 && memcmp(png.data, "\x89PNG\r\n\x1a\n", 8) == 0);
	ASSERT_EQ(png.data[25], 2); /* IHDR colour type: RGB, as it has many colours */
	ASSERT_EQ(differing_pixels(&image, &png), 0);
	vnc_bytes_finish(&png);
	vnc_image_finish(&image);
}

/* Text in a few colours goes as a palette; every pixel still round-trips,
 * for each bit depth the colour count picks (2, 4, 16, 256 colours). */
static void few_colours_round_trip_through_a_palette(void)
{
	const int counts[] = { 2, 3, 11, 256 };
	for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		struct vnc_image image = { .width = 131, .height = 37 };
		image.pixels = malloc((size_t)image.width * image.height * 4);
		for (int i = 0; i < image.width * image.height; i++) {
			int colour = (i / 5 + i % 7) % counts[c];
			image.pixels[i * 4 + 0] = (unsigned char)(colour * 3);
			image.pixels[i * 4 + 1] = (unsigned char)(255 - colour);
			image.pixels[i * 4 + 2] = (unsigned char)(colour * 7 + 1);
			image.pixels[i * 4 + 3] = (unsigned char)i; /* ignored */
		}
		struct vnc_bytes png;
		ASSERT(vnc_png_encode(&image, &png));
		ASSERT_EQ(png.data[25], 3); /* IHDR colour type: palette */
		ASSERT_EQ(differing_pixels(&image, &png), 0);
		vnc_bytes_finish(&png);
		vnc_image_finish(&image);
	}
}

/* The viewer's op 7: palette and packed indices, inflated and looked up
 * again, give every pixel back. */
static void indexed_images_round_trip(void)
{
	struct vnc_image image = { .width = 53, .height = 9 };
	image.pixels = malloc((size_t)image.width * image.height * 4);
	for (int i = 0; i < image.width * image.height; i++) {
		int colour = (i * 5 / 7) % 5; /* five colours: 4 bits a pixel */
		memset(image.pixels + i * 4, 40 * colour, 4);
		image.pixels[i * 4 + 1] = (unsigned char)colour;
	}
	struct vnc_indexed indexed;
	ASSERT(vnc_indexed_encode(&image, &indexed));
	ASSERT_EQ(indexed.colours, 5);
	ASSERT_EQ(indexed.depth, 4);
	size_t row_bytes = (53 * 4 + 7) / 8;
	unsigned char packed[27 * 9];
	uLongf len = sizeof(packed);
	ASSERT_EQ(uncompress(packed, &len, indexed.packed.data, indexed.packed.len), Z_OK);
	ASSERT_EQ(len, row_bytes * 9);
	int wrong = 0;
	for (int y = 0; y < 9; y++) {
		for (int x = 0; x < 53; x++) {
			int index = (packed[y * row_bytes + x / 2] >> (x % 2 ? 0 : 4)) & 15;
			wrong += memcmp(indexed.palette + index * 3,
					image.pixels + (y * 53 + x) * 4, 3) != 0;
		}
	}
	ASSERT_EQ(wrong, 0);
	vnc_bytes_finish(&indexed.packed);
	/* More than 256 colours: not indexed. */
	for (int i = 0; i < image.width * image.height; i++) {
		image.pixels[i * 4] = (unsigned char)i;
		image.pixels[i * 4 + 2] = (unsigned char)(i >> 8);
	}
	ASSERT(!vnc_indexed_encode(&image, &indexed));
	vnc_image_finish(&image);
}

static void flat_screens_compress_well(void)
{
	struct vnc_image image = { .width = 1280, .height = 800 };
	image.pixels = calloc((size_t)image.width * image.height, 4);
	struct vnc_bytes png;
	ASSERT(vnc_png_encode(&image, &png));
	ASSERT(png.len < 64 * 1024);
	vnc_bytes_finish(&png);
	vnc_image_finish(&image);
}

static void snapshot_crops_and_refuses_outside_regions(void)
{
	struct vnc_framebuffer *fb = vnc_framebuffer_create();
	ASSERT(vnc_framebuffer_resize(fb, 100, 50));
	unsigned char row[100 * 4 * 50];
	for (size_t i = 0; i < sizeof(row); i++)
		row[i] = (unsigned char)i;
	vnc_framebuffer_write_rect(fb, row, 400, 0, 0, 100, 50);
	vnc_framebuffer_commit(fb);
	ASSERT_EQ(vnc_framebuffer_sequence(fb), 1);

	struct vnc_image crop;
	struct vnc_rect region = { 10, 20, 5, 3 };
	ASSERT(vnc_framebuffer_snapshot(fb, &region, false, &crop, NULL));
	ASSERT_EQ(crop.width, 5);
	ASSERT_EQ(memcmp(crop.pixels, row + 20 * 400 + 10 * 4, 20), 0);
	vnc_image_finish(&crop);

	struct vnc_rect outside = { 98, 0, 5, 5 };
	ASSERT(!vnc_framebuffer_snapshot(fb, &outside, false, &crop, NULL));
	vnc_framebuffer_destroy(fb);
}

static void waits_end_on_frames_timeouts_and_close(void)
{
	struct vnc_framebuffer *fb = vnc_framebuffer_create();
	ASSERT(vnc_framebuffer_resize(fb, 10, 10));
	ASSERT_EQ(vnc_framebuffer_wait_frame_after(fb, 0, 20), VNC_WAIT_TIMEOUT);
	vnc_framebuffer_commit(fb); /* the resize counts as a change */
	ASSERT_EQ(vnc_framebuffer_wait_frame_after(fb, 0, 20), VNC_WAIT_OK);
	ASSERT_EQ(vnc_framebuffer_wait_settled(fb, 0, 10, 1000), VNC_WAIT_OK);
	vnc_framebuffer_close(fb);
	ASSERT_EQ(vnc_framebuffer_wait_frame_after(fb, 1, 1000), VNC_WAIT_CLOSED);
	vnc_framebuffer_destroy(fb);
}

int main(void)
{
	RUN_TEST(round_trips_every_pixel);
	RUN_TEST(few_colours_round_trip_through_a_palette);
	RUN_TEST(indexed_images_round_trip);
	RUN_TEST(flat_screens_compress_well);
	RUN_TEST(snapshot_crops_and_refuses_outside_regions);
	RUN_TEST(waits_end_on_frames_timeouts_and_close);
	TEST_EXIT();
}
