/* SPDX-License-Identifier: MIT */
/* The updates a viewer's page applies (see encode.h; their bytes are as
 * bridge/viewer/wire.h lays them out): the damage's pixels copied out of
 * the framebuffer, each rectangle as the cheapest operation that paints it
 * exactly (or, for a page that prefers speed, as JPEG where that pays),
 * the pointer apart, encoded on several threads at once. */
#include "bridge/viewer/encode.h"

#include "bridge/viewer/hub_state.h"
#include "bridge/viewer/wire.h"
#include "vnc/framebuffer.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct bridge_viewer_message *bridge_viewer_message_new(size_t headroom, bool text, size_t len)
{
	struct bridge_viewer_message *m = malloc(sizeof(*m) + headroom + len + 1);
	if (!m)
		return NULL;
	m->refs = 1;
	m->text = text;
	m->len = len;
	return m;
}

/* The damage's pixels (and the pointer's shape), copied while the
 * framebuffer is held so they match the changes replayed. A rectangle of
 * one colour keeps only the colour: a full screen of it would otherwise
 * cost a 4 MB copy before the twelve bytes that say it. */
bool bridge_viewer_snapshot(struct job *job, const struct vnc_framebuffer_view *view)
{
	if (job->pointer_shape && job->pointer.width > 0) {
		job->pointer_rgba = malloc((size_t)job->pointer.width * job->pointer.height *
					   VIEWER_WIRE_POINTER_PIXEL_SIZE);
		if (!job->pointer_rgba)
			return false;
		vnc_framebuffer_view_cursor_image(view, job->pointer_rgba);
	}
	for (int i = 0; i < job->damage.count; i++) {
		const struct vnc_rect *r = &job->damage.rects[i];
		struct vnc_image *image = &job->images[i];
		image->width = r->width;
		image->height = r->height;
		const uint8_t *origin = view->pixels + ((size_t)r->y * view->width + r->x) * 4;
		job->solid[i] = vnc_one_colour(origin, (size_t)view->width * 4, r->width,
					       r->height);
		if (job->solid[i]) {
			memcpy(job->colour[i], origin, sizeof(job->colour[i]));
			continue;
		}
		image->pixels = malloc((size_t)r->width * r->height * 4);
		if (!image->pixels)
			return false;
		for (int y = 0; y < r->height; y++)
			memcpy(image->pixels + (size_t)y * r->width * 4,
			       view->pixels + ((size_t)(r->y + y) * view->width + r->x) * 4,
			       (size_t)r->width * 4);
	}
	return true;
}

/* Photographs have many colours; text and flat areas few. Samples a grid
 * of up to ~1000 pixels into a small hash set. */
static bool photographic(const struct vnc_image *image)
{
	if ((long long)image->width * image->height < JPEG_MIN_AREA)
		return false;
	uint32_t seen[512] = { 0 };
	int distinct = 0;
	int step_x = image->width / 32 + 1, step_y = image->height / 32 + 1;
	for (int y = 0; y < image->height; y += step_y) {
		for (int x = 0; x < image->width; x += step_x) {
			const uint8_t *p = image->pixels + ((size_t)y * image->width + x) * 4;
			uint32_t colour = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2] |
					  1u << 24;
			uint32_t slot = (colour * 2654435761u) >> 23;
			while (seen[slot] && seen[slot] != colour)
				slot = (slot + 1) & 511;
			if (!seen[slot]) {
				seen[slot] = colour;
				if (++distinct > 200)
					return true;
			}
		}
	}
	return false;
}

static void put16(unsigned char **p, int value)
{
	(*p)[0] = (unsigned char)(value >> 8);
	(*p)[1] = (unsigned char)value;
	*p += 2;
}

/* An operation's kind and rectangle. */
static bool put_op(struct vnc_bytes *ops, int kind, const struct vnc_rect *r)
{
	unsigned char head[VIEWER_WIRE_RECT_HEAD_SIZE], *p = head;
	*p++ = (unsigned char)kind;
	put16(&p, r->x);
	put16(&p, r->y);
	put16(&p, r->width);
	put16(&p, r->height);
	return vnc_bytes_append(ops, head, sizeof(head));
}

static bool put_copy(struct vnc_bytes *ops, const struct copy *c)
{
	unsigned char dest[VIEWER_WIRE_COPY_DEST_SIZE], *p = dest;
	put16(&p, c->dest.x);
	put16(&p, c->dest.y);
	return put_op(ops, VIEWER_WIRE_OP_COPY,
		      &(struct vnc_rect){ c->src_x, c->src_y, c->dest.width, c->dest.height }) &&
	       vnc_bytes_append(ops, dest, sizeof(dest));
}

static bool put_length(struct vnc_bytes *ops, size_t len)
{
	unsigned char length[VIEWER_WIRE_LENGTH_SIZE], *p = length;
	put16(&p, (int)(len >> 16));
	put16(&p, (int)(len & 0xffff));
	return vnc_bytes_append(ops, length, sizeof(length));
}

/* Few colours as a palette and packed indices, without a PNG's container. */
static bool put_indexed(struct vnc_bytes *ops, const struct vnc_indexed *indexed,
			const struct vnc_rect *r)
{
	unsigned char format[VIEWER_WIRE_INDEXED_FORMAT_SIZE] = {
		(unsigned char)indexed->depth, (unsigned char)(indexed->colours - 1)
	};
	return put_op(ops, VIEWER_WIRE_OP_INDEXED, r) &&
	       vnc_bytes_append(ops, format, sizeof(format)) &&
	       vnc_bytes_append(ops, indexed->palette,
				(size_t)indexed->colours * VIEWER_WIRE_PALETTE_ENTRY_SIZE) &&
	       put_length(ops, indexed->packed.len) &&
	       vnc_bytes_append(ops, indexed->packed.data, indexed->packed.len);
}

/* The pixels of screen rectangle r: small ones of few colours indexed,
 * else PNG (with a palette when it fits) or (lossy) JPEG. */
static bool put_image(struct vnc_bytes *ops, const struct vnc_image *image,
		      const struct vnc_rect *r, bool lossy)
{
	struct vnc_indexed indexed;
	if (!lossy && (long long)r->width * r->height <= INDEXED_MAX_AREA &&
	    vnc_indexed_encode(image, &indexed)) {
		bool ok = put_indexed(ops, &indexed, r);
		vnc_bytes_finish(&indexed.packed);
		return ok;
	}
	struct vnc_bytes encoded;
	if (!(lossy ? vnc_jpeg_encode(image, JPEG_QUALITY, &encoded)
		    : vnc_png_encode(image, &encoded)))
		return false;
	bool ok = put_op(ops, lossy ? VIEWER_WIRE_OP_JPEG : VIEWER_WIRE_OP_PNG, r) &&
		  put_length(ops, encoded.len) && vnc_bytes_append(ops, encoded.data, encoded.len);
	vnc_bytes_finish(&encoded);
	return ok;
}

/* Damage rectangle i as an operation: a fill of twelve bytes when it is
 * one colour, else an image, JPEG when lossy pays. */
static bool put_damage(struct vnc_bytes *ops, struct job *job, int i)
{
	const struct vnc_rect *r = &job->damage.rects[i];
	const struct vnc_image *image = &job->images[i];
	job->lossy[i] = false;
	if (job->solid[i])
		return put_op(ops, VIEWER_WIRE_OP_FILL, r) &&
		       vnc_bytes_append(ops, job->colour[i], VIEWER_WIRE_FILL_COLOUR_SIZE);
	job->lossy[i] = job->fast && photographic(image);
	return put_image(ops, image, r, job->lossy[i]);
}

/* The pointer's shape and place, or only its place. The pointer is never
 * in the pixels sent: the page draws it over its canvas after each update,
 * as the screen shows it, so it moving costs five bytes and a copy never
 * carries it along. */
static bool put_pointer(struct vnc_bytes *ops, const struct job *job)
{
	if (job->pointer_shape)
		return put_op(ops, VIEWER_WIRE_OP_POINTER, &job->pointer) &&
		       vnc_bytes_append(ops, job->pointer_rgba,
					(size_t)job->pointer.width * job->pointer.height *
						VIEWER_WIRE_POINTER_PIXEL_SIZE);
	unsigned char op[VIEWER_WIRE_POINTER_MOVED_SIZE], *p = op;
	*p++ = VIEWER_WIRE_OP_POINTER_MOVED;
	put16(&p, job->pointer.x);
	put16(&p, job->pointer.y);
	return vnc_bytes_append(ops, op, sizeof(op));
}

static void *encoder_main(void *arg)
{
	struct encoding *e = arg;
	for (int n; (n = atomic_fetch_add(&e->next, 1)) < e->item_count;) {
		struct job *job = &e->jobs[e->items[n] / BRIDGE_REGION_MAX];
		int i = e->items[n] % BRIDGE_REGION_MAX;
		job->parts[i] = (struct vnc_bytes){ 0 };
		job->part_ok[i] = put_damage(&job->parts[i], job, i);
	}
	return NULL;
}

/* Every damage rectangle of the jobs that encode their own, spread over
 * the cores when there is enough: one viewer's large update (a page
 * scrolled) and several viewers in different states alike. */
void bridge_viewer_encode_images(struct job *jobs, int count)
{
	struct encoding e = { .jobs = jobs }; /* 6 KiB */
	long long pixels = 0;
	for (int j = 0; j < count; j++) {
		if (jobs[j].resized || jobs[j].same_as >= 0)
			continue;
		for (int i = 0; i < jobs[j].damage.count; i++) {
			e.items[e.item_count++] = j * BRIDGE_REGION_MAX + i;
			pixels += (long long)jobs[j].damage.rects[i].width *
				  jobs[j].damage.rects[i].height;
		}
	}
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	int threads = pixels < PARALLEL_MIN_PIXELS || cores < 2 ? 1
		      : cores > MAX_ENCODERS                    ? MAX_ENCODERS
								: (int)cores;
	if (threads > e.item_count)
		threads = e.item_count;
	pthread_t helpers[MAX_ENCODERS];
	int started = 0;
	for (int i = 1; i < threads; i++)
		if (pthread_create(&helpers[started], NULL, encoder_main, &e) == 0)
			started++;
	encoder_main(&e);
	for (int i = 0; i < started; i++)
		pthread_join(helpers[i], NULL);
}

/* The job's message, from its encoded parts, in the order the page
 * applies them: copies, then pixels, then the pointer. */
struct bridge_viewer_message *bridge_viewer_encode(struct bridge_viewers *v, struct job *job)
{
	struct vnc_bytes ops = { 0 };
	bool ok = true;
	for (int i = 0; ok && i < job->copy_count; i++)
		ok = put_copy(&ops, &job->copies[i]);
	for (int i = 0; ok && i < job->damage.count; i++)
		ok = job->part_ok[i] &&
		     vnc_bytes_append(&ops, job->parts[i].data, job->parts[i].len);
	if (ok && (job->pointer_shape || job->pointer_moved))
		ok = put_pointer(&ops, job);
	struct bridge_viewer_message *m = ok ? bridge_viewer_message_new(v->headroom, false,
									 ops.len)
					     : NULL;
	if (m)
		memcpy(m->data + v->headroom, ops.data, ops.len);
	vnc_bytes_finish(&ops);
	return m;
}

void bridge_viewer_free_pixels(struct job *job)
{
	for (int i = 0; i < job->damage.count; i++) {
		free(job->images[i].pixels);
		job->images[i].pixels = NULL;
		vnc_bytes_finish(&job->parts[i]);
	}
	free(job->pointer_rgba);
	job->pointer_rgba = NULL;
}
