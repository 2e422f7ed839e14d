#include "test.h"

#include "../../vnc/framebuffer.h"
#include "../../vnc/png.h"

#include "png_decode.h"

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
	int width, height;
	unsigned char *rgb = decode_rgb(&png, &width, &height);
	ASSERT(rgb != NULL);
	ASSERT_EQ(width, 67);
	ASSERT_EQ(height, 45);
	int wrong = 0;
	for (int i = 0; i < width * height; i++)
		wrong += memcmp(rgb + i * 3, image.pixels + i * 4, 3) != 0;
	ASSERT_EQ(wrong, 0);
	free(rgb);
	vnc_bytes_finish(&png);
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
	RUN_TEST(flat_screens_compress_well);
	RUN_TEST(snapshot_crops_and_refuses_outside_regions);
	RUN_TEST(waits_end_on_frames_timeouts_and_close);
	TEST_EXIT();
}
