/* SPDX-License-Identifier: MIT */
#include "bridge/viewer/region.h"

static long long area(const struct vnc_rect *r)
{
	return (long long)r->width * r->height;
}

static struct vnc_rect bounds(const struct vnc_rect *a, const struct vnc_rect *b)
{
	int x0 = a->x < b->x ? a->x : b->x, y0 = a->y < b->y ? a->y : b->y;
	int x1 = a->x + a->width > b->x + b->width ? a->x + a->width : b->x + b->width;
	int y1 = a->y + a->height > b->y + b->height ? a->y + a->height : b->y + b->height;
	return (struct vnc_rect){ x0, y0, x1 - x0, y1 - y0 };
}

static bool intersect(const struct vnc_rect *a, const struct vnc_rect *b, struct vnc_rect *out)
{
	int x0 = a->x > b->x ? a->x : b->x, y0 = a->y > b->y ? a->y : b->y;
	int x1 = a->x + a->width < b->x + b->width ? a->x + a->width : b->x + b->width;
	int y1 = a->y + a->height < b->y + b->height ? a->y + a->height : b->y + b->height;
	if (x1 <= x0 || y1 <= y0)
		return false;
	*out = (struct vnc_rect){ x0, y0, x1 - x0, y1 - y0 };
	return true;
}

/* Merging pays when the bounding box wastes little: one image instead of
 * two costs less than a few rows of extra pixels. */
static bool worth_merging(const struct vnc_rect *a, const struct vnc_rect *b)
{
	struct vnc_rect box = bounds(a, b);
	return area(&box) <= area(a) + area(b) + 4096;
}

void bridge_region_add(struct bridge_region *region, const struct vnc_rect *rect, int width,
		       int height)
{
	struct vnc_rect screen = { 0, 0, width, height }, r;
	if (!intersect(rect, &screen, &r))
		return;
	for (;;) {
		int merged = -1;
		for (int i = 0; i < region->count && merged < 0; i++) {
			struct vnc_rect *have = &region->rects[i];
			struct vnc_rect box = bounds(have, &r);
			if (box.x == have->x && box.y == have->y && box.width == have->width &&
			    box.height == have->height)
				return; /* already covered */
			if (worth_merging(have, &r))
				merged = i;
		}
		if (merged < 0)
			break;
		/* Take it out and add the union: it may now reach others. */
		r = bounds(&region->rects[merged], &r);
		region->rects[merged] = region->rects[--region->count];
	}
	if (region->count == BRIDGE_REGION_MAX) {
		/* Full: fold in with the rectangle whose box grows least. */
		int best = 0;
		long long best_growth = -1;
		for (int i = 0; i < region->count; i++) {
			struct vnc_rect box = bounds(&region->rects[i], &r);
			long long growth = area(&box) - area(&region->rects[i]);
			if (best_growth < 0 || growth < best_growth) {
				best = i;
				best_growth = growth;
			}
		}
		r = bounds(&region->rects[best], &r);
		region->rects[best] = region->rects[--region->count];
		bridge_region_add(region, &r, width, height);
		return;
	}
	region->rects[region->count++] = r;
}

void bridge_region_copied(struct bridge_region *region, const struct vnc_rect *dest, int src_x,
			  int src_y, int width, int height)
{
	struct vnc_rect source = { src_x, src_y, dest->width, dest->height };
	struct vnc_rect moved[BRIDGE_REGION_MAX];
	int count = 0;
	for (int i = 0; i < region->count; i++) {
		struct vnc_rect part;
		if (intersect(&region->rects[i], &source, &part)) {
			part.x += dest->x - src_x;
			part.y += dest->y - src_y;
			moved[count++] = part;
		}
	}
	for (int i = 0; i < count; i++)
		bridge_region_add(region, &moved[i], width, height);
}

long long bridge_region_area(const struct bridge_region *region)
{
	long long total = 0;
	for (int i = 0; i < region->count; i++)
		total += area(&region->rects[i]);
	return total;
}
