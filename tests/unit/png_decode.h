/* SPDX-License-Identifier: MIT */
/* Decodes a PNG with libpng's simplified API, for tests. */
#ifndef LIZARD_TEST_PNG_DECODE_H
#define LIZARD_TEST_PNG_DECODE_H

#include "vnc/png.h"

#include <png.h>
#include <stdlib.h>

/* RGB pixels (caller frees), or NULL when the bytes are no valid PNG. */
static unsigned char *decode_rgb(const struct vnc_bytes *bytes, int *width, int *height)
{
	png_image image = { .version = PNG_IMAGE_VERSION };
	if (!png_image_begin_read_from_memory(&image, bytes->data, bytes->len))
		return NULL;
	image.format = PNG_FORMAT_RGB;
	unsigned char *rgb = malloc(PNG_IMAGE_SIZE(image));
	if (!png_image_finish_read(&image, NULL, rgb, 0, NULL)) {
		free(rgb);
		return NULL;
	}
	*width = (int)image.width;
	*height = (int)image.height;
	return rgb;
}

#endif
