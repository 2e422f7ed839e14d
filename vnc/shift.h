#ifndef LIZARD_VNC_SHIFT_H
#define LIZARD_VNC_SHIFT_H

/* Scrolled content found in a write: rows of the new pixels that the old
 * picture holds dy rows further down (dy > 0) or up (dy < 0), in the same
 * columns. Servers send a scrolled page as plain pixels; viewers can copy
 * what moved instead. Internal to vnc/. */

#include "framebuffer.h"

#include <stdint.h>

struct vnc_shift {
	int first_row; /* of the rectangle: the copy's first destination row */
	int rows;      /* how many, one run */
	int dy;        /* source row = destination row + dy */
};

/* Looks for the longest run of rows of rect (x, y, width, height) whose new
 * pixels (src, RGBX with src_stride, addressed like the screen) equal the
 * old picture's (old, width old_stride, old_height rows) shifted by one dy.
 * Returns false when no run is worth a copy or rect is too small to try. */
bool vnc_find_shift(const uint8_t *old, size_t old_stride, int old_height, const uint8_t *src,
		    size_t src_stride, const struct vnc_rect *rect, struct vnc_shift *out);

#endif
