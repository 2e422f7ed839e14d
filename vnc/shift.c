#include "shift.h"

#include <stdlib.h>
#include <string.h>

/* Smaller writes are not worth the search: a block of a text cursor, a
 * clock. Shifts further than SHIFT_MAX_ROWS are not looked for (a wheel
 * step or a key press moves a page less); runs shorter than
 * SHIFT_MIN_ROWS cost more as an operation than they save. */
#define SHIFT_MIN_WIDTH 64
#define SHIFT_MIN_HEIGHT 16
#define SHIFT_MAX_ROWS 256
#define SHIFT_MIN_ROWS 8
/* A row's signature samples every SAMPLE_STEP-th pixel; a match is then
 * checked on every pixel. */
#define SAMPLE_STEP 16

/* The signature of width pixels of a row, and whether they hold more than
 * one colour (rows of one colour match at any shift: no evidence). */
static uint64_t signature(const uint8_t *row, int width, bool *varied)
{
	uint64_t h = 0xcbf29ce484222325u;
	uint32_t first, v;
	memcpy(&first, row, 4);
	*varied = false;
	for (int x = 0; x < width; x += SAMPLE_STEP) {
		memcpy(&v, row + (size_t)x * 4, 4);
		v &= 0x00ffffffu; /* little-endian RGBX: the padding byte aside */
		*varied |= v != (first & 0x00ffffffu);
		h = (h ^ v) * 0x100000001b3u;
	}
	return h;
}

bool vnc_find_shift(const uint8_t *old, size_t old_stride, int old_height, const uint8_t *src,
		    size_t src_stride, const struct vnc_rect *rect, struct vnc_shift *out)
{
	int x = rect->x, y = rect->y, width = rect->width, height = rect->height;
	if (width < SHIFT_MIN_WIDTH || height < SHIFT_MIN_HEIGHT)
		return false;
	int lo = y - SHIFT_MAX_ROWS < 0 ? 0 : y - SHIFT_MAX_ROWS;
	int hi = y + height + SHIFT_MAX_ROWS > old_height ? old_height : y + height + SHIFT_MAX_ROWS;
	uint64_t *fresh = malloc(sizeof(*fresh) * (size_t)height);
	uint64_t *before = malloc(sizeof(*before) * (size_t)(hi - lo));
	bool *varied = malloc((size_t)height);
	int *votes = calloc(2 * SHIFT_MAX_ROWS + 1, sizeof(*votes));
	bool found = false;
	if (!fresh || !before || !varied || !votes)
		goto done; /* out of memory: the write goes as pixels */
	for (int row = 0; row < height; row++)
		fresh[row] = signature(src + (size_t)(y + row) * src_stride + (size_t)x * 4, width,
				       &varied[row]);
	bool unused;
	for (int row = lo; row < hi; row++)
		before[row - lo] = signature(old + (size_t)row * old_stride + (size_t)x * 4, width,
					     &unused);
	/* Each changed row with ink votes for the shifts at which the old
	 * picture has it; the most voted one is then checked pixel by pixel. */
	for (int row = 0; row < height; row++) {
		if (!varied[row] || fresh[row] == before[y + row - lo])
			continue;
		for (int o = lo; o < hi; o++) {
			int dy = o - (y + row);
			if (dy != 0 && dy >= -SHIFT_MAX_ROWS && dy <= SHIFT_MAX_ROWS &&
			    before[o - lo] == fresh[row])
				votes[dy + SHIFT_MAX_ROWS]++;
		}
	}
	int best = 0;
	for (int i = 1; i < 2 * SHIFT_MAX_ROWS + 1; i++)
		if (votes[i] > votes[best])
			best = i;
	if (votes[best] < SHIFT_MIN_ROWS)
		goto done;
	int dy = best - SHIFT_MAX_ROWS, run = 0, run_first = 0;
	size_t len = (size_t)width * 4;
	for (int row = 0; row <= height; row++) {
		int from = y + row + dy;
		bool same = row < height && from >= 0 && from < old_height &&
			    memcmp(src + (size_t)(y + row) * src_stride + (size_t)x * 4,
				   old + (size_t)from * old_stride + (size_t)x * 4, len) == 0;
		if (same) {
			if (run == 0)
				run_first = row;
			run++;
			continue;
		}
		if (run >= SHIFT_MIN_ROWS && (!found || run > out->rows)) {
			*out = (struct vnc_shift){ .first_row = run_first, .rows = run, .dy = dy };
			found = true;
		}
		run = 0;
	}

done:
	free(fresh);
	free(before);
	free(varied);
	free(votes);
	return found;
}
