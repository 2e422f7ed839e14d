/* SPDX-License-Identifier: MIT */
/* Size and region arguments and the agent space: "WxH" text, then screen
 * sizes a VNC server may announce and points and regions a model may send.
 * Every mapped point lands on the screen, every accepted region covers a
 * non-empty part of it, and nothing divides by zero. */
#include "fuzz.h"

#include "bridge/tools/geometry.h"

#include <stdint.h>
#include <string.h>

static int take_int(const uint8_t **p, const uint8_t *end)
{
	int32_t v = 0;
	size_t n = (size_t)(end - *p) < sizeof(v) ? (size_t)(end - *p) : sizeof(v);
	memcpy(&v, *p, n);
	*p += n;
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The text up to the first NUL is a size argument. */
	const uint8_t *nul = memchr(data, 0, size);
	size_t text_len = nul ? (size_t)(nul - data) : size;
	char *text = malloc(text_len + 1);
	FUZZ_CHECK(text, "out of memory");
	memcpy(text, data, text_len);
	text[text_len] = '\0';
	int w = 0, h = 0;
	if (bridge_parse_size(text, &w, &h))
		FUZZ_CHECK(w >= 64 && w <= 8192 && h >= 64 && h <= 8192, "%dx%d from %s", w, h,
			   text);
	free(text);
	if (!nul)
		return 0;

	/* Then numbers: a screen (RFB sizes are 16-bit), a point, a region. */
	const uint8_t *p = nul + 1, *end = data + size;
	int screen_w = take_int(&p, end) & 0xffff, screen_h = take_int(&p, end) & 0xffff;
	struct agent_space space;
	bridge_agent_space_init(&space, screen_w, screen_h);
	if (screen_w == 0 || screen_h == 0)
		return 0;
	FUZZ_CHECK(space.width >= 1 && space.width <= screen_w && space.height >= 1 &&
			   space.height <= screen_h,
		   "%dx%d shown as %dx%d", screen_w, screen_h, space.width, space.height);
	FUZZ_CHECK(space.width <= 1568 && space.height <= 1568, "%dx%d", space.width, space.height);

	int x = take_int(&p, end), y = take_int(&p, end);
	if (x >= 0 && x < space.width && y >= 0 && y < space.height) {
		int nx, ny;
		tools_to_native(&space, x, y, &nx, &ny);
		FUZZ_CHECK(nx >= 0 && nx < screen_w && ny >= 0 && ny < screen_h,
			   "(%d, %d) in %dx%d maps to (%d, %d) on %dx%d", x, y, space.width,
			   space.height, nx, ny, screen_w, screen_h);
		int ax, ay;
		tools_to_agent(&space, nx, ny, &ax, &ay);
		FUZZ_CHECK(ax >= 0 && ax < space.width && ay >= 0 && ay < space.height,
			   "(%d, %d) back to (%d, %d)", nx, ny, ax, ay);
	}

	int region[4], source[4];
	for (int i = 0; i < 4; i++)
		region[i] = take_int(&p, end);
	struct error err = { 0 };
	if (bridge_region_to_native(&space, region, source, &err)) {
		FUZZ_CHECK(source[0] >= 0 && source[1] >= 0 && source[2] >= 1 && source[3] >= 1 &&
				   source[0] + source[2] <= screen_w &&
				   source[1] + source[3] <= screen_h,
			   "region [%d %d %d %d] -> %d,%d %dx%d on %dx%d", region[0], region[1],
			   region[2], region[3], source[0], source[1], source[2], source[3],
			   screen_w, screen_h);
		int out_w, out_h;
		bridge_fit_for_models(source[2], source[3], &out_w, &out_h);
		FUZZ_CHECK(out_w >= 1 && out_h >= 1 && out_w <= source[2] && out_h <= source[3],
			   "%dx%d fitted as %dx%d", source[2], source[3], out_w, out_h);
	} else {
		FUZZ_CHECK(err.message[0], "refused without a message");
	}
	return 0;
}
