/* SPDX-License-Identifier: MIT */
/* The part of the screen a viewer's canvas may show wrong, as a short list
 * of rectangles (overlaps allowed: each is painted whole from the current
 * framebuffer, so painting a pixel twice costs bytes, never correctness).
 * The list is bounded: when it is full, rectangles merge into their
 * bounding box, which only ever covers more. */
#ifndef LIZARD_BRIDGE_VIEWER_REGION_H
#define LIZARD_BRIDGE_VIEWER_REGION_H

#include "vnc/framebuffer.h"

#include <stdbool.h>

#define BRIDGE_REGION_MAX 24

struct bridge_region {
	struct vnc_rect rects[BRIDGE_REGION_MAX];
	int count;
};

/* Adds rect, clipped to a width x height screen. */
void bridge_region_add(struct bridge_region *region, const struct vnc_rect *rect, int width,
		       int height);
/* The canvas copies the rectangle at (src_x, src_y) to dest: whatever the
 * region marks inside the source is then wrong at the destination too. */
void bridge_region_copied(struct bridge_region *region, const struct vnc_rect *dest, int src_x,
			  int src_y, int width, int height);
/* Total pixels, counting overlaps twice. */
long long bridge_region_area(const struct bridge_region *region);

#endif
