/* SPDX-License-Identifier: MIT */
/* Input to a session's desktop (see input.h): batches go through the
 * session's VNC connection, pauses wait here, and what a stopped action
 * left held is released. */
#include "bridge/session/input.h"

#include "bridge/session/session.h"
#include "bridge/session/state.h"
#include "util/clock.h"
#include "util/log.h"
#include "vnc/conn.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

/* Keys one action may leave held when it stops halfway. */
#define MAX_KEYS_DOWN 64

/* Waits out a pause; false when the action must stop (ended or cancelled). */
static bool pause_input(struct bridge_session *s, int ms,
			const struct bridge_input_control *control, size_t sent, size_t total)
{
	int64_t until = clock_monotonic_ms() + ms;
	for (;;) {
		if (control && control->cancelled && control->cancelled(control->context))
			return false;
		if (control && control->progress)
			control->progress(control->context, sent, total);
		int64_t left = until - clock_monotonic_ms();
		if (left <= 0)
			return !(bridge_session_state(s) == BRIDGE_ENDED);
		/* Cancellation is asked for, not signalled: look again soon. */
		struct timespec deadline = clock_deadline_ms(left < 50 ? left : 50);
		pthread_mutex_lock(&s->lock);
		if (s->state != BRIDGE_ENDED)
			pthread_cond_timedwait(&s->changed, &s->lock, &deadline);
		bool is_ended = s->state == BRIDGE_ENDED;
		pthread_mutex_unlock(&s->lock);
		if (is_ended)
			return false;
	}
}

/* After an action stopped halfway: lets go of what events[0..sent) left
 * pressed, keys in reverse order, then buttons beyond those held before. */
static void release_held_input(struct bridge_session *s, const struct vnc_input_event *events,
			       size_t sent)
{
	struct vnc_input_event release[MAX_KEYS_DOWN + 1];
	uint32_t down[MAX_KEYS_DOWN];
	size_t down_count = 0;
	const struct vnc_input_event *pointer = NULL;
	for (size_t i = 0; i < sent; i++) {
		const struct vnc_input_event *e = &events[i];
		if (e->type == VNC_INPUT_POINTER)
			pointer = e;
		if (e->type != VNC_INPUT_KEY)
			continue;
		size_t k = 0;
		while (k < down_count && down[k] != e->keysym)
			k++;
		if (e->down && k == down_count && down_count < MAX_KEYS_DOWN)
			down[down_count++] = e->keysym;
		else if (!e->down && k < down_count)
			memmove(&down[k], &down[k + 1], (--down_count - k) * sizeof(*down));
	}
	size_t n = 0;
	while (down_count > 0)
		release[n++] = (struct vnc_input_event){ .type = VNC_INPUT_KEY,
							 .keysym = down[--down_count] };
	int base = bridge_session_buttons_held(s);
	if (pointer && pointer->buttons != base)
		release[n++] = (struct vnc_input_event){
			.type = VNC_INPUT_POINTER, .x = pointer->x, .y = pointer->y, .buttons = base
		};
	struct error err;
	if (n == 0 || !bridge_session_usable(s, &err))
		return;
	pthread_rwlock_rdlock(&s->conn_lock);
	if (!vnc_conn_send_input(s->conn, release, n, &err))
		log_debug("session %s: releasing held input failed: %s", s->id, err.message);
	pthread_rwlock_unlock(&s->conn_lock);
}

bool bridge_session_send_input(struct bridge_session *s, const struct vnc_input_event *events,
			       size_t count, const struct bridge_input_control *control,
			       struct error *err)
{
	if (!bridge_session_usable(s, err))
		return false;
	size_t i = 0;
	while (i < count) {
		bool cancelled = control && control->cancelled &&
				 control->cancelled(control->context);
		if (cancelled || (bridge_session_state(s) == BRIDGE_ENDED)) {
			if (cancelled)
				error_set(err, 0, "the call was cancelled after %zu of %zu events",
					  i, count);
			else
				error_set(err, 0, "session %s was ended while the action ran",
					  s->id);
			release_held_input(s, events, i);
			return false;
		}
		if (events[i].type == VNC_INPUT_PAUSE) {
			if (events[i].pause_ms > 0 &&
			    !pause_input(s, events[i].pause_ms, control, i, count))
				continue; /* the check above says why */
			i++;
			continue;
		}
		size_t end = i;
		while (end < count && end - i < BRIDGE_INPUT_BATCH &&
		       events[end].type != VNC_INPUT_PAUSE)
			end++;
		pthread_rwlock_rdlock(&s->conn_lock);
		bool ok = vnc_conn_send_input(s->conn, events + i, end - i, err);
		pthread_rwlock_unlock(&s->conn_lock);
		if (!ok) {
			if ((bridge_session_state(s) == BRIDGE_ENDED))
				error_set(err, 0, "session %s was ended while the action ran",
					  s->id);
			return false;
		}
		i = end;
		if (control && control->progress)
			control->progress(control->context, i, count);
	}
	return true;
}

bool bridge_session_post_input(struct bridge_session *s, const struct vnc_input_event *events,
			       size_t count, struct error *err)
{
	if (!bridge_session_usable(s, err))
		return false;
	pthread_rwlock_rdlock(&s->conn_lock);
	bool ok = vnc_conn_post_input(s->conn, events, count, err);
	pthread_rwlock_unlock(&s->conn_lock);
	return ok;
}

bool bridge_session_send_cut_text(struct bridge_session *s, const char *latin1, size_t len,
				  struct error *err)
{
	if (!bridge_session_usable(s, err))
		return false;
	pthread_rwlock_rdlock(&s->conn_lock);
	bool ok = vnc_conn_send_cut_text(s->conn, latin1, len, err);
	pthread_rwlock_unlock(&s->conn_lock);
	return ok;
}

bool bridge_session_post_cut_text(struct bridge_session *s, const char *latin1, size_t len,
				  struct error *err)
{
	if (!bridge_session_usable(s, err))
		return false;
	pthread_rwlock_rdlock(&s->conn_lock);
	bool ok = vnc_conn_post_cut_text(s->conn, latin1, len, err);
	pthread_rwlock_unlock(&s->conn_lock);
	return ok;
}

char *bridge_session_cut_text(struct bridge_session *s)
{
	pthread_rwlock_rdlock(&s->conn_lock);
	char *text = s->conn ? vnc_conn_cut_text(s->conn) : NULL;
	pthread_rwlock_unlock(&s->conn_lock);
	return text;
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
