/* A session is one desktop the bridge drives: a local desktop it started or
 * an attached VNC server, with its live framebuffer and VNC connection. */
#ifndef LIZARD_BRIDGE_SESSION_H
#define LIZARD_BRIDGE_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bridge_desktop;
struct vnc_capture_cache;
struct vnc_conn;
struct vnc_framebuffer;
struct vnc_input_event;
struct vnc_target;

struct bridge_session;

struct bridge_session_local_options {
	int width, height;
	bool window_manager;
};

struct bridge_session *bridge_session_start_local(const char *id,
						  const struct bridge_session_local_options *o,
						  char *err, size_t err_size);
/* Attaches to target (copied). */
struct bridge_session *bridge_session_attach(const char *id, const struct vnc_target *target,
					     char *err, size_t err_size);
/* Wakes everything waiting on the session; calls fail from now on. Safe to
 * call while tool calls run; destroy only after they are done. */
void bridge_session_shutdown(struct bridge_session *session);
void bridge_session_destroy(struct bridge_session *session);

const char *bridge_session_id(const struct bridge_session *session);
struct vnc_framebuffer *bridge_session_framebuffer(struct bridge_session *session);
/* NULL for attached sessions. */
struct bridge_desktop *bridge_session_desktop(struct bridge_session *session);

/* False with a message when the desktop cannot be used right now. */
bool bridge_session_usable(struct bridge_session *session, char *err, size_t err_size);
bool bridge_session_send_input(struct bridge_session *session,
			       const struct vnc_input_event *events, size_t count, char *err,
			       size_t err_size);

/* Full-screen screenshots reuse what did not change since the last one. */
struct vnc_capture_cache *bridge_session_capture_cache(struct bridge_session *session);
struct vnc_conn *bridge_session_conn(struct bridge_session *session);

/* The base64 text of a full-screen PNG (caller frees). When unchanged
 * (the capture cache found nothing new), the last encoding is reused. */
char *bridge_session_screenshot_base64(struct bridge_session *session, const uint8_t *png,
				       size_t len, bool unchanged);

/* Mouse buttons left down by mouse_down: every pointer event carries them
 * until mouse_up, so moves in between drag. */
int bridge_session_buttons_held(struct bridge_session *session);
void bridge_session_set_buttons_held(struct bridge_session *session, int buttons);

#endif
