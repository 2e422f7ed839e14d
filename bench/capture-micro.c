/* SPDX-License-Identifier: MIT */
/* Times the capture path alone, without MCP: a 1280x800 screen that is
 * half flat colour and text-like stripes, half noise (the worst case for
 * PNG), captured whole, unchanged, and after a change of three bands.
 * Usage: build/bench/capture-micro [rounds] */
#include "vnc/capture.h"
#include "util/base64.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000.0 + t.tv_nsec / 1e6;
}

static int compare(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), compare);
	return v[n / 2];
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 50;
	if (rounds < 1 || rounds > 100000)
		rounds = 50;
	const int w = 1280, h = 800;
	struct vnc_framebuffer *fb = vnc_framebuffer_create();
	vnc_framebuffer_resize(fb, w, h);
	unsigned char *px = malloc((size_t)w * h * 4);
	unsigned seed = 1;
	for (int y = 0; y < h; y++) {
		for (int x = 0; x < w; x++) {
			unsigned char *p = px + ((size_t)y * w + x) * 4;
			if (x < w / 2) {
				bool ink = (y % 20) < 12 && ((x * 7 + y * 3) % 11) < 3;
				memset(p, ink ? 30 : 250, 3);
			} else {
				seed = seed * 1103515245 + 12345;
				p[0] = (unsigned char)(seed >> 16);
				p[1] = (unsigned char)(seed >> 8);
				p[2] = (unsigned char)(seed >> 24);
			}
		}
	}
	vnc_framebuffer_write_rect(fb, px, w * 4, 0, 0, w, h);
	vnc_framebuffer_commit(fb);

	struct vnc_capture_cache *cache = vnc_capture_cache_create();
	struct vnc_capture_request r = { .source = { 0, 0, w, h }, .width = w, .height = h };
	double *full = calloc((size_t)rounds, sizeof(double));
	double *same = calloc((size_t)rounds, sizeof(double));
	double *some = calloc((size_t)rounds, sizeof(double));
	double *b64 = calloc((size_t)rounds, sizeof(double));
	double *all = calloc((size_t)rounds, sizeof(double));
	struct error err;
	size_t bytes = 0;
	for (int i = 0; i < rounds; i++) {
		struct vnc_bytes out;
		double t0 = now_ms();
		vnc_capture(fb, NULL, &r, &out, NULL, &err);
		full[i] = now_ms() - t0;
		bytes = out.len;
		t0 = now_ms();
		blob_unref(base64_encode(out.data, out.len));
		b64[i] = now_ms() - t0;
		vnc_bytes_finish(&out);

		/* What a screenshot tool does: base64 text from the session's cache. */
		struct blob *text;
		vnc_capture_base64(fb, cache, &r, &text, NULL, &err);
		blob_unref(text);
		t0 = now_ms();
		vnc_capture_base64(fb, cache, &r, &text, NULL, &err);
		same[i] = now_ms() - t0;
		blob_unref(text);

		vnc_framebuffer_write_rect(fb, px, w * 4, 0, 0, w, h);
		vnc_framebuffer_commit(fb);
		t0 = now_ms();
		vnc_capture_base64(fb, cache, &r, &text, NULL, &err);
		all[i] = now_ms() - t0;
		blob_unref(text);

		vnc_framebuffer_write_rect(fb, px, w * 4, 600, 400, 100, 40);
		vnc_framebuffer_commit(fb);
		t0 = now_ms();
		vnc_capture_base64(fb, cache, &r, &text, NULL, &err);
		some[i] = now_ms() - t0;
		blob_unref(text);
	}
	printf("1280x800 capture, PNG %zu bytes, median of %d rounds:\n", bytes, rounds);
	printf("  PNG, no cache                      %7.2f ms\n", median(full, rounds));
	printf("  base64 of that PNG                 %7.2f ms\n", median(b64, rounds));
	printf("  cached base64 PNG, every band new  %7.2f ms\n", median(all, rounds));
	printf("  cached base64 PNG, three bands new %7.2f ms\n", median(some, rounds));
	printf("  cached base64 PNG, nothing new     %7.2f ms\n", median(same, rounds));
	vnc_capture_cache_destroy(cache);
	vnc_framebuffer_destroy(fb);
	free(px);
	free(full);
	free(same);
	free(some);
	free(b64);
	free(all);
	return 0;
}
