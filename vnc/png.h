/* SPDX-License-Identifier: MIT */
/* PNG (and JPEG) encoding of framebuffer copies, tuned for speed over size. */
#ifndef LIZARD_VNC_PNG_H
#define LIZARD_VNC_PNG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vnc_image;

struct vnc_bytes {
	uint8_t *data;
	size_t len, capacity;
};

/* Encodes an RGBX image as a lossless PNG into out (which the caller frees
 * with vnc_bytes_finish): with a palette when it has at most 256 colours,
 * as 8-bit RGB otherwise. */
bool vnc_png_encode(const struct vnc_image *image, struct vnc_bytes *out);
void vnc_bytes_finish(struct vnc_bytes *bytes);
/* Appends, growing as needed; false when memory runs out. */
bool vnc_bytes_append(struct vnc_bytes *bytes, const void *data, size_t len);

/* An image of few colours without a PNG's container (69 bytes and more of
 * headers, checksums and chunks, which outweigh a small image's pixels):
 * its palette and its indices packed like a PNG's rows (depth 1, 2, 4 or 8
 * bits a pixel, each row starting on a byte), zlib-compressed. */
struct vnc_indexed {
	int colours, depth;
	uint8_t palette[256 * 3]; /* R, G, B each */
	struct vnc_bytes packed;  /* freed with vnc_bytes_finish */
};
/* False (nothing to free) when the image has more than 256 colours or
 * memory runs out. */
bool vnc_indexed_encode(const struct vnc_image *image, struct vnc_indexed *out);

/* Encodes an RGBX image as a baseline JPEG at quality 1..100 (lossy: for
 * viewers that asked for speed, never for screenshots an agent reads). */
bool vnc_jpeg_encode(const struct vnc_image *image, int quality, struct vnc_bytes *out);
/* The same, with rows of RGB (3 bytes a pixel) made on demand by row(). */
bool vnc_jpeg_encode_rows(int width, int height, int quality,
			  void (*row)(void *context, int y, uint8_t *rgb), void *context,
			  struct vnc_bytes *out);

#endif
