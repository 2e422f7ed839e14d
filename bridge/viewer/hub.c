/* SPDX-License-Identifier: MIT */
#include "bridge/viewer/hub.h"

#include "bridge/viewer/encode.h"
#include "bridge/viewer/hub_state.h"
#include "bridge/viewer/region.h"
#include "bridge/viewer/video.h"
#include "bridge/viewer/wire.h"

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

/* Frees a string that may hold a secret, wiped first. */
static void free_secret(char *text)
{
	if (!text)
		return;
	explicit_bzero(text, strlen(text));
	free(text);
}

/* Under the hub's lock. A viewer offered video is also given the ICE
 * servers of its link, when start_stream had some. */
static struct bridge_viewer_message *hello(struct bridge_viewers *v, struct bridge_viewer *viewer,
					   int width, int height)
{
	const char *ice = v->video && v->ice_servers ? v->ice_servers : NULL;
	char head[160];
	int n = snprintf(head, sizeof(head),
			 "{\"type\":\"" VIEWER_WIRE_TYPE_HELLO
			 "\",\"width\":%d,\"height\":%d,\"role\":\"%s\"%s",
			 width, height,
			 viewer->role == BRIDGE_VIEWER_CONTROL ? VIEWER_WIRE_ROLE_CONTROL
							       : VIEWER_WIRE_ROLE_VIEW,
			 v->video ? ",\"video\":true" : "");
	if (n < 0 || (size_t)n >= sizeof(head))
		return NULL;
	static const char ice_key[] = ",\"" VIEWER_WIRE_ICE_SERVERS "\":";
	size_t ice_len = ice ? strlen(ice) : 0;
	size_t len = (size_t)n + (ice ? sizeof(ice_key) - 1 + ice_len : 0) + 1;
	struct bridge_viewer_message *m = bridge_viewer_message_new(v->headroom, true, len);
	if (!m)
		return NULL;
	char *out = (char *)m->data + v->headroom;
	memcpy(out, head, (size_t)n);
	out += n;
	if (ice) {
		memcpy(out, ice_key, sizeof(ice_key) - 1);
		out += sizeof(ice_key) - 1;
		memcpy(out, ice, ice_len);
		out += ice_len;
	}
	*out = '}';
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
static void replay_copy(struct bridge_viewer *w, const struct vnc_framebuffer_change *c, int width,
			int height)
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
			v->jobs[count++] = (struct job){ .viewer = w->id,
							 .resized = true,
							 .same_as = -1 };
			continue;
		}
		uint64_t replayed = w->change_serial;
		replay(w, view);
		/* A video viewer's picture moves as video; once screen and
		 * pointer have been still for LOSSY_REFRESH_MS it gets what
		 * changed meanwhile exactly, as any viewer would, so that text
		 * ends pixel-exact. */
		if (w->video && (replayed != w->change_serial ||
				 w->video_cursor_seen != view->cursor_version)) {
			w->video_motion_ms = now;
			w->video_cursor_seen = view->cursor_version;
		}
		if (!ready(w) || count == MAX_JOBS ||
		    (w->video && now - w->video_motion_ms < LOSSY_REFRESH_MS))
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
		*job = (struct job){ .viewer = w->id,
				     .fast = w->fast && !exact_refresh && !w->video,
				     .same_as = -1,
				     .copy_count = w->copy_count,
				     .damage = w->damage,
				     .pointer_shape = pointer_shape,
				     .pointer_moved = pointer_moved,
				     .pointer_shape_version = view->cursor_shape_version,
				     .pointer = view->cursor };
		memcpy(job->copies, w->copies, sizeof(w->copies[0]) * (size_t)w->copy_count);
		for (int k = 0; k < count && job->same_as < 0; k++)
			if (v->jobs[k].same_as < 0 && same_work(&v->jobs[k], job))
				job->same_as = k;
		if (job->same_as < 0 && !bridge_viewer_snapshot(job, view)) {
			bridge_viewer_free_pixels(job);
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
	bridge_viewer_encode_images(v->jobs, count);
	for (int i = 0; i < count; i++) {
		struct job *job = &v->jobs[i];
		if (job->resized || job->same_as >= 0)
			continue;
		job->made = bridge_viewer_encode(v, job);
		bridge_viewer_free_pixels(job);
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
				bridge_region_add(&w->lossy, &source->damage.rects[k], width,
						  height);
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
	v->video = bridge_video_create(fb);
	vnc_framebuffer_set_listener(fb, framebuffer_changed, v);
	if (pthread_create(&v->thread, NULL, hub_main, v) != 0) {
		vnc_framebuffer_set_listener(fb, NULL, NULL);
		bridge_video_destroy(v->video);
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
	bridge_video_destroy(v->video);
	release_locked(v->clipboard);
	free_secret(v->ice_servers);
	/* Viewers still attached are detached by their connections later;
	 * they hold the session (and so this) until then. */
	pthread_cond_destroy(&v->changed);
	pthread_mutex_destroy(&v->lock);
	free(v);
}

bool bridge_viewers_new_tokens(struct bridge_viewers *v, const char *ice_servers, char control[33],
			       char view[33])
{
	char *ice = ice_servers ? strdup(ice_servers) : NULL;
	if (ice_servers && !ice)
		return false;
	pthread_mutex_lock(&v->lock);
	kick_all_locked(v);
	random_hex(v->control_token);
	random_hex(v->view_token);
	memcpy(control, v->control_token, 33);
	memcpy(view, v->view_token, 33);
	char *old = v->ice_servers;
	v->ice_servers = ice;
	pthread_mutex_unlock(&v->lock);
	free_secret(old);
	return true;
}

void bridge_viewers_revoke(struct bridge_viewers *v)
{
	pthread_mutex_lock(&v->lock);
	kick_all_locked(v);
	memset(v->control_token, 0, sizeof(v->control_token));
	memset(v->view_token, 0, sizeof(v->view_token));
	char *old = v->ice_servers;
	v->ice_servers = NULL;
	pthread_mutex_unlock(&v->lock);
	free_secret(old);
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
		role = control ? BRIDGE_VIEWER_CONTROL
		       : view  ? BRIDGE_VIEWER_VIEW
			       : BRIDGE_VIEWER_NONE;
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
	bridge_viewer_video_stop(w);
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
	const char *text = v->paused ? "{\"type\":\"" VIEWER_WIRE_TYPE_STATUS
				       "\",\"state\":\"" VIEWER_WIRE_STATE_PAUSED "\"}"
				     : "{\"type\":\"" VIEWER_WIRE_TYPE_STATUS
				       "\",\"state\":\"" VIEWER_WIRE_STATE_CONNECTED "\"}";
	size_t len = strlen(text);
	struct bridge_viewer_message *m = bridge_viewer_message_new(v->headroom, true, len);
	if (m)
		memcpy(m->data + v->headroom, text, len);
	return m;
}

void bridge_viewers_clipboard(struct bridge_viewers *v, const char *utf8, size_t len)
{
	/* Built before the lock: a megabyte of escaping keeps nobody waiting. */
	cJSON *json = cJSON_CreateObject();
	bool built = json && cJSON_AddStringToObject(json, "type", VIEWER_WIRE_TYPE_CLIPBOARD) &&
		     (len > BRIDGE_VIEWER_MAX_CLIPBOARD
			      ? cJSON_AddNumberToObject(json, "too_large", (double)len) != NULL
			      : cJSON_AddStringToObject(json, "text", utf8) != NULL);
	char *text = built ? cJSON_PrintUnformatted(json) : NULL;
	cJSON_Delete(json);
	struct bridge_viewer_message *m = text ? bridge_viewer_message_new(v->headroom, true,
									   strlen(text))
					       : NULL;
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
	} else if (!w->pending && !w->kicked && w->width > 0 && (m = bridge_viewer_video_next(w))) {
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
		memmove(w->in_flight, w->in_flight + 1,
			sizeof(w->in_flight[0]) * (size_t)w->in_flight_count);
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
