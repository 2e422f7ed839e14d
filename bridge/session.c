#include "session.h"

#include "desktop.h"
#include "../util/base64.h"
#include "../util/log.h"
#include "../vnc/capture.h"
#include "../vnc/conn.h"
#include "../vnc/framebuffer.h"
#include "../vnc/target.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONNECT_TIMEOUT_S 10

struct bridge_session {
	char id[64];
	struct bridge_desktop *desktop;
	struct vnc_framebuffer *fb;
	struct vnc_conn *conn;
	struct vnc_capture_cache *capture_cache;
	pthread_mutex_t lock;
	bool ended;
	int buttons_held; /* mouse_down without mouse_up yet */
	char *screenshot_base64; /* the last full-screen PNG, encoded */
};

static struct bridge_session *session_new(const char *id)
{
	struct bridge_session *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	snprintf(s->id, sizeof(s->id), "%s", id);
	pthread_mutex_init(&s->lock, NULL);
	s->fb = vnc_framebuffer_create();
	s->capture_cache = vnc_capture_cache_create();
	if (!s->fb || !s->capture_cache) {
		vnc_framebuffer_destroy(s->fb);
		vnc_capture_cache_destroy(s->capture_cache);
		pthread_mutex_destroy(&s->lock);
		free(s);
		return NULL;
	}
	return s;
}

struct bridge_session *bridge_session_start_local(const char *id,
						  const struct bridge_session_local_options *o,
						  char *err, size_t err_size)
{
	struct bridge_session *s = session_new(id);
	if (!s) {
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	struct bridge_desktop_options desktop_options = {
		.width = o->width, .height = o->height, .window_manager = o->window_manager,
	};
	s->desktop = bridge_desktop_start(&desktop_options, err, err_size);
	if (!s->desktop)
		goto fail;

	struct vnc_target target = { .host = (char *)bridge_desktop_vnc_socket(s->desktop),
				     .is_unix = true };
	s->conn = vnc_conn_open(&target, s->fb, CONNECT_TIMEOUT_S, err, err_size);
	if (!s->conn)
		goto fail;
	/* X starts the pointer in the middle of the screen. Saying so makes
	 * our idea of it right, and keeps Xvnc from painting its own pointer
	 * into the picture (it does while its pointer and our last one differ). */
	struct vnc_input_event centre = { .type = VNC_INPUT_POINTER, .x = o->width / 2,
					  .y = o->height / 2 };
	if (!vnc_conn_send_input(s->conn, &centre, 1, err, err_size))
		goto fail;
	return s;

fail:
	bridge_session_destroy(s);
	return NULL;
}

struct bridge_session *bridge_session_attach(const char *id, const struct vnc_target *target,
					     char *err, size_t err_size)
{
	struct bridge_session *s = session_new(id);
	if (!s) {
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	s->conn = vnc_conn_open(target, s->fb, CONNECT_TIMEOUT_S, err, err_size);
	if (!s->conn) {
		bridge_session_destroy(s);
		return NULL;
	}
	return s;
}

void bridge_session_shutdown(struct bridge_session *s)
{
	pthread_mutex_lock(&s->lock);
	s->ended = true;
	pthread_mutex_unlock(&s->lock);
	vnc_framebuffer_close(s->fb);
}

void bridge_session_destroy(struct bridge_session *s)
{
	if (!s)
		return;
	vnc_conn_destroy(s->conn);
	bridge_desktop_destroy(s->desktop);
	vnc_framebuffer_destroy(s->fb);
	vnc_capture_cache_destroy(s->capture_cache);
	free(s->screenshot_base64);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

const char *bridge_session_id(const struct bridge_session *s)
{
	return s->id;
}

struct vnc_framebuffer *bridge_session_framebuffer(struct bridge_session *s)
{
	return s->fb;
}

struct bridge_desktop *bridge_session_desktop(struct bridge_session *s)
{
	return s->desktop;
}

bool bridge_session_usable(struct bridge_session *s, char *err, size_t err_size)
{
	pthread_mutex_lock(&s->lock);
	bool ended = s->ended;
	pthread_mutex_unlock(&s->lock);
	if (ended) {
		snprintf(err, err_size, "session %s has ended", s->id);
		return false;
	}
	return vnc_conn_alive(s->conn, err, err_size);
}

bool bridge_session_send_input(struct bridge_session *s, const struct vnc_input_event *events,
			       size_t count, char *err, size_t err_size)
{
	if (!bridge_session_usable(s, err, err_size))
		return false;
	return vnc_conn_send_input(s->conn, events, count, err, err_size);
}

struct vnc_capture_cache *bridge_session_capture_cache(struct bridge_session *s)
{
	return s->capture_cache;
}

struct vnc_conn *bridge_session_conn(struct bridge_session *s)
{
	return s->conn;
}

int bridge_session_buttons_held(struct bridge_session *s)
{
	pthread_mutex_lock(&s->lock);
	int buttons = s->buttons_held;
	pthread_mutex_unlock(&s->lock);
	return buttons;
}

void bridge_session_set_buttons_held(struct bridge_session *s, int buttons)
{
	pthread_mutex_lock(&s->lock);
	s->buttons_held = buttons;
	pthread_mutex_unlock(&s->lock);
}

char *bridge_session_screenshot_base64(struct bridge_session *s, const uint8_t *png, size_t len,
				       bool unchanged)
{
	pthread_mutex_lock(&s->lock);
	char *copy = NULL;
	if (unchanged && s->screenshot_base64) {
		copy = strdup(s->screenshot_base64);
	} else {
		copy = base64_encode(png, len);
		free(s->screenshot_base64);
		s->screenshot_base64 = copy ? strdup(copy) : NULL;
	}
	pthread_mutex_unlock(&s->lock);
	return copy;
}
