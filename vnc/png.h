/* PNG encoding of framebuffer copies, tuned for speed over size. */
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

/* Encodes an RGBX image as an 8-bit RGB PNG into out (which the caller
 * frees with vnc_bytes_finish). */
bool vnc_png_encode(const struct vnc_image *image, struct vnc_bytes *out);
void vnc_bytes_finish(struct vnc_bytes *bytes);

#endif
