/* SPDX-License-Identifier: MIT */
/* A session is one desktop the bridge drives: a local desktop it started
 * (template "desktop" with openbox, or "bare") or an attached VNC server,
 * with its live framebuffer and VNC connection.
 *
 * Sessions are reference counted: the registry holds one reference, every
 * tool call working on a session another. The last release destroys it. */
#ifndef LIZARD_BRIDGE_SESSION_H
#define LIZARD_BRIDGE_SESSION_H

#include "bridge/session/types.h"
#include "util/error.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sandbox;
struct sandbox_cgroup_root;
struct sandbox_desktop;
struct sandbox_limits;
struct sandbox_volumes;
struct cJSON;
struct vnc_capture_cache;
struct vnc_framebuffer;
struct vnc_input_event;
struct vnc_target;

struct bridge_session;

/* Told when a session changes state: started (starting to ready),
 * reconnecting, back (reconnecting to ready), failed, ended; why may be
 * NULL. Called on whichever thread made the change, with no session lock
 * held. */
typedef void (*bridge_session_event_fn)(const char *id, enum bridge_session_state from,
					enum bridge_session_state to, const char *why,
					void *context);
/* One sink for the process; NULL stops the reports. Returns once no call
 * of the previous sink is running. */
void bridge_session_set_event_sink(bridge_session_event_fn fn, void *context);


/* A session in state starting, with one reference for the caller. */
struct bridge_session *bridge_session_create(const char *id, const struct bridge_session_spec *spec,
					     struct error *err);
/* Starts the desktop (local) and connects. False with a message on failure
 * (state failed). */
bool bridge_session_start(struct bridge_session *session, struct error *err);

struct bridge_session *bridge_session_ref(struct bridge_session *session);
/* Drops a reference; the last one takes the desktop down. NULL is fine. */
void bridge_session_unref(struct bridge_session *session);
/* Ends the session now: waiters wake, calls fail with "has ended", the
 * desktop's processes go when the last reference does. */
void bridge_session_end(struct bridge_session *session, const char *why);

const char *bridge_session_id(const struct bridge_session *session);
enum bridge_session_state bridge_session_state(struct bridge_session *session);
const char *bridge_session_state_name(enum bridge_session_state state);
struct vnc_framebuffer *bridge_session_framebuffer(struct bridge_session *session);
/* NULL for attached sessions. */
struct sandbox_desktop *bridge_session_desktop(struct bridge_session *session);
struct sandbox *bridge_session_sandbox(struct bridge_session *session);

/* Deadlines, as clock_monotonic_ms() times; 0 for none. */
int64_t bridge_session_deadline(struct bridge_session *session);
void bridge_session_set_timeout(struct bridge_session *session, int64_t timeout_ms);
/* False for templates without an X server (base, interpreter). */
bool bridge_session_has_screen(const struct bridge_session *session);
/* False with a message when the desktop cannot be used right now, or the
 * session has no screen at all. */
bool bridge_session_usable(struct bridge_session *session, struct error *err);
/* A relay to the session's VNC server for a noVNC viewer (viewer/novnc.h):
 * the local desktop's private socket, or the attached server with its
 * password, which the viewer never learns. The caller destroys it. NULL
 * with a message when the desktop is not usable. */
struct bridge_novnc;
struct bridge_novnc *bridge_session_open_novnc(struct bridge_session *session, bool view_only,
					       struct error *err);

/* Full-screen screenshots reuse what did not change since the last one. */
struct vnc_capture_cache *bridge_session_capture_cache(struct bridge_session *session);

/* The session's viewer hub, made on first use when wake is given (NULL
 * otherwise, until start_stream made one). */
struct bridge_viewers;
struct bridge_viewers *bridge_session_viewers(struct bridge_session *session, size_t headroom,
					      void (*wake)(void *), void *wake_context);

#endif
