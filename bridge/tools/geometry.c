/* SPDX-License-Identifier: MIT */
#include "bridge/tools/geometry.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define AGENT_MAX_LONG_EDGE 1568
#define AGENT_MAX_PIXELS 1150000.0

bool bridge_parse_size(const char *text, int *width, int *height)
{
	char *end;
	long w = strtol(text, &end, 10);
	if (end == text || (*end != 'x' && *end != 'X'))
		return false;
	const char *h_start = end + 1;
	long h = strtol(h_start, &end, 10);
	if (end == h_start || *end != '\0' || w < 64 || h < 64 || w > 8192 || h > 8192)
		return false;
	*width = (int)w;
	*height = (int)h;
	return true;
}

bool bridge_fit_for_models(int w, int h, int *out_w, int *out_h)
{
	*out_w = w;
	*out_h = h;
	if (w <= 0 || h <= 0)
		return false;
	double long_edge = w > h ? w : h;
	double scale = fmin(AGENT_MAX_LONG_EDGE / long_edge,
			    sqrt(AGENT_MAX_PIXELS / ((double)w * h)));
	if (scale >= 1.0)
		return false;
	/* A very thin screen keeps a side of one pixel rather than none. */
	*out_w = (int)floor(w * scale) > 0 ? (int)floor(w * scale) : 1;
	*out_h = (int)floor(h * scale) > 0 ? (int)floor(h * scale) : 1;
	return true;
}

void bridge_agent_space_init(struct agent_space *space, int w, int h)
{
	space->native_width = w;
	space->native_height = h;
	space->scaled = bridge_fit_for_models(w, h, &space->width, &space->height);
}

void tools_to_native(const struct agent_space *space, int x, int y, int *native_x, int *native_y)
{
	*native_x = *native_y = 0;
	if (space->width <= 0 || space->height <= 0)
		return;
	/* The centre of the screen pixels agent pixel (x, y) stands for. */
	*native_x = (int)(((long long)x * 2 + 1) * space->native_width / (2LL * space->width));
	*native_y = (int)(((long long)y * 2 + 1) * space->native_height / (2LL * space->height));
	if (*native_x >= space->native_width)
		*native_x = space->native_width - 1;
	if (*native_y >= space->native_height)
		*native_y = space->native_height - 1;
}

void tools_to_agent(const struct agent_space *space, int native_x, int native_y, int *x, int *y)
{
	*x = *y = 0;
	if (space->native_width <= 0 || space->native_height <= 0)
		return;
	/* Pixel centres, so that mapping there and back is the identity. */
	*x = (int)(((long long)native_x * 2 + 1) * space->width / (2LL * space->native_width));
	*y = (int)(((long long)native_y * 2 + 1) * space->height / (2LL * space->native_height));
}

bool bridge_region_to_native(const struct agent_space *space, const int region[4], int source[4],
			     struct error *err)
{
	if (region[0] < 0 || region[1] < 0 || region[2] > space->width ||
	    region[3] > space->height || region[2] <= region[0] || region[3] <= region[1]) {
		error_set(
			err, 0,
			"region [%d, %d, %d, %d] must be [x1, y1, x2, y2] with 0 <= x1 < x2 <= %d "
			"and 0 <= y1 < y2 <= %d",
			region[0], region[1], region[2], region[3], space->width, space->height);
		return false;
	}
	/* Edges round outwards, so the pixels under the region are all in. */
	long long x1 = (long long)region[0] * space->native_width / space->width;
	long long y1 = (long long)region[1] * space->native_height / space->height;
	long long x2 = ((long long)region[2] * space->native_width + space->width - 1) /
		       space->width;
	long long y2 = ((long long)region[3] * space->native_height + space->height - 1) /
		       space->height;
	source[0] = (int)x1;
	source[1] = (int)y1;
	source[2] = (int)(x2 - x1);
	source[3] = (int)(y2 - y1);
	return true;
}
