#include "viewer.h"

#include "../util/log.h"
#include "../vnc/capture.h"
#include "../vnc/framebuffer.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

/* How long the hub sleeps with nothing to do; a viewer that finished its
 * last update waits at most this long for the next. */
#define IDLE_WAIT_MS 15

struct bridge_viewer {
	struct bridge_viewers *hub;
	uint64_t id; /* unique per hub: survives the pointer being reused */
	enum bridge_viewer_role role;
	bool detached, kicked;
	struct bridge_viewer_message *pending; /* given to the server, not yet sent */
	struct bridge_viewer_message *next;    /* ready for the server to take */
	int width, height;                     /* the size it was told */
	uint64_t version;                      /* newest row version it shows */
	uint64_t cursor_version;
	struct vnc_rect cursor;                /* where it shows the pointer */
	uint64_t state_seen;                   /* the hub's state_version it was told */
	struct bridge_viewer *next_viewer;
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
	bool paused;            /* the session's processes are frozen */
	uint64_t state_version; /* bumped by every pause and resume */
	pthread_t thread;
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

/* What a viewer needs next: rows [y0, y1) of the screen, or nothing. */
static bool dirty_rows(const struct bridge_viewer *viewer, const struct vnc_framebuffer_view *view,
		       int *y0, int *y1)
{
	*y0 = view->height;
	*y1 = 0;
	for (int y = 0; y < view->height; y++) {
		if (view->row_version[y] > viewer->version) {
			if (y < *y0)
				*y0 = y;
			*y1 = y + 1;
		}
	}
	if (viewer->cursor_version != view->cursor_version) {
		const struct vnc_rect *rects[2] = { &viewer->cursor, &view->cursor };
		for (int i = 0; i < 2; i++) {
			if (rects[i]->width <= 0)
				continue;
			int top = rects[i]->y < 0 ? 0 : rects[i]->y;
			int bottom = rects[i]->y + rects[i]->height;
			if (bottom > view->height)
				bottom = view->height;
			if (top < *y0)
				*y0 = top;
			if (bottom > *y1)
				*y1 = bottom;
		}
	}
	return *y1 > *y0;
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

static struct bridge_viewer_message *encode_rows(struct bridge_viewers *v, int width, int y0,
						 int y1)
{
	struct vnc_capture_request request = {
		.source = { 0, y0, width, y1 - y0 }, .width = width, .height = y1 - y0,
		.with_cursor = true, .format = VNC_FORMAT_PNG,
	};
	struct vnc_bytes png;
	char err[160];
	if (!vnc_capture(v->fb, NULL, &request, &png, NULL, err, sizeof(err)))
		return NULL;
	struct bridge_viewer_message *m = new_message(v, false, 8 + png.len);
	if (m) {
		unsigned char *p = m->data + v->headroom;
		uint16_t fields[4] = { 0, (uint16_t)y0, (uint16_t)width, (uint16_t)(y1 - y0) };
		for (int i = 0; i < 4; i++) {
			p[i * 2] = (unsigned char)(fields[i] >> 8);
			p[i * 2 + 1] = (unsigned char)fields[i];
		}
		memcpy(p + 8, png.data, png.len);
	}
	vnc_bytes_finish(&png);
	return m;
}

/* One round: for every viewer ready for more, the update it needs, shared
 * with the others in the same state. Returns whether anything was made. */
static bool produce(struct bridge_viewers *v)
{
	struct vnc_framebuffer_view view;
	vnc_framebuffer_lock_view(v->fb, &view);
	int width = view.width, height = view.height;
	uint64_t newest = 0;
	for (int y = 0; y < height; y++)
		if (view.row_version[y] > newest)
			newest = view.row_version[y];

	/* Decide under both locks, encode after letting go of them. */
	struct job {
		uint64_t viewer; /* by id: it may leave while we encode */
		int y0, y1;
		bool resized;
	} jobs[64];
	int job_count = 0;
	pthread_mutex_lock(&v->lock);
	for (struct bridge_viewer *w = v->viewers; w && job_count < 64; w = w->next_viewer) {
		if (w->kicked || w->pending || w->next || width <= 0)
			continue;
		bool resized = w->width != width || w->height != height;
		int y0 = 0, y1 = height;
		if (!resized && !dirty_rows(w, &view, &y0, &y1))
			continue;
		jobs[job_count++] = (struct job){ w->id, y0, y1, resized };
		w->width = width;
		w->height = height;
		w->version = newest;
		w->cursor_version = view.cursor_version;
		w->cursor = view.cursor;
	}
	pthread_mutex_unlock(&v->lock);
	vnc_framebuffer_unlock_view(&view);
	if (job_count == 0)
		return false;

	struct bridge_viewer_message *made[64] = { 0 };
	for (int i = 0; i < job_count; i++) {
		for (int k = 0; k < i && !made[i]; k++) {
			if (made[k] && jobs[k].y0 == jobs[i].y0 && jobs[k].y1 == jobs[i].y1) {
				made[i] = made[k]; /* the same update: encoded once */
				made[i]->refs++;
			}
		}
		if (!made[i])
			made[i] = encode_rows(v, width, jobs[i].y0, jobs[i].y1);
	}

	pthread_mutex_lock(&v->lock);
	for (int i = 0; i < job_count; i++) {
		struct bridge_viewer *w = v->viewers;
		while (w && w->id != jobs[i].viewer)
			w = w->next_viewer;
		if (!w) {
			release_locked(made[i]); /* it left meanwhile */
			continue;
		}
		if (jobs[i].resized) {
			/* hello first; the frame follows once it is sent */
			w->next = hello(v, w, width, height);
			w->version = 0;
			w->cursor_version = 0;
			release_locked(made[i]);
		} else {
			w->next = made[i];
		}
		if (!w->next)
			w->version = 0; /* out of memory: try it all again */
	}
	pthread_mutex_unlock(&v->lock);
	v->wake(v->wake_context);
	return true;
}

static void *hub_main(void *arg)
{
	struct bridge_viewers *v = arg;
	uint64_t seen = 0;
	pthread_mutex_lock(&v->lock);
	while (!v->stopping) {
		if (v->count == 0) {
			pthread_cond_wait(&v->changed, &v->lock);
			continue;
		}
		pthread_mutex_unlock(&v->lock);
		bool made = produce(v);
		if (!made) {
			/* Nothing to do until the screen changes or a viewer is
			 * ready again; both wake us soon enough. */
			if (vnc_framebuffer_wait_frame_after(v->fb, seen, IDLE_WAIT_MS) == VNC_WAIT_CLOSED) {
				struct timespec pause = { 0, IDLE_WAIT_MS * 1000000L };
				nanosleep(&pause, NULL);
			}
		}
		seen = vnc_framebuffer_sequence(v->fb);
		pthread_mutex_lock(&v->lock);
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
	pthread_cond_init(&v->changed, NULL);
	if (pthread_create(&v->thread, NULL, hub_main, v) != 0) {
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
	pthread_join(v->thread, NULL);
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
	w->next_viewer = v->viewers;
	v->viewers = w;
	v->count++;
	pthread_cond_broadcast(&v->changed);
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
	pthread_cond_broadcast(&v->changed);
	pthread_mutex_unlock(&v->lock);
}

enum bridge_viewer_role bridge_viewer_role(struct bridge_viewer *w)
{
	pthread_mutex_lock(&w->hub->lock);
	enum bridge_viewer_role role = w->kicked ? BRIDGE_VIEWER_NONE : w->role;
	pthread_mutex_unlock(&w->hub->lock);
	return role;
}
