/* SPDX-License-Identifier: MIT */
/* Sizes and coordinates: "WxH" arguments, the scaled space models see, and
 * mapping points and regions between it and the screen. Pure arithmetic on
 * numbers from outside (a VNC server's screen size, a model's arguments),
 * kept apart from sessions so that it can be fuzzed on its own. */
#ifndef LIZARD_BRIDGE_GEOMETRY_H
#define LIZARD_BRIDGE_GEOMETRY_H

#include "util/error.h"
#include <stdbool.h>
#include <stddef.h>

/* "WxH" with each side 64..8192. */
bool bridge_parse_size(const char *text, int *width, int *height);

/* The coordinates models see. Screens larger than models take (long edge
 * over 1568 px or more than 1.15 megapixels) are shown scaled; every
 * coordinate a tool receives is in that space and mapped back. */
struct agent_space {
	int native_width, native_height;
	int width, height;
	bool scaled;
};

/* w x h fitted inside what models take, keeping the aspect ratio, each side
 * at least 1. Returns whether it had to shrink. */
bool bridge_fit_for_models(int w, int h, int *out_w, int *out_h);
/* The space for a w x h screen (0 x 0 before the first frame). */
void bridge_agent_space_init(struct agent_space *space, int w, int h);
/* Agent pixel to the native pixel at the centre of what it shows. */
void tools_to_native(const struct agent_space *space, int x, int y, int *native_x, int *native_y);
void tools_to_agent(const struct agent_space *space, int native_x, int native_y, int *x, int *y);

/* A screenshot region [x1, y1, x2, y2] in agent space to the screen pixels
 * under it, as x, y, width, height. False with a message when it is not
 * inside the screen or empty. */
bool bridge_region_to_native(const struct agent_space *space, const int region[4], int source[4],
			     struct error *err);

#endif
