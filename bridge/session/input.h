/* SPDX-License-Identifier: MIT */
/* Input to a session's desktop: events in order and in batches, waits
 * between them, cut text, and the buttons mouse_down left held. What a
 * stopped action left held is always released. */
#ifndef LIZARD_BRIDGE_SESSION_INPUT_H
#define LIZARD_BRIDGE_SESSION_INPUT_H

#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

struct bridge_session;
struct vnc_input_event;

/* Lets a long action stop early: asked between event batches and during
 * pauses. */
struct bridge_input_control {
	bool (*cancelled)(void *context);
	/* Told how far it got after each batch and while pausing; may be NULL. */
	void (*progress)(void *context, size_t sent, size_t total);
	void *context;
};
/* Sends events in order, in batches of at most BRIDGE_INPUT_BATCH events,
 * waiting out PAUSE events here. Stops at the next batch or pause when the
 * session ends or control (may be NULL) says cancelled: keys and buttons
 * the sent events left held are then released, and err says why. Each
 * batch goes out within VNC_INPUT_TIMEOUT_MS or the call fails. */
#define BRIDGE_INPUT_BATCH 64
bool bridge_session_send_input(struct bridge_session *session, const struct vnc_input_event *events,
			       size_t count, const struct bridge_input_control *control,
			       struct error *err);
/* Queues events (no pauses) and returns at once: for the network loop. */
bool bridge_session_post_input(struct bridge_session *session, const struct vnc_input_event *events,
			       size_t count, struct error *err);
bool bridge_session_send_cut_text(struct bridge_session *session, const char *latin1, size_t len,
				  struct error *err);
/* Queues cut text after the input queued before it, without waiting: for
 * the network loop. */
bool bridge_session_post_cut_text(struct bridge_session *session, const char *latin1, size_t len,
				  struct error *err);
/* The server's latest clipboard text (UTF-8, caller frees) or NULL. */
char *bridge_session_cut_text(struct bridge_session *session);

/* Mouse buttons left down by mouse_down: every pointer event carries them
 * until mouse_up, so moves in between drag. */
int bridge_session_buttons_held(struct bridge_session *session);
void bridge_session_set_buttons_held(struct bridge_session *session, int buttons);

#endif
