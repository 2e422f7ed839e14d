/* SPDX-License-Identifier: MIT */
#include "vnc/png.h"

#include "vnc/framebuffer.h"

#include <png.h>
#include <stdio.h> /* jpeglib.h needs FILE */
#include <jpeglib.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

bool vnc_bytes_append(struct vnc_bytes *b, const void *data, size_t len)
{
	if (len == 0)
		return true; /* data may be NULL then, which memcpy must not get */
	if (len > SIZE_MAX - b->len)
		return false;
	if (b->len + len > b->capacity) {
		size_t capacity = b->capacity ? b->capacity : 65536;
		while (capacity < b->len + len)
			capacity *= 2;
		uint8_t *grown = realloc(b->data, capacity);
		if (!grown)
			return false;
		b->data = grown;
		b->capacity = capacity;
	}
	memcpy(b->data + b->len, data, len);
	b->len += len;
	return true;
}

void vnc_bytes_finish(struct vnc_bytes *bytes)
{
	free(bytes->data);
	memset(bytes, 0, sizeof(*bytes));
}

struct write_state {
	struct vnc_bytes *out;
	bool failed;
};

static void write_data(png_structp png, png_bytep data, png_size_t len)
{
	struct write_state *state = png_get_io_ptr(png);
	if (!state->failed && !vnc_bytes_append(state->out, data, len))
		state->failed = true;
}

static void flush_data(png_structp png)
{
	(void)png;
}

/* The image's colours when there are at most 256 of them: palette gets
 * them (0xRRGGBB) and indices one byte a pixel. Returns how many, or 0 when
 * there are more. */
static int palette_of(const struct vnc_image *image, uint32_t palette[256], uint8_t *indices)
{
	/* Open addressing over 1024 slots keeps 256 colours at most a quarter full. */
	uint32_t keys[1024];
	uint8_t values[1024];
	memset(keys, 0, sizeof(keys));
	int count = 0;
	uint32_t last = 0;
	uint8_t last_index = 0;
	size_t pixels = (size_t)image->width * image->height;
	for (size_t i = 0; i < pixels; i++) {
		const uint8_t *p = image->pixels + i * 4;
		uint32_t colour = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
		if (i > 0 && colour == last) {
			indices[i] = last_index; /* runs are the common case */
			continue;
		}
		uint32_t key = colour | 1u << 24, slot = (key * 2654435761u) >> 22;
		while (keys[slot] && keys[slot] != key)
			slot = (slot + 1) & 1023;
		if (!keys[slot]) {
			if (count == 256)
				return 0;
			keys[slot] = key;
			values[slot] = (uint8_t)count;
			palette[count++] = colour;
		}
		last = colour;
		last_index = indices[i] = values[slot];
	}
	return count;
}

/* Few colours (text, flat areas, what a desktop mostly shows): a palette
 * of 1, 2, 4 or 8 bits a pixel, which takes a third to a twenty-fourth of
 * the bytes before deflate and far less after it. */
static void start_indexed(png_structp png, png_infop info, const struct vnc_image *image,
			  const uint32_t *palette, int colours)
{
	png_color entries[256];
	for (int i = 0; i < colours; i++)
		entries[i] = (png_color){ (png_byte)(palette[i] >> 16), (png_byte)(palette[i] >> 8),
					  (png_byte)palette[i] };
	int depth = colours <= 2 ? 1 : colours <= 4 ? 2 : colours <= 16 ? 4 : 8;
	/* Level 1, as for RGB: while Chromium scrolled, level 6 saved the
	 * viewer 12% of its bytes but cost the bridge more CPU, and changes
	 * showed later (103-127 ms against 79-112). No filter: filters do not
	 * help palettes. */
	png_set_compression_level(png, 1);
	png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE);
	png_set_IHDR(png, info, (png_uint_32)image->width, (png_uint_32)image->height, depth,
		     PNG_COLOR_TYPE_PALETTE, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_BASE,
		     PNG_FILTER_TYPE_BASE);
	png_set_PLTE(png, info, entries, colours);
	png_write_info(png, info);
	png_set_packing(png); /* rows hold one index a byte; libpng packs them */
}

static void start_rgb(png_structp png, png_infop info, const struct vnc_image *image)
{
	/* Desktop content is flat areas and text: level 1 with the SUB filter
	 * keeps most of the size win of heavier settings at a fraction of the
	 * time. */
	png_set_compression_level(png, 1);
	png_set_compression_strategy(png, Z_DEFAULT_STRATEGY);
	png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_SUB);
	png_set_IHDR(png, info, (png_uint_32)image->width, (png_uint_32)image->height, 8,
		     PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_BASE,
		     PNG_FILTER_TYPE_BASE);
	png_write_info(png, info);
	png_set_filler(png, 0, PNG_FILLER_AFTER); /* drop the X byte */
}

/* With a palette when colours > 0 (indices one byte a pixel), else RGB. */
static bool write_png(const struct vnc_image *image, const uint32_t *palette, int colours,
		      const uint8_t *indices, struct vnc_bytes *out)
{
	memset(out, 0, sizeof(*out));
	struct write_state state = { .out = out };
	png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
	if (!png)
		return false;
	png_infop info = png_create_info_struct(png);
	if (!info) {
		png_destroy_write_struct(&png, NULL);
		return false;
	}
	if (setjmp(png_jmpbuf(png))) {
		png_destroy_write_struct(&png, &info);
		vnc_bytes_finish(out);
		return false;
	}
	png_set_write_fn(png, &state, write_data, flush_data);
	if (colours > 0)
		start_indexed(png, info, image, palette, colours);
	else
		start_rgb(png, info, image);
	for (int y = 0; y < image->height; y++)
		png_write_row(png, colours > 0 ? indices + (size_t)y * image->width
					       : image->pixels + (size_t)y * image->width * 4);
	png_write_end(png, NULL);
	png_destroy_write_struct(&png, &info);
	if (state.failed) {
		vnc_bytes_finish(out);
		return false;
	}
	return true;
}

bool vnc_png_encode(const struct vnc_image *image, struct vnc_bytes *out)
{
	uint32_t palette[256];
	uint8_t *indices = malloc((size_t)image->width * image->height + 1);
	int colours = indices ? palette_of(image, palette, indices) : 0;
	bool ok = write_png(image, palette, colours, indices, out);
	free(indices);
	return ok;
}

bool vnc_indexed_encode(const struct vnc_image *image, struct vnc_indexed *out)
{
	memset(out, 0, sizeof(*out));
	uint32_t palette[256];
	size_t pixels = (size_t)image->width * image->height;
	uint8_t *indices = malloc(pixels + 1);
	int colours = indices ? palette_of(image, palette, indices) : 0;
	if (colours == 0) {
		free(indices);
		return false;
	}
	int depth = colours <= 2 ? 1 : colours <= 4 ? 2 : colours <= 16 ? 4 : 8;
	size_t row_bytes = ((size_t)image->width * depth + 7) / 8;
	uint8_t *packed = calloc(row_bytes * image->height + 1, 1);
	uLongf len = compressBound((uLong)(row_bytes * image->height));
	out->packed.data = packed ? malloc(len) : NULL;
	if (!out->packed.data) {
		free(indices);
		free(packed);
		return false;
	}
	/* Like a PNG's rows: the first pixel in the high bits of a byte. */
	for (int y = 0; y < image->height; y++) {
		uint8_t *row = packed + (size_t)y * row_bytes;
		const uint8_t *from = indices + (size_t)y * image->width;
		for (int x = 0; x < image->width; x++) {
			int bit = x * depth;
			row[bit / 8] |= (uint8_t)(from[x] << (8 - depth - bit % 8));
		}
	}
	int rc = compress2(out->packed.data, &len, packed, (uLong)(row_bytes * image->height), 6);
	free(indices);
	free(packed);
	if (rc != Z_OK) {
		vnc_bytes_finish(&out->packed);
		return false;
	}
	out->packed.len = out->packed.capacity = len;
	out->colours = colours;
	out->depth = depth;
	for (int i = 0; i < colours; i++) {
		out->palette[i * 3] = (uint8_t)(palette[i] >> 16);
		out->palette[i * 3 + 1] = (uint8_t)(palette[i] >> 8);
		out->palette[i * 3 + 2] = (uint8_t)palette[i];
	}
	return true;
}

/* Rows come from rgbx (4 bytes a pixel, as is) or from row() (RGB). */
static bool jpeg_encode(int width, int height, int quality, const struct vnc_image *rgbx,
			void (*row)(void *, int, uint8_t *), void *context, struct vnc_bytes *out)
{
	memset(out, 0, sizeof(*out));
	if (width <= 0 || height <= 0 || quality < 1 || quality > 100)
		return false;
	uint8_t *rgb = rgbx ? NULL : malloc((size_t)width * 3);
	if (!rgbx && !rgb)
		return false;
	struct jpeg_compress_struct jpeg;
	struct jpeg_error_mgr errors;
	jpeg.err = jpeg_std_error(&errors);
	jpeg_create_compress(&jpeg);
	unsigned char *buffer = NULL;
	unsigned long size = 0;
	jpeg_mem_dest(&jpeg, &buffer, &size);
	jpeg.image_width = (JDIMENSION)width;
	jpeg.image_height = (JDIMENSION)height;
	/* libjpeg-turbo reads our RGBX pixels as they are. */
	jpeg.input_components = rgbx ? 4 : 3;
	jpeg.in_color_space = rgbx ? JCS_EXT_RGBX : JCS_RGB;
	jpeg_set_defaults(&jpeg);
	jpeg_set_quality(&jpeg, quality, TRUE);
	jpeg_start_compress(&jpeg, TRUE);
	for (int y = 0; y < height; y++) {
		JSAMPROW line = rgb;
		if (rgbx)
			line = rgbx->pixels + (size_t)y * width * 4;
		else
			row(context, y, rgb);
		jpeg_write_scanlines(&jpeg, &line, 1);
	}
	jpeg_finish_compress(&jpeg);
	jpeg_destroy_compress(&jpeg);
	free(rgb);
	out->data = buffer;
	out->len = out->capacity = size;
	return true;
}

bool vnc_jpeg_encode(const struct vnc_image *image, int quality, struct vnc_bytes *out)
{
	return jpeg_encode(image->width, image->height, quality, image, NULL, NULL, out);
}

bool vnc_jpeg_encode_rows(int width, int height, int quality,
			  void (*row)(void *context, int y, uint8_t *rgb), void *context,
			  struct vnc_bytes *out)
{
	return jpeg_encode(width, height, quality, NULL, row, context, out);
}
