/* SPDX-License-Identifier: MIT */
/* The viewer's account of what its canvas lacks: rectangles clipped,
 * merged, bounded, and carried along when the canvas copies. */
#include "bridge/viewer/region.h"
#include "test.h"

/* Whether every pixel of r is covered by the region. */
static bool covers(const struct bridge_region *region, const struct vnc_rect *r)
{
	for (int y = r->y; y < r->y + r->height; y++)
		for (int x = r->x; x < r->x + r->width; x++) {
			bool in = false;
			for (int i = 0; i < region->count && !in; i++) {
				const struct vnc_rect *q = &region->rects[i];
				in = x >= q->x && x < q->x + q->width && y >= q->y &&
				     y < q->y + q->height;
			}
			if (!in)
				return false;
		}
	return true;
}

static void clips_and_merges(void)
{
	struct bridge_region r = { 0 };
	bridge_region_add(&r, &(struct vnc_rect){ -10, -10, 20, 20 }, 100, 100);
	ASSERT_EQ(r.count, 1);
	ASSERT_EQ(r.rects[0].x, 0);
	ASSERT_EQ(r.rects[0].width, 10);
	bridge_region_add(&r, &(struct vnc_rect){ 200, 200, 5, 5 }, 100, 100); /* off screen */
	ASSERT_EQ(r.count, 1);
	bridge_region_add(&r, &(struct vnc_rect){ 2, 2, 3, 3 }, 100, 100); /* inside */
	ASSERT_EQ(r.count, 1);
	bridge_region_add(&r, &(struct vnc_rect){ 10, 0, 10, 10 }, 100, 100); /* touching */
	ASSERT_EQ(r.count, 1);
	ASSERT_EQ(r.rects[0].width, 20);
	bridge_region_add(&r, &(struct vnc_rect){ 90, 90, 10, 10 }, 100, 100); /* far */
	ASSERT_EQ(r.count, 2);
}

static void bounded_and_still_covering(void)
{
	struct bridge_region r = { 0 };
	struct vnc_rect added[100];
	for (int i = 0; i < 100; i++) {
		added[i] = (struct vnc_rect){ (i * 37) % 900, (i * 53) % 700, 3, 3 };
		bridge_region_add(&r, &added[i], 1000, 800);
		ASSERT(r.count <= BRIDGE_REGION_MAX);
	}
	for (int i = 0; i < 100; i++)
		ASSERT(covers(&r, &added[i]));
}

static void copies_carry_damage(void)
{
	struct bridge_region r = { 0 };
	bridge_region_add(&r, &(struct vnc_rect){ 10, 10, 20, 20 }, 400, 300);
	/* The canvas copies (0,0 100x100) to (200,100): the damage moves too. */
	bridge_region_copied(&r, &(struct vnc_rect){ 200, 100, 100, 100 }, 0, 0, 400, 300);
	ASSERT(covers(&r, &(struct vnc_rect){ 10, 10, 20, 20 }));
	ASSERT(covers(&r, &(struct vnc_rect){ 210, 110, 20, 20 }));
	ASSERT_EQ(bridge_region_area(&r), 800);
	/* Damage outside the source stays where it is, alone. */
	struct bridge_region s = { 0 };
	bridge_region_add(&s, &(struct vnc_rect){ 150, 150, 10, 10 }, 400, 300);
	bridge_region_copied(&s, &(struct vnc_rect){ 0, 0, 50, 50 }, 300, 200, 400, 300);
	ASSERT_EQ(s.count, 1);
}

int main(void)
{
	RUN_TEST(clips_and_merges);
	RUN_TEST(bounded_and_still_covering);
	RUN_TEST(copies_carry_damage);
	TEST_EXIT();
}
