/* SPDX-License-Identifier: MIT */
#include "vnc/capture.h"

#include "util/base64.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#ifdef LIZARD_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

#define BAND_ROWS 16
#define MAX_THREADS 4

/* Each band is an IDAT chunk of its own whose length is a multiple of three
 * bytes, so its base64 text has no padding and the texts of the bands can
 * be joined as they are: only bands that changed are encoded again, in
 * either form. */
struct band {
	int out_y0, out_y1; /* output rows */
	int src_y0, src_y1; /* screen rows they come from */
	uint8_t *data;      /* the chunk: length, "IDAT", deflate data, CRC */
	size_t len, capacity;
	char *base64; /* the chunk as base64, when base64_valid */
	size_t base64_len, base64_capacity;
	bool base64_valid;
	size_t raw_len; /* filtered scanline bytes it holds */
	uint32_t adler;
	uint64_t version;        /* newest row version it shows */
	uint64_t cursor_version; /* pointer state it shows */
	bool had_cursor;
	bool valid;
	bool dirty; /* this capture */
};

/* Before the bands: signature, IHDR and an IDAT holding the zlib header
 * padded with two empty stored blocks; after them: an IDAT holding the
 * final block and the Adler-32, and IEND. Both multiples of three bytes. */
#define PNG_PREFIX_LEN 57
#define PNG_SUFFIX_LEN 30
#define CHUNK_OVERHEAD 12
/* An empty stored block, as a sync flush ends with: pads deflate data. */
static const uint8_t empty_stored_block[5] = { 0x00, 0x00, 0x00, 0xff, 0xff };

struct vnc_capture_cache {
	pthread_mutex_t lock;
	struct vnc_capture_request key; /* geometry the bands belong to */
	struct band *bands;
	int band_count;
	struct blob *last_base64; /* the previous base64 output */
};

/* The work of one capture. Under the framebuffer lock, the output rows of
 * the bands that changed are made (scaled, pointer drawn in) straight from
 * the screen's rows they need; compression happens after the lock is let
 * go. So a capture holds memory for its output, not for the screen. */
struct capture {
	const struct vnc_capture_request *request;
	uint8_t *rgb; /* output rows as RGB (those of dirty bands) */
	size_t rgb_stride;
	uint8_t *scratch;               /* one band's source rows, to draw the pointer in */
	int *column_start, *column_end; /* source columns of each output column */
	struct band *bands;
	int band_count;
	bool want_base64;
	atomic_int next_band;
	atomic_bool failed;
};

struct vnc_capture_cache *vnc_capture_cache_create(void)
{
	struct vnc_capture_cache *cache = calloc(1, sizeof(*cache));
	if (cache)
		pthread_mutex_init(&cache->lock, NULL);
	return cache;
}

static void free_bands(struct band *bands, int count)
{
	for (int i = 0; i < count; i++) {
		free(bands[i].data);
		free(bands[i].base64);
	}
	free(bands);
}

void vnc_capture_cache_destroy(struct vnc_capture_cache *cache)
{
	if (!cache)
		return;
	free_bands(cache->bands, cache->band_count);
	blob_unref(cache->last_base64);
	pthread_mutex_destroy(&cache->lock);
	free(cache);
}

static bool same_geometry(const struct vnc_capture_request *a, const struct vnc_capture_request *b)
{
	return a->source.x == b->source.x && a->source.y == b->source.y &&
	       a->source.width == b->source.width && a->source.height == b->source.height &&
	       a->width == b->width && a->height == b->height && a->with_cursor == b->with_cursor;
}

/* Output row or column i covers source [start, end): a box filter. */
static void map_span(int i, int out_size, int source_size, int *start, int *end)
{
	*start = (int)((long long)i * source_size / out_size);
	*end = (int)((long long)(i + 1) * source_size / out_size);
	if (*end <= *start)
		*end = *start + 1;
}

static struct band *make_bands(const struct vnc_capture_request *r, int *count)
{
	*count = (r->height + BAND_ROWS - 1) / BAND_ROWS;
	struct band *bands = calloc((size_t)*count, sizeof(*bands));
	if (!bands)
		return NULL;
	for (int i = 0; i < *count; i++) {
		struct band *b = &bands[i];
		b->out_y0 = i * BAND_ROWS;
		b->out_y1 = b->out_y0 + BAND_ROWS < r->height ? b->out_y0 + BAND_ROWS : r->height;
		int unused;
		map_span(b->out_y0, r->height, r->source.height, &b->src_y0, &unused);
		map_span(b->out_y1 - 1, r->height, r->source.height, &unused, &b->src_y1);
	}
	return bands;
}

static bool rects_overlap(const struct vnc_rect *a, const struct vnc_rect *b)
{
	return a->x < b->x + b->width && b->x < a->x + a->width && a->y < b->y + b->height &&
	       b->y < a->y + a->height;
}

/* Output row out_y as RGB, averaged from the source box it covers. rows
 * holds source rows from first_row on (counted within the source rect),
 * stride bytes apart, starting at the source rect's left edge. */
static void scale_row(const struct capture *c, const uint8_t *rows, size_t stride, int first_row,
		      int out_y, uint8_t *rgb)
{
	const struct vnc_capture_request *r = c->request;
	int y0, y1;
	map_span(out_y, r->height, r->source.height, &y0, &y1);
	if (r->width == r->source.width && y1 - y0 == 1) {
		const uint8_t *src = rows + (size_t)(y0 - first_row) * stride;
		for (int x = 0; x < r->width; x++, src += 4, rgb += 3)
			memcpy(rgb, src, 3);
		return;
	}
	for (int x = 0; x < r->width; x++, rgb += 3) {
		unsigned sum[3] = { 0, 0, 0 }, n = 0;
		for (int y = y0; y < y1; y++) {
			const uint8_t *src = rows + (size_t)(y - first_row) * stride;
			for (int sx = c->column_start[x]; sx < c->column_end[x]; sx++, n++) {
				sum[0] += src[sx * 4];
				sum[1] += src[sx * 4 + 1];
				sum[2] += src[sx * 4 + 2];
			}
		}
		for (int k = 0; k < 3; k++)
			rgb[k] = (uint8_t)((sum[k] + n / 2) / n);
	}
}

/* Under the framebuffer lock: decide which bands changed and make their
 * output rows, pointer included. */
static void collect_dirty(struct capture *c, const struct vnc_framebuffer_view *view)
{
	const struct vnc_capture_request *r = c->request;
	for (int i = 0; i < c->band_count; i++) {
		struct band *b = &c->bands[i];
		struct vnc_rect area = { r->source.x, r->source.y + b->src_y0, r->source.width,
					 b->src_y1 - b->src_y0 };
		uint64_t newest = 0;
		for (int y = area.y; y < area.y + area.height; y++)
			if (view->row_version[y] > newest)
				newest = view->row_version[y];
		bool has_cursor = r->with_cursor && view->cursor.width > 0 &&
				  rects_overlap(&view->cursor, &area);
		bool cursor_moved = r->with_cursor && view->cursor_version != b->cursor_version &&
				    (has_cursor || b->had_cursor);
		b->dirty = !b->valid || newest > b->version || cursor_moved;
		if (!b->dirty)
			continue;
		b->version = newest;
		b->cursor_version = view->cursor_version;
		b->had_cursor = has_cursor;
		const uint8_t *rows = view->pixels + ((size_t)area.y * view->width + area.x) * 4;
		size_t stride = (size_t)view->width * 4;
		if (has_cursor) {
			/* The pointer goes into a copy, before scaling, as it
			 * would look on the screen. */
			size_t row_len = (size_t)area.width * 4;
			for (int y = 0; y < area.height; y++)
				memcpy(c->scratch + (size_t)y * row_len, rows + (size_t)y * stride,
				       row_len);
			vnc_framebuffer_view_draw_cursor(view, c->scratch, (int)row_len, &area);
			rows = c->scratch;
			stride = row_len;
		}
		for (int y = b->out_y0; y < b->out_y1; y++)
			scale_row(c, rows, stride, b->src_y0, y,
				  c->rgb + (size_t)y * c->rgb_stride);
	}
}

/* Raw deflate of one band, ending byte-aligned (sync flush) so bands can
 * be joined. ISA-L's igzip, where built in, is several times faster than
 * zlib at level 1 on desktop content; zlib is the fallback. */
struct compressor {
#ifdef LIZARD_HAVE_ISAL
	struct isal_zstream isal;
	uint8_t *level_buffer;
#else
	z_stream z;
#endif
};

static bool compressor_init(struct compressor *k)
{
	memset(k, 0, sizeof(*k));
#ifdef LIZARD_HAVE_ISAL
	k->level_buffer = malloc(ISAL_DEF_LVL1_DEFAULT);
	return k->level_buffer != NULL;
#else
	return deflateInit2(&k->z, 1, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY) == Z_OK;
#endif
}

static void compressor_finish(struct compressor *k)
{
#ifdef LIZARD_HAVE_ISAL
	free(k->level_buffer);
#else
	deflateEnd(&k->z);
#endif
}

static size_t compress_bound(size_t len)
{
	/* Stored blocks at worst: 5 bytes per 64 KiB, plus flush and slack. */
	return len + len / 16 + 1024;
}

/* Deflates in into out; returns the output length, 0 on failure. */
static size_t compress_raw(struct compressor *k, uint8_t *in, size_t in_len, uint8_t *out,
			   size_t out_size)
{
#ifdef LIZARD_HAVE_ISAL
	struct isal_zstream *z = &k->isal;
	isal_deflate_init(z);
	z->level = 1;
	z->level_buf = k->level_buffer;
	z->level_buf_size = ISAL_DEF_LVL1_DEFAULT;
	z->gzip_flag = IGZIP_DEFLATE;
	z->flush = SYNC_FLUSH;
	z->end_of_stream = 0;
	z->next_in = in;
	z->avail_in = (uint32_t)in_len;
	z->next_out = out;
	z->avail_out = (uint32_t)out_size;
	if (isal_deflate(z) != COMP_OK || z->avail_in != 0)
		return 0;
	return out_size - z->avail_out;
#else
	z_stream *z = &k->z;
	if (deflateReset(z) != Z_OK)
		return 0;
	z->next_in = in;
	z->avail_in = (uInt)in_len;
	z->next_out = out;
	z->avail_out = (uInt)out_size;
	if (deflate(z, Z_SYNC_FLUSH) != Z_OK || z->avail_in != 0)
		return 0;
	return out_size - z->avail_out;
#endif
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Writes a whole chunk at p; returns the end. */
static uint8_t *put_chunk(uint8_t *p, const char *type, const uint8_t *data, uint32_t len)
{
	put_be32(p, len);
	memcpy(p + 4, type, 4);
	if (len > 0)
		memcpy(p + 8, data, len);
	put_be32(p + 8 + len, (uint32_t)crc32(0, p + 4, len + 4));
	return p + CHUNK_OVERHEAD + len;
}

/* data with room for at least needed bytes, or NULL (data kept) when out
 * of memory. */
static void *grow(void *data, size_t *capacity, size_t needed)
{
	if (needed <= *capacity)
		return data;
	void *grown = realloc(data, needed);
	if (grown)
		*capacity = needed;
	return grown;
}

/* PNG scanlines with the SUB filter, deflated into the band's chunk. */
static bool compress_band(struct capture *c, struct band *b, struct compressor *k, uint8_t *raw)
{
	int width = c->request->width;
	size_t line = 1 + (size_t)width * 3;
	size_t raw_len = 0;
	for (int y = b->out_y0; y < b->out_y1; y++) {
		uint8_t *out = raw + raw_len;
		const uint8_t *rgb = c->rgb + (size_t)y * c->rgb_stride;
		out[0] = 1; /* SUB */
		memcpy(out + 1, rgb, 3);
		for (size_t i = 3; i < (size_t)width * 3; i++)
			out[1 + i] = (uint8_t)(rgb[i] - rgb[i - 3]);
		raw_len += line;
	}

	size_t room = compress_bound(raw_len);
	uint8_t *data = grow(b->data, &b->capacity,
			     CHUNK_OVERHEAD + room + 2 * sizeof(empty_stored_block));
	if (!data)
		return false;
	b->data = data;
	size_t n = compress_raw(k, raw, raw_len, b->data + 8, room);
	if (n == 0 || n > 0x7fffffff - 2 * sizeof(empty_stored_block))
		return false;
	/* One empty block adds 5 bytes, two add 10: 2 and 1 more, modulo 3. */
	for (size_t pads = n % 3 == 1 ? 1 : n % 3 == 2 ? 2 : 0; pads > 0; pads--) {
		memcpy(b->data + 8 + n, empty_stored_block, sizeof(empty_stored_block));
		n += sizeof(empty_stored_block);
	}
	put_be32(b->data, (uint32_t)n);
	memcpy(b->data + 4, "IDAT", 4);
	put_be32(b->data + 8 + n, (uint32_t)crc32(0, b->data + 4, (uInt)n + 4));
	b->len = CHUNK_OVERHEAD + n;
	b->raw_len = raw_len;
	b->adler = (uint32_t)adler32(adler32(0, Z_NULL, 0), raw, (uInt)raw_len);
	b->base64_valid = false;
	b->valid = true;
	return true;
}

static bool encode_band_base64(struct band *b)
{
	char *text = grow(b->base64, &b->base64_capacity, base64_encoded_len(b->len));
	if (!text)
		return false;
	b->base64 = text;
	b->base64_len = base64_encode_into(b->base64, b->data, b->len);
	b->base64_valid = true;
	return true;
}

static bool band_needs_work(const struct capture *c, const struct band *b)
{
	return b->dirty || (c->want_base64 && !b->base64_valid);
}

static void *compress_worker(void *arg)
{
	struct capture *c = arg;
	size_t line = 1 + (size_t)c->request->width * 3;
	uint8_t *raw = malloc(line * BAND_ROWS);
	struct compressor k;
	bool ok = raw && compressor_init(&k);
	if (!ok) {
		atomic_store(&c->failed, true);
		free(raw);
		return NULL;
	}
	for (;;) {
		int i = atomic_fetch_add(&c->next_band, 1);
		if (i >= c->band_count || atomic_load(&c->failed))
			break;
		struct band *b = &c->bands[i];
		if (!band_needs_work(c, b))
			continue;
		if ((b->dirty && !compress_band(c, b, &k, raw)) ||
		    (c->want_base64 && !encode_band_base64(b))) {
			b->valid = false;
			atomic_store(&c->failed, true);
		}
	}
	compressor_finish(&k);
	free(raw);
	return NULL;
}

/* Compresses (and encodes, when base64 is wanted) the bands that need it,
 * spread over the cores. */
static bool update_bands(struct capture *c)
{
	int work = 0;
	for (int i = 0; i < c->band_count; i++)
		work += band_needs_work(c, &c->bands[i]);
	if (work == 0)
		return true;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	int threads = cores > 1 ? (int)cores : 1;
	if (threads > MAX_THREADS)
		threads = MAX_THREADS;
	if (threads > work / 2)
		threads = work / 2 > 0 ? work / 2 : 1;
	pthread_t helpers[MAX_THREADS];
	int started = 0;
	for (int i = 1; i < threads; i++)
		if (pthread_create(&helpers[started], NULL, compress_worker, c) == 0)
			started++;
	compress_worker(c);
	for (int i = 0; i < started; i++)
		pthread_join(helpers[i], NULL);
	if (!atomic_load(&c->failed))
		return true;
	/* Workers stop at the first failure: bands they never reached must not
	 * pass for current next time. */
	for (int i = 0; i < c->band_count; i++)
		if (c->bands[i].dirty)
			c->bands[i].valid = false;
	return false;
}

static void png_prefix(const struct vnc_capture_request *r, uint8_t out[PNG_PREFIX_LEN])
{
	static const uint8_t signature[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	uint8_t zlib_start[12] = { 0x78, 0x01 }; /* deflate, 32 KiB window, no dictionary */
	memcpy(zlib_start + 2, empty_stored_block, 5);
	memcpy(zlib_start + 7, empty_stored_block, 5);
	uint8_t ihdr[13] = { 0 };
	put_be32(ihdr, (uint32_t)r->width);
	put_be32(ihdr + 4, (uint32_t)r->height);
	ihdr[8] = 8; /* bits per channel */
	ihdr[9] = 2; /* RGB */
	memcpy(out, signature, sizeof(signature));
	uint8_t *p = put_chunk(out + sizeof(signature), "IHDR", ihdr, sizeof(ihdr));
	put_chunk(p, "IDAT", zlib_start, sizeof(zlib_start));
}

static void png_suffix(const struct capture *c, uint8_t out[PNG_SUFFIX_LEN])
{
	uint32_t adler = (uint32_t)adler32(0, Z_NULL, 0);
	for (int i = 0; i < c->band_count; i++)
		adler = (uint32_t)adler32_combine(adler, c->bands[i].adler,
						  (z_off_t)c->bands[i].raw_len);
	uint8_t end[6] = { 0x03, 0x00 }; /* an empty final block, fixed Huffman */
	put_be32(end + 2, adler);
	uint8_t *p = put_chunk(out, "IDAT", end, sizeof(end));
	put_chunk(p, "IEND", NULL, 0);
}

static bool assemble_png(const struct capture *c, struct vnc_bytes *out)
{
	size_t len = PNG_PREFIX_LEN + PNG_SUFFIX_LEN;
	for (int i = 0; i < c->band_count; i++)
		len += c->bands[i].len;
	memset(out, 0, sizeof(*out));
	out->data = malloc(len);
	if (!out->data)
		return false;
	out->len = out->capacity = len;
	uint8_t *p = out->data;
	png_prefix(c->request, p);
	p += PNG_PREFIX_LEN;
	for (int i = 0; i < c->band_count; i++) {
		memcpy(p, c->bands[i].data, c->bands[i].len);
		p += c->bands[i].len;
	}
	png_suffix(c, p);
	return true;
}

static struct blob *assemble_base64(const struct capture *c)
{
	size_t len = base64_encoded_len(PNG_PREFIX_LEN) + base64_encoded_len(PNG_SUFFIX_LEN);
	for (int i = 0; i < c->band_count; i++)
		len += c->bands[i].base64_len;
	struct blob *out = blob_create(len);
	if (!out)
		return NULL;
	uint8_t prefix[PNG_PREFIX_LEN], suffix[PNG_SUFFIX_LEN];
	png_prefix(c->request, prefix);
	png_suffix(c, suffix);
	char *p = out->data;
	p += base64_encode_into(p, prefix, sizeof(prefix));
	for (int i = 0; i < c->band_count; i++) {
		memcpy(p, c->bands[i].base64, c->bands[i].base64_len);
		p += c->bands[i].base64_len;
	}
	base64_encode_into(p, suffix, sizeof(suffix));
	return out;
}

/* The rows are already in c->rgb, built from only the rows they need. */
static void jpeg_row(void *context, int y, uint8_t *rgb)
{
	const struct capture *c = context;
	memcpy(rgb, c->rgb + (size_t)y * c->rgb_stride, (size_t)c->request->width * 3);
}

static bool encode_jpeg(const struct capture *c, struct vnc_bytes *out)
{
	const struct vnc_capture_request *r = c->request;
	return vnc_jpeg_encode_rows(r->width, r->height, r->jpeg_quality, jpeg_row, (void *)c, out);
}

static bool valid_request(const struct vnc_capture_request *r, int screen_width, int screen_height,
			  struct error *err)
{
	const struct vnc_rect *s = &r->source;
	if (screen_width <= 0) {
		error_set(err, 0, "the desktop has no picture yet; try again in a moment");
		return false;
	}
	if (s->x < 0 || s->y < 0 || s->width <= 0 || s->height <= 0 ||
	    s->x + s->width > screen_width || s->y + s->height > screen_height) {
		error_set(err, 0, "region %dx%d at (%d, %d) is not inside the %dx%d screen",
			  s->width, s->height, s->x, s->y, screen_width, screen_height);
		return false;
	}
	if (r->width <= 0 || r->height <= 0 || r->width > s->width || r->height > s->height) {
		error_set(err, 0, "cannot scale %dx%d to %dx%d", s->width, s->height, r->width,
			  r->height);
		return false;
	}
	return true;
}

/* Allocates for bands of request r (already checked against the screen). */
static bool prepare(struct capture *c, const struct vnc_capture_request *r, struct band *bands,
		    int band_count)
{
	c->request = r;
	c->bands = bands;
	c->band_count = band_count;
	c->rgb_stride = (size_t)r->width * 3;
	c->rgb = malloc(c->rgb_stride * (size_t)r->height);
	int band_rows = 0;
	for (int i = 0; i < band_count; i++)
		if (bands[i].src_y1 - bands[i].src_y0 > band_rows)
			band_rows = bands[i].src_y1 - bands[i].src_y0;
	c->scratch = malloc((size_t)r->source.width * 4 * (size_t)band_rows);
	c->column_start = malloc(sizeof(int) * (size_t)r->width);
	c->column_end = malloc(sizeof(int) * (size_t)r->width);
	if (!c->rgb || !c->scratch || !c->column_start || !c->column_end)
		return false;
	for (int x = 0; x < r->width; x++)
		map_span(x, r->width, r->source.width, &c->column_start[x], &c->column_end[x]);
	return true;
}

static void release(struct capture *c)
{
	free(c->rgb);
	free(c->scratch);
	free(c->column_start);
	free(c->column_end);
}

static bool capture_jpeg(struct vnc_framebuffer *fb, const struct vnc_capture_request *r,
			 struct vnc_bytes *out, struct error *err)
{
	struct capture c = { 0 };
	struct vnc_framebuffer_view view;
	vnc_framebuffer_lock_view(fb, &view);
	if (!valid_request(r, view.width, view.height, err)) {
		vnc_framebuffer_unlock_view(&view);
		return false;
	}
	int band_count;
	struct band *bands = make_bands(r, &band_count);
	bool ok = bands && prepare(&c, r, bands, band_count);
	if (ok)
		collect_dirty(&c, &view);
	vnc_framebuffer_unlock_view(&view);
	ok = ok && encode_jpeg(&c, out);
	release(&c);
	free_bands(bands, band_count);
	if (!ok)
		error_set(err, 0, "encoding the JPEG failed (out of memory?)");
	return ok;
}

/* The PNG path: into png, or as base64 into *base64 (exactly one is set). */
static bool capture_png(struct vnc_framebuffer *fb, struct vnc_capture_cache *cache,
			const struct vnc_capture_request *request, struct vnc_bytes *png,
			struct blob **base64, bool *unchanged, struct error *err)
{
	struct vnc_capture_cache scratch_cache = { 0 };
	if (!cache)
		cache = &scratch_cache;
	else
		pthread_mutex_lock(&cache->lock);

	struct capture c = { .want_base64 = base64 != NULL };
	bool ok = false;
	struct vnc_framebuffer_view view;
	vnc_framebuffer_lock_view(fb, &view);
	if (!valid_request(request, view.width, view.height, err)) {
		vnc_framebuffer_unlock_view(&view);
		goto out;
	}
	if (!cache->bands || !same_geometry(&cache->key, request)) {
		free_bands(cache->bands, cache->band_count);
		blob_unref(cache->last_base64);
		cache->last_base64 = NULL;
		cache->key = *request;
		cache->bands = make_bands(request, &cache->band_count);
	}
	if (!cache->bands || !prepare(&c, request, cache->bands, cache->band_count)) {
		vnc_framebuffer_unlock_view(&view);
		error_set(err, 0, "out of memory capturing the screen");
		goto out;
	}
	collect_dirty(&c, &view);
	vnc_framebuffer_unlock_view(&view);

	int dirty = 0;
	for (int i = 0; i < c.band_count; i++)
		dirty += c.bands[i].dirty;
	if (getenv("LIZARD_DEBUG_BANDS")) {
		char map[512];
		int n = 0;
		for (int i = 0; i < c.band_count && n < 500; i++)
			map[n++] = c.bands[i].dirty ? '#' : '.';
		map[n] = 0;
		fprintf(stderr, "bands %s\n", map);
	}
	if (unchanged)
		*unchanged = dirty == 0;
	if (base64 && dirty == 0 && cache->last_base64) {
		/* Nothing moved: the previous text is this one. */
		*base64 = blob_ref(cache->last_base64);
		ok = true;
	} else if (!update_bands(&c)) {
		ok = false;
	} else if (base64) {
		*base64 = assemble_base64(&c);
		ok = *base64 != NULL;
		if (ok && cache != &scratch_cache) {
			blob_unref(cache->last_base64);
			cache->last_base64 = blob_ref(*base64);
		}
	} else {
		ok = assemble_png(&c, png);
	}
	if (!ok) {
		if (unchanged)
			*unchanged = false;
		error_set(err, 0, "encoding the screenshot failed (out of memory?)");
	}

out:
	release(&c);
	if (cache == &scratch_cache)
		free_bands(cache->bands, cache->band_count);
	else
		pthread_mutex_unlock(&cache->lock);
	return ok;
}

bool vnc_capture(struct vnc_framebuffer *fb, struct vnc_capture_cache *cache,
		 const struct vnc_capture_request *request, struct vnc_bytes *out, bool *unchanged,
		 struct error *err)
{
	memset(out, 0, sizeof(*out));
	if (unchanged)
		*unchanged = false;
	if (request->format == VNC_FORMAT_JPEG)
		return capture_jpeg(fb, request, out, err);
	return capture_png(fb, cache, request, out, NULL, unchanged, err);
}

bool vnc_capture_base64(struct vnc_framebuffer *fb, struct vnc_capture_cache *cache,
			const struct vnc_capture_request *request, struct blob **out,
			bool *unchanged, struct error *err)
{
	*out = NULL;
	if (unchanged)
		*unchanged = false;
	if (request->format == VNC_FORMAT_PNG)
		return capture_png(fb, cache, request, NULL, out, unchanged, err);
	struct vnc_bytes jpeg;
	if (!capture_jpeg(fb, request, &jpeg, err))
		return false;
	*out = base64_encode(jpeg.data, jpeg.len);
	if (!*out)
		error_set(err, 0, "out of memory encoding the screenshot");
	vnc_bytes_finish(&jpeg);
	return *out != NULL;
}
