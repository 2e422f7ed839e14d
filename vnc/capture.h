/* SPDX-License-Identifier: MIT */
/* Screenshots: a region of the framebuffer, optionally scaled down, with the
 * pointer drawn in, encoded as PNG or JPEG.
 *
 * PNG output is built from horizontal bands, each compressed on its own
 * (ending in a flush, so none refers into another) and joined into one zlib
 * stream with adler32_combine. A cache keeps the bands of the last capture;
 * the next capture with the same geometry compresses again only the bands
 * whose rows changed or that the pointer entered or left, spread over the
 * cores. Each band is its own IDAT chunk, a multiple of three bytes long,
 * so the cache keeps every band's base64 text too and joins those. So a
 * screenshot costs what changed, not the screen size, and an unchanged
 * screen costs a reference to the previous text. */
#ifndef LIZARD_VNC_CAPTURE_H
#define LIZARD_VNC_CAPTURE_H

#include "util/error.h"
#include "vnc/framebuffer.h"
#include "vnc/png.h"
#include "util/blob.h"

#include <stdbool.h>
#include <stddef.h>

enum vnc_image_format { VNC_FORMAT_PNG, VNC_FORMAT_JPEG };

struct vnc_capture_request {
	struct vnc_rect source; /* screen pixels to capture */
	int width, height;      /* output size: the source size, or smaller to scale */
	bool with_cursor;
	enum vnc_image_format format;
	int jpeg_quality; /* 1..100 */
};

struct vnc_capture_cache;

struct vnc_capture_cache *vnc_capture_cache_create(void);
void vnc_capture_cache_destroy(struct vnc_capture_cache *cache);

/* Encodes into out (caller frees with vnc_bytes_finish). cache may be NULL;
 * it serves PNG only. *unchanged (may be NULL) tells whether the bytes equal
 * the cache's previous output. Fails with a message when the source lies
 * outside the screen or memory runs out. */
bool vnc_capture(struct vnc_framebuffer *fb, struct vnc_capture_cache *cache,
		 const struct vnc_capture_request *request, struct vnc_bytes *out, bool *unchanged,
		 struct error *err);

/* The same image as base64 text in a new reference *out (caller drops it
 * with blob_unref), as MCP carries images. */
bool vnc_capture_base64(struct vnc_framebuffer *fb, struct vnc_capture_cache *cache,
			const struct vnc_capture_request *request, struct blob **out,
			bool *unchanged, struct error *err);

#endif
