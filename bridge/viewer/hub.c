#include "bridge/viewer/hub.h"

#include "bridge/viewer/region.h"

#include "util/clock.h"
#include "util/log.h"
#include "vnc/capture.h"
#include "vnc/conn.h"
#include "vnc/framebuffer.h"
#include "vnc/png.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* The hub wakes when the framebuffer changes or a viewer becomes ready
 * (acknowledged, sent, joined); with neither it looks again after this
 * long, for lossy regions due their exact refresh. */
#define IDLE_WAIT_MS 50
/* Flow control: a viewer gets another update while fewer than this many
 * are unpainted (the page acknowledges each once painted), and the bytes
 * of those stay under MAX_IN_FLIGHT_BYTES (one update may be larger). */
#define MAX_IN_FLIGHT 2
#define MAX_IN_FLIGHT_BYTES (1u << 20)
/* Copies kept per viewer; more turn into pixels. */
#define MAX_COPIES 16
/* Viewers served per round; the rest get theirs in the next. */
#define MAX_JOBS 64
/* Lossy regions get their exact pixels once they have been still this long. */
#define LOSSY_REFRESH_MS 300
#define JPEG_QUALITY 60
#define JPEG_MIN_AREA (128 * 128)
/* Larger images of few colours go as palette PNGs: the browser decodes
 * those natively off the page's thread, where the page's own lookup of
 * indices would hold up painting (a scrolling page fell from 28 to 9
 * updates a second); a PNG's container only matters for small ones. */
#define INDEXED_MAX_AREA (128 * 128)
/* A round's images are encoded on up to this many threads (the cores, at
 * most), when they hold at least PARALLEL_MIN_PIXELS: below that a thread
 * costs more than it saves. */
#define MAX_ENCODERS 8
#define PARALLEL_MIN_PIXELS (256 * 256)

/* A copy within the canvas, as the page applies it. */
struct copy {
	struct vnc_rect dest;
	int src_x, src_y;
};

struct bridge_viewer {
	struct bridge_viewers *hub;
	uint64_t id; /* unique per hub: survives the pointer being reused */
	enum bridge_viewer_role role;
	bool detached, kicked;
	struct bridge_viewer_message *pending; /* given to the server, not yet sent */
	struct bridge_viewer_message *next;    /* ready for the server to take */
	int width, height;                     /* the size it was told */
	/* What its canvas lacks: the copies to make, in order, then the
	 * pixels of damage painted from the framebuffer. */
	uint64_t change_serial;                /* next framebuffer change to replay */
	struct copy copies[MAX_COPIES];
	int copy_count;
	struct bridge_region damage;
	struct bridge_region lossy;            /* painted from JPEG, to refresh */
	int64_t lossy_ms;                      /* when lossy last grew */
	bool fast;                             /* the page prefers JPEG where it pays */
	/* The pointer, which the page draws over its canvas itself: the
	 * shape it was sent and where. */
	bool pointer_known;
	uint64_t pointer_shape_version;
	struct vnc_rect pointer;
	size_t in_flight[MAX_IN_FLIGHT];       /* sizes of updates not yet painted */
	int in_flight_count;
	/* What it holds down on the desktop, released when it goes. Only the
	 * connection's thread touches these. */
	struct { uint32_t code, keysym; } held[BRIDGE_VIEWER_MAX_HELD];
	int held_count;
	int buttons, pointer_x, pointer_y;
	uint64_t state_seen;                   /* the hub's state_version it was told */
	uint64_t clipboard_seen;               /* the hub's clipboard_version it was given */
	struct bridge_viewer *next_viewer;
};

/* One update to make: for a viewer, or shared with an earlier job whose
 * viewer needs exactly the same (same_as). */
struct job {
	uint64_t viewer; /* by id: it may leave while we encode */
	bool resized, fast;
	int same_as;
	struct copy copies[MAX_COPIES];
	int copy_count;
	struct bridge_region damage;
	/* The pointer's new shape (RGBA, pointer.width x pointer.height) or
	 * only its new place, when it changed. */
	bool pointer_shape, pointer_moved;
	uint64_t pointer_shape_version;
	struct vnc_rect pointer;
	uint8_t *pointer_rgba;
	struct vnc_image images[BRIDGE_REGION_MAX]; /* the damage's pixels, when same_as < 0 */
	/* Or, for a rectangle of one colour, only that colour (no pixels). */
	bool solid[BRIDGE_REGION_MAX];
	uint8_t colour[BRIDGE_REGION_MAX][3];
	bool lossy[BRIDGE_REGION_MAX];
	/* Each damage rectangle's operation, encoded on any thread. */
	struct vnc_bytes parts[BRIDGE_REGION_MAX];
	bool part_ok[BRIDGE_REGION_MAX];
	struct bridge_viewer_message *made;
};

/* The images of one round, shared out among encoder threads. */
struct encoding {
	struct job *jobs;
	int items[MAX_JOBS * BRIDGE_REGION_MAX]; /* job * BRIDGE_REGION_MAX + rect */
	int item_count;
	atomic_int next;
};

struct bridge_viewers {
	struct vnc_framebuffer *fb;
	size_t headroom;
	void (*wake)(void *);
	void *wake_context;

	pthread_mutex_t lock;
	pthread_cond_t changed;
	char control_token[33], view_token[33];
	struct bridge_viewer *viewers;
	int count;
	uint64_t next_id;
	bool ended, stopping, running;
	bool news;              /* something changed since the hub last looked */
	bool paused;            /* the session's processes are frozen */
	uint64_t state_version; /* bumped by every pause and resume */
	/* The desktop's newest clipboard text, for control viewers: only the
	 * newest is kept, so a viewer that is behind skips the older ones. */
	struct bridge_viewer_message *clipboard;
	uint64_t clipboard_version;
	pthread_t thread;
	struct job jobs[MAX_JOBS]; /* the hub thread's */
};

static struct bridge_viewer_message *new_message(struct bridge_viewers *v, bool text, size_t len)
{
	struct bridge_viewer_message *m = malloc(sizeof(*m) + v->headroom + len + 1);
	if (!m)
		return NULL;
	m->refs = 1;
	m->text = text;
	m->len = len;
	return m;
}

static void release_locked(struct bridge_viewer_message *m)
{
	if (m && --m->refs == 0)
		free(m);
}

static void random_hex(char out[33])
{
	unsigned char bytes[16];
	if (getrandom(bytes, sizeof(bytes), 0) != (ssize_t)sizeof(bytes)) {
		log_error("no randomness for viewer tokens");
		abort();
	}
	for (int i = 0; i < 16; i++)
		snprintf(out + i * 2, 3, "%02x", bytes[i]);
	memset(bytes, 0, sizeof(bytes));
}

static struct bridge_viewer_message *hello(struct bridge_viewers *v, struct bridge_viewer *viewer,
					    int width, int height)
{
	char text[160];
	int n = snprintf(text, sizeof(text),
			 "{\"type\":\"hello\",\"width\":%d,\"height\":%d,\"role\":\"%s\"}", width,
			 height, viewer->role == BRIDGE_VIEWER_CONTROL ? "control" : "view");
	struct bridge_viewer_message *m = new_message(v, true, (size_t)n);
	if (m)
		memcpy(m->data + v->headroom, text, (size_t)n);
	return m;
}

/* The canvas is unknown (new, resized, fell behind, an update lost): all
 * of it is damage, and nothing else is pending. */
static void repaint_all(struct bridge_viewer *w, int width, int height)
{
	w->copy_count = 0;
	w->damage.count = 0;
	w->lossy.count = 0;
	bridge_region_add(&w->damage, &(struct vnc_rect){ 0, 0, width, height }, width, height);
}

/* A copy the canvas will make: what it shows wrong in the source (damage
 * not yet painted, lossy pixels) is then wrong at the destination too. */
static void replay_copy(struct bridge_viewer *w, const struct vnc_framebuffer_change *c,
			int width, int height)
{
	if (w->copy_count == MAX_COPIES) {
		bridge_region_add(&w->damage, &c->rect, width, height);
		return;
	}
	bridge_region_copied(&w->damage, &c->rect, c->src_x, c->src_y, width, height);
	bridge_region_copied(&w->lossy, &c->rect, c->src_x, c->src_y, width, height);
	w->copies[w->copy_count++] = (struct copy){ c->rect, c->src_x, c->src_y };
}

/* Brings the viewer's account up to the framebuffer's newest change. */
static void replay(struct bridge_viewer *w, const struct vnc_framebuffer_view *view)
{
	struct vnc_framebuffer_change c;
	for (uint64_t serial = w->change_serial; serial < view->change_serial; serial++) {
		if (!vnc_framebuffer_view_change(view, serial, &c)) {
			repaint_all(w, view->width, view->height); /* fell behind the log */
			break;
		}
		if (c.copy)
			replay_copy(w, &c, view->width, view->height);
		else
			bridge_region_add(&w->damage, &c.rect, view->width, view->height);
	}
	w->change_serial = view->change_serial;
}

static bool ready(const struct bridge_viewer *w)
{
	if (w->kicked || w->pending || w->next || w->in_flight_count == MAX_IN_FLIGHT)
		return false;
	size_t bytes = 0;
	for (int i = 0; i < w->in_flight_count; i++)
		bytes += w->in_flight[i];
	return w->in_flight_count == 0 || bytes < MAX_IN_FLIGHT_BYTES;
}

static bool same_work(const struct job *a, const struct job *b)
{
	return !a->resized && !b->resized && a->fast == b->fast && a->copy_count == b->copy_count &&
	       a->pointer_shape == b->pointer_shape && a->pointer_moved == b->pointer_moved &&
	       a->pointer_shape_version == b->pointer_shape_version &&
	       memcmp(&a->pointer, &b->pointer, sizeof(a->pointer)) == 0 &&
	       a->damage.count == b->damage.count &&
	       memcmp(a->copies, b->copies, sizeof(a->copies[0]) * (size_t)a->copy_count) == 0 &&
	       memcmp(a->damage.rects, b->damage.rects,
		      sizeof(a->damage.rects[0]) * (size_t)a->damage.count) == 0;
}

/* The damage's pixels (and the pointer's shape), copied while the
 * framebuffer is held so they match the changes replayed. A rectangle of
 * one colour keeps only the colour: a full screen of it would otherwise
 * cost a 4 MB copy before the twelve bytes that say it. */
static bool snapshot(struct job *job, const struct vnc_framebuffer_view *view)
{
	if (job->pointer_shape && job->pointer.width > 0) {
		job->pointer_rgba = malloc((size_t)job->pointer.width * job->pointer.height * 4);
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
		job->solid[i] = vnc_one_colour(origin, (size_t)view->width * 4, r->width, r->height);
		if (job->solid[i]) {
			memcpy(job->colour[i], origin, 3);
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
			uint32_t colour = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2] | 1u << 24;
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

/* An update is a binary message of operations, applied in order:
 *   1, src x, src y, width, height, dest x, dest y   (16 bits each): copy
 *   2 or 3, x, y, width, height, length (32 bits), a PNG or JPEG: paint
 *   4, x, y, width, height, red, green, blue (8 bits each): fill
 *   5, x, y, width, height, then width * height RGBA pixels (alpha 0 or
 *      255): the pointer's shape, its top left at (x, y) (signed: the
 *      pointer may stick out of the screen); width 0 for none
 *   6, x, y (signed): the pointer's top left moved there
 *   7, x, y, width, height, depth (8 bits: 1, 2, 4 or 8), colours - 1 (8
 *      bits), the palette (R, G, B each), length (32 bits), then zlib data
 *      of the indices, rows packed as a PNG packs them: an image of at
 *      most 256 colours (text, most of a desktop)
 * all big endian. The pointer is never in the pixels sent: the page draws
 * it over its canvas after each update, as the screen shows it, so it
 * moving costs five bytes and a copy never carries it along. */
enum { OP_COPY = 1, OP_PNG = 2, OP_JPEG = 3, OP_FILL = 4, OP_POINTER = 5, OP_POINTER_MOVED = 6,
       OP_INDEXED = 7 };

/* An operation's kind and rectangle. */
static bool put_op(struct vnc_bytes *ops, int kind, const struct vnc_rect *r)
{
	unsigned char head[9], *p = head;
	*p++ = (unsigned char)kind;
	put16(&p, r->x);
	put16(&p, r->y);
	put16(&p, r->width);
	put16(&p, r->height);
	return vnc_bytes_append(ops, head, sizeof(head));
}

static bool put_copy(struct vnc_bytes *ops, const struct copy *c)
{
	unsigned char dest[4], *p = dest;
	put16(&p, c->dest.x);
	put16(&p, c->dest.y);
	return put_op(ops, OP_COPY, &(struct vnc_rect){ c->src_x, c->src_y, c->dest.width,
						      c->dest.height }) &&
	       vnc_bytes_append(ops, dest, sizeof(dest));
}

static bool put_length(struct vnc_bytes *ops, size_t len)
{
	unsigned char length[4], *p = length;
	put16(&p, (int)(len >> 16));
	put16(&p, (int)(len & 0xffff));
	return vnc_bytes_append(ops, length, sizeof(length));
}

/* Few colours as a palette and packed indices, without a PNG's container. */
static bool put_indexed(struct vnc_bytes *ops, const struct vnc_indexed *indexed,
			const struct vnc_rect *r)
{
	unsigned char format[2] = { (unsigned char)indexed->depth,
				    (unsigned char)(indexed->colours - 1) };
	return put_op(ops, OP_INDEXED, r) && vnc_bytes_append(ops, format, sizeof(format)) &&
	       vnc_bytes_append(ops, indexed->palette, (size_t)indexed->colours * 3) &&
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
	bool ok = put_op(ops, lossy ? OP_JPEG : OP_PNG, r) && put_length(ops, encoded.len) &&
		  vnc_bytes_append(ops, encoded.data, encoded.len);
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
		return put_op(ops, OP_FILL, r) && vnc_bytes_append(ops, job->colour[i], 3);
	job->lossy[i] = job->fast && photographic(image);
	return put_image(ops, image, r, job->lossy[i]);
}

/* The pointer's shape and place, or only its place. */
static bool put_pointer(struct vnc_bytes *ops, const struct job *job)
{
	if (job->pointer_shape)
		return put_op(ops, OP_POINTER, &job->pointer) &&
		       vnc_bytes_append(ops, job->pointer_rgba,
					(size_t)job->pointer.width * job->pointer.height * 4);
	unsigned char op[5], *p = op;
	*p++ = OP_POINTER_MOVED;
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
static void encode_images(struct job *jobs, int count)
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
		      : cores > MAX_ENCODERS ? MAX_ENCODERS
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
static struct bridge_viewer_message *encode(struct bridge_viewers *v, struct job *job)
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
	struct bridge_viewer_message *m = ok ? new_message(v, false, ops.len) : NULL;
	if (m)
		memcpy(m->data + v->headroom, ops.data, ops.len);
	vnc_bytes_finish(&ops);
	return m;
}

static void free_pixels(struct job *job)
{
	for (int i = 0; i < job->damage.count; i++) {
		free(job->images[i].pixels);
		job->images[i].pixels = NULL;
		vnc_bytes_finish(&job->parts[i]);
	}
	free(job->pointer_rgba);
	job->pointer_rgba = NULL;
}

/* Decides, under the framebuffer and hub locks, what every viewer ready
 * for more gets; copies the pixels involved. Returns the job count. */
static int plan(struct bridge_viewers *v, const struct vnc_framebuffer_view *view)
{
	int width = view->width, height = view->height, count = 0;
	int64_t now = clock_monotonic_ms();
	for (struct bridge_viewer *w = v->viewers; w; w = w->next_viewer) {
		if (w->kicked || width <= 0)
			continue;
		bool resized = w->width != width || w->height != height;
		if (resized) {
			if (w->pending || w->next || count == MAX_JOBS)
				continue; /* told once what it has is sent */
			w->width = width;
			w->height = height;
			w->change_serial = view->change_serial;
			w->pointer_known = false;
			w->in_flight_count = 0; /* the page starts over on hello */
			repaint_all(w, width, height);
			v->jobs[count++] = (struct job){ .viewer = w->id, .resized = true, .same_as = -1 };
			continue;
		}
		replay(w, view);
		if (!ready(w) || count == MAX_JOBS)
			continue;
		/* Lossy pixels still for a while are sent again, exactly. */
		bool exact_refresh = w->lossy.count > 0 && now - w->lossy_ms >= LOSSY_REFRESH_MS;
		for (int i = 0; exact_refresh && i < w->lossy.count; i++)
			bridge_region_add(&w->damage, &w->lossy.rects[i], width, height);
		if (exact_refresh)
			w->lossy.count = 0;
		bool pointer_shape = !w->pointer_known ||
				     w->pointer_shape_version != view->cursor_shape_version ||
				     w->pointer.width != view->cursor.width ||
				     w->pointer.height != view->cursor.height;
		bool pointer_moved = !pointer_shape && (w->pointer.x != view->cursor.x ||
							w->pointer.y != view->cursor.y);
		if (w->damage.count == 0 && w->copy_count == 0 && !pointer_shape && !pointer_moved)
			continue;
		struct job *job = &v->jobs[count];
		*job = (struct job){ .viewer = w->id, .fast = w->fast && !exact_refresh,
				     .same_as = -1, .copy_count = w->copy_count,
				     .damage = w->damage, .pointer_shape = pointer_shape,
				     .pointer_moved = pointer_moved,
				     .pointer_shape_version = view->cursor_shape_version,
				     .pointer = view->cursor };
		memcpy(job->copies, w->copies, sizeof(w->copies[0]) * (size_t)w->copy_count);
		for (int k = 0; k < count && job->same_as < 0; k++)
			if (v->jobs[k].same_as < 0 && same_work(&v->jobs[k], job))
				job->same_as = k;
		if (job->same_as < 0 && !snapshot(job, view)) {
			free_pixels(job);
			continue; /* out of memory: it stays owed, try next round */
		}
		w->copy_count = 0;
		w->damage.count = 0;
		w->pointer_known = true;
		w->pointer_shape_version = view->cursor_shape_version;
		w->pointer = view->cursor;
		count++;
	}
	return count;
}

/* One round: for every viewer ready for more, the update it needs, shared
 * with the others in the same state. Returns whether anything was made. */
static bool produce(struct bridge_viewers *v)
{
	struct vnc_framebuffer_view view;
	vnc_framebuffer_lock_view(v->fb, &view);
	int width = view.width, height = view.height;
	pthread_mutex_lock(&v->lock);
	int count = plan(v, &view);
	pthread_mutex_unlock(&v->lock);
	vnc_framebuffer_unlock_view(&view);
	if (count == 0)
		return false;

	/* Encode with no lock held: the connection and the pages go on. */
	encode_images(v->jobs, count);
	for (int i = 0; i < count; i++) {
		struct job *job = &v->jobs[i];
		if (job->resized || job->same_as >= 0)
			continue;
		job->made = encode(v, job);
		free_pixels(job);
	}

	int64_t now = clock_monotonic_ms();
	pthread_mutex_lock(&v->lock);
	for (int i = 0; i < count; i++) {
		struct job *job = &v->jobs[i];
		const struct job *source = job->same_as >= 0 ? &v->jobs[job->same_as] : job;
		struct bridge_viewer *w = v->viewers;
		while (w && w->id != job->viewer)
			w = w->next_viewer;
		if (!w)
			continue; /* it left meanwhile */
		if (job->resized) {
			w->next = hello(v, w, width, height);
			if (!w->next)
				w->width = 0; /* out of memory: tell it again */
			continue;
		}
		if (!source->made) {
			repaint_all(w, width, height); /* lost: start over */
			continue;
		}
		w->next = source->made;
		w->next->refs++;
		w->in_flight[w->in_flight_count++] = source->made->len;
		for (int k = 0; k < source->damage.count; k++) {
			if (source->lossy[k]) {
				bridge_region_add(&w->lossy, &source->damage.rects[k], width, height);
				w->lossy_ms = now;
			}
		}
	}
	for (int i = 0; i < count; i++)
		if (v->jobs[i].same_as < 0)
			release_locked(v->jobs[i].made); /* the jobs' own reference */
	pthread_mutex_unlock(&v->lock);
	v->wake(v->wake_context);
	return true;
}

/* Under the hub lock: the hub has something new to look at. */
static void nudge_locked(struct bridge_viewers *v)
{
	v->news = true;
	pthread_cond_broadcast(&v->changed);
}

/* The framebuffer's listener: a frame was committed (or the pointer
 * moved), so the hub plans at once, from a complete update, instead of
 * finding half of one on a timer. */
static void framebuffer_changed(void *context)
{
	struct bridge_viewers *v = context;
	pthread_mutex_lock(&v->lock);
	nudge_locked(v);
	pthread_mutex_unlock(&v->lock);
}

static void *hub_main(void *arg)
{
	struct bridge_viewers *v = arg;
	pthread_mutex_lock(&v->lock);
	while (!v->stopping) {
		if (v->count == 0) {
			pthread_cond_wait(&v->changed, &v->lock);
			continue;
		}
		v->news = false;
		pthread_mutex_unlock(&v->lock);
		bool made = produce(v);
		pthread_mutex_lock(&v->lock);
		if (!made && !v->news && !v->stopping) {
			struct timespec deadline = clock_deadline_ms(IDLE_WAIT_MS);
			pthread_cond_timedwait(&v->changed, &v->lock, &deadline);
		}
	}
	pthread_mutex_unlock(&v->lock);
	return NULL;
}

struct bridge_viewers *bridge_viewers_create(struct vnc_framebuffer *fb, size_t headroom,
					     void (*wake)(void *), void *wake_context)
{
	struct bridge_viewers *v = calloc(1, sizeof(*v));
	if (!v)
		return NULL;
	v->fb = fb;
	v->headroom = headroom;
	v->wake = wake;
	v->wake_context = wake_context;
	pthread_mutex_init(&v->lock, NULL);
	clock_cond_init(&v->changed);
	vnc_framebuffer_set_listener(fb, framebuffer_changed, v);
	if (pthread_create(&v->thread, NULL, hub_main, v) != 0) {
		vnc_framebuffer_set_listener(fb, NULL, NULL);
		pthread_cond_destroy(&v->changed);
		pthread_mutex_destroy(&v->lock);
		free(v);
		return NULL;
	}
	return v;
}

static void kick_all_locked(struct bridge_viewers *v)
{
	for (struct bridge_viewer *w = v->viewers; w; w = w->next_viewer)
		w->kicked = true;
	v->wake(v->wake_context);
}

void bridge_viewers_destroy(struct bridge_viewers *v)
{
	if (!v)
		return;
	pthread_mutex_lock(&v->lock);
	v->stopping = true;
	kick_all_locked(v);
	pthread_cond_broadcast(&v->changed);
	pthread_mutex_unlock(&v->lock);
	vnc_framebuffer_set_listener(v->fb, NULL, NULL);
	pthread_join(v->thread, NULL);
	release_locked(v->clipboard);
	/* Viewers still attached are detached by their connections later;
	 * they hold the session (and so this) until then. */
	pthread_cond_destroy(&v->changed);
	pthread_mutex_destroy(&v->lock);
	free(v);
}

void bridge_viewers_new_tokens(struct bridge_viewers *v, char control[33], char view[33])
{
	pthread_mutex_lock(&v->lock);
	kick_all_locked(v);
	random_hex(v->control_token);
	random_hex(v->view_token);
	memcpy(control, v->control_token, 33);
	memcpy(view, v->view_token, 33);
	pthread_mutex_unlock(&v->lock);
}

void bridge_viewers_revoke(struct bridge_viewers *v)
{
	pthread_mutex_lock(&v->lock);
	kick_all_locked(v);
	memset(v->control_token, 0, sizeof(v->control_token));
	memset(v->view_token, 0, sizeof(v->view_token));
	pthread_mutex_unlock(&v->lock);
}

static bool same_token(const char *a, const char *b)
{
	/* Fixed length, every byte looked at. */
	volatile unsigned char diff = 0;
	size_t b_len = strnlen(b, 33);
	diff |= (unsigned char)(b_len != 32);
	for (size_t i = 0; i < 32; i++)
		diff |= (unsigned char)(a[i] ^ (i < b_len ? b[i] : 0));
	return diff == 0 && a[0] != '\0';
}

enum bridge_viewer_role bridge_viewers_check(struct bridge_viewers *v, const char *token)
{
	pthread_mutex_lock(&v->lock);
	enum bridge_viewer_role role = BRIDGE_VIEWER_NONE;
	if (!v->ended) {
		bool control = same_token(v->control_token, token);
		bool view = same_token(v->view_token, token);
		role = control ? BRIDGE_VIEWER_CONTROL : view ? BRIDGE_VIEWER_VIEW : BRIDGE_VIEWER_NONE;
	}
	pthread_mutex_unlock(&v->lock);
	return role;
}

void bridge_viewers_end(struct bridge_viewers *v)
{
	pthread_mutex_lock(&v->lock);
	v->ended = true;
	kick_all_locked(v);
	pthread_mutex_unlock(&v->lock);
}

int bridge_viewers_count(struct bridge_viewers *v)
{
	pthread_mutex_lock(&v->lock);
	int count = v->count;
	pthread_mutex_unlock(&v->lock);
	return count;
}

struct bridge_viewer *bridge_viewers_attach(struct bridge_viewers *v, enum bridge_viewer_role role)
{
	struct bridge_viewer *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->hub = v;
	w->role = role;
	pthread_mutex_lock(&v->lock);
	w->id = ++v->next_id;
	w->clipboard_seen = v->clipboard_version; /* changes from now on */
	w->next_viewer = v->viewers;
	v->viewers = w;
	v->count++;
	nudge_locked(v);
	pthread_mutex_unlock(&v->lock);
	return w;
}

void bridge_viewer_detach(struct bridge_viewer *w)
{
	if (!w)
		return;
	struct bridge_viewers *v = w->hub;
	pthread_mutex_lock(&v->lock);
	for (struct bridge_viewer **p = &v->viewers; *p; p = &(*p)->next_viewer) {
		if (*p == w) {
			*p = w->next_viewer;
			v->count--;
			break;
		}
	}
	release_locked(w->pending);
	release_locked(w->next);
	pthread_mutex_unlock(&v->lock);
	free(w);
}

/* {"type":"status","state":"paused"} (or "connected" again), which the page
 * shows; NULL when out of memory. */
static struct bridge_viewer_message *status_locked(struct bridge_viewers *v)
{
	const char *text = v->paused ? "{\"type\":\"status\",\"state\":\"paused\"}"
				     : "{\"type\":\"status\",\"state\":\"connected\"}";
	size_t len = strlen(text);
	struct bridge_viewer_message *m = new_message(v, true, len);
	if (m)
		memcpy(m->data + v->headroom, text, len);
	return m;
}

void bridge_viewers_clipboard(struct bridge_viewers *v, const char *utf8, size_t len)
{
	/* Built before the lock: a megabyte of escaping keeps nobody waiting. */
	cJSON *json = cJSON_CreateObject();
	bool built = json && cJSON_AddStringToObject(json, "type", "clipboard") &&
		     (len > BRIDGE_VIEWER_MAX_CLIPBOARD
			      ? cJSON_AddNumberToObject(json, "too_large", (double)len) != NULL
			      : cJSON_AddStringToObject(json, "text", utf8) != NULL);
	char *text = built ? cJSON_PrintUnformatted(json) : NULL;
	cJSON_Delete(json);
	struct bridge_viewer_message *m = text ? new_message(v, true, strlen(text)) : NULL;
	if (m)
		memcpy(m->data + v->headroom, text, m->len);
	free(text);
	if (!m) {
		log_warn("out of memory passing the desktop's clipboard to viewers");
		return;
	}
	pthread_mutex_lock(&v->lock);
	release_locked(v->clipboard);
	v->clipboard = m;
	v->clipboard_version++;
	v->wake(v->wake_context);
	pthread_mutex_unlock(&v->lock);
}

void bridge_viewers_set_paused(struct bridge_viewers *v, bool paused)
{
	pthread_mutex_lock(&v->lock);
	v->paused = paused;
	v->state_version++;
	v->wake(v->wake_context);
	pthread_mutex_unlock(&v->lock);
}

struct bridge_viewer_message *bridge_viewer_next(struct bridge_viewer *w, bool *closing,
						 bool *ended)
{
	struct bridge_viewers *v = w->hub;
	pthread_mutex_lock(&v->lock);
	*closing = w->kicked;
	*ended = v->ended;
	struct bridge_viewer_message *m = NULL;
	/* A pause or resume goes out before the next frame, once the viewer
	 * knows the screen's size (the hello would reset its status). */
	if (!w->pending && !w->kicked && w->width > 0 && w->state_seen != v->state_version &&
	    (m = status_locked(v))) {
		w->state_seen = v->state_version;
		w->pending = m;
		m->refs++; /* the caller's */
	} else if (!w->pending && !w->kicked && w->role == BRIDGE_VIEWER_CONTROL &&
		   w->clipboard_seen != v->clipboard_version && v->clipboard) {
		w->clipboard_seen = v->clipboard_version;
		m = w->pending = v->clipboard;
		m->refs += 2; /* pending's and the caller's */
	} else if (!w->pending && w->next && !w->kicked) {
		m = w->pending = w->next;
		w->next = NULL;
		m->refs++; /* the caller's */
	}
	pthread_mutex_unlock(&v->lock);
	return m;
}

void bridge_viewer_sent(struct bridge_viewer *w, struct bridge_viewer_message *m)
{
	struct bridge_viewers *v = w->hub;
	pthread_mutex_lock(&v->lock);
	if (w->pending == m) {
		release_locked(w->pending);
		w->pending = NULL;
	}
	release_locked(m);
	nudge_locked(v);
	pthread_mutex_unlock(&v->lock);
}

void bridge_viewer_painted(struct bridge_viewer *w)
{
	struct bridge_viewers *v = w->hub;
	pthread_mutex_lock(&v->lock);
	if (w->in_flight_count > 0) { /* a page may ack too often: never below none */
		w->in_flight_count--;
		memmove(w->in_flight, w->in_flight + 1, sizeof(w->in_flight[0]) * (size_t)w->in_flight_count);
	}
	nudge_locked(v);
	pthread_mutex_unlock(&v->lock);
}

void bridge_viewer_set_fast(struct bridge_viewer *w, bool fast)
{
	struct bridge_viewers *v = w->hub;
	pthread_mutex_lock(&v->lock);
	w->fast = fast;
	nudge_locked(v);
	pthread_mutex_unlock(&v->lock);
}

enum bridge_viewer_role bridge_viewer_role(struct bridge_viewer *w)
{
	pthread_mutex_lock(&w->hub->lock);
	enum bridge_viewer_role role = w->kicked ? BRIDGE_VIEWER_NONE : w->role;
	pthread_mutex_unlock(&w->hub->lock);
	return role;
}

bool bridge_viewer_track_input(struct bridge_viewer *w, struct vnc_input_event *event, uint32_t code)
{
	if (event->type == VNC_INPUT_POINTER) {
		w->buttons = event->buttons & (VNC_BUTTON_LEFT | VNC_BUTTON_MIDDLE | VNC_BUTTON_RIGHT);
		w->pointer_x = event->x;
		w->pointer_y = event->y;
		return true;
	}
	if (event->type != VNC_INPUT_KEY)
		return true;
	int i = 0;
	while (i < w->held_count && w->held[i].code != code)
		i++;
	if (!event->down) {
		if (i < w->held_count) {
			event->keysym = w->held[i].keysym; /* what went down comes up */
			w->held[i] = w->held[--w->held_count];
		}
		return true;
	}
	if (i < w->held_count)
		return w->held[i].keysym == event->keysym; /* a repeat; not another key */
	if (w->held_count == BRIDGE_VIEWER_MAX_HELD)
		return false;
	w->held[w->held_count].code = code;
	w->held[w->held_count].keysym = event->keysym;
	w->held_count++;
	return true;
}

size_t bridge_viewer_release_all(struct bridge_viewer *w, struct vnc_input_event *out)
{
	size_t n = 0;
	/* Last pressed first, as fingers would let go. */
	while (w->held_count > 0)
		out[n++] = (struct vnc_input_event){ .type = VNC_INPUT_KEY,
						     .keysym = w->held[--w->held_count].keysym,
						     .down = false };
	if (w->buttons) {
		out[n++] = (struct vnc_input_event){ .type = VNC_INPUT_POINTER, .x = w->pointer_x,
						     .y = w->pointer_y, .buttons = 0 };
		w->buttons = 0;
	}
	return n;
}
