/* A session is one desktop the bridge drives: a local desktop it started
 * (template "desktop" with openbox, or "bare") or an attached VNC server,
 * with its live framebuffer and VNC connection.
 *
 * Sessions are reference counted: the registry holds one reference, every
 * tool call working on a session another. The last release destroys it. */
#ifndef LIZARD_BRIDGE_SESSION_H
#define LIZARD_BRIDGE_SESSION_H

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

enum bridge_session_kind { BRIDGE_DESKTOP, BRIDGE_BARE, BRIDGE_ATTACHED };

enum bridge_session_state {
	BRIDGE_STARTING,
	BRIDGE_READY,
	BRIDGE_RECONNECTING,
	BRIDGE_FAILED,
	BRIDGE_ENDED,
};

struct bridge_session_spec {
	enum bridge_session_kind kind;
	int width, height;               /* local desktops */
	const struct vnc_target *target; /* attached: copied */
	int64_t timeout_ms;              /* 0: no deadline */
	const struct cJSON *metadata;    /* object of strings, copied; may be NULL */
	bool network;                    /* local desktops: false for loopback only */
	const char *const *envs;         /* local desktops: NAME=value, copied; may be NULL */
	/* Local desktops: a cgroup with these limits under root (both or
	 * neither), size_name saying which preset for session_info. */
	struct sandbox_cgroup_root *cgroup_root;
	const struct sandbox_limits *limits;
	const char *size_name;
	/* Local desktops: the volume to mount at /workspace; may be NULL. */
	struct sandbox_volumes *volumes;
	const char *volume;
	/* Local desktops of a root daemon: where the sandbox's host uid comes
	 * from; NULL: the default range. Copied. */
	const struct sandbox_uid_range *uid_range;
};

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
/* Freezes (resumes) every process of a local session with a cgroup. While
 * paused the deadline does not run, input fails, and the framebuffer keeps
 * the last frame. False with a message when it cannot (attached, no
 * cgroup, already paused or not paused, not ready, the freezer failed). */
bool bridge_session_pause(struct bridge_session *session, struct error *err);
bool bridge_session_resume(struct bridge_session *session, struct error *err);
bool bridge_session_paused(struct bridge_session *session);
/* What the session's cgroup uses; false when it has none. */
struct sandbox_usage;
bool bridge_session_usage(struct bridge_session *session, struct sandbox_usage *usage);

/* session_info as a JSON object (caller deletes). */
struct cJSON *bridge_session_describe(struct bridge_session *session);

/* False with a message when the desktop cannot be used right now. */
bool bridge_session_usable(struct bridge_session *session, struct error *err);
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
bool bridge_session_send_input(struct bridge_session *session,
			       const struct vnc_input_event *events, size_t count,
			       const struct bridge_input_control *control, struct error *err);
/* Queues events (no pauses) and returns at once: for the network loop. */
bool bridge_session_post_input(struct bridge_session *session,
			       const struct vnc_input_event *events, size_t count, struct error *err);
bool bridge_session_send_cut_text(struct bridge_session *session, const char *latin1,
				  size_t len, struct error *err);
/* Queues cut text after the input queued before it, without waiting: for
 * the network loop. */
bool bridge_session_post_cut_text(struct bridge_session *session, const char *latin1,
				  size_t len, struct error *err);
/* The server's latest clipboard text (UTF-8, caller frees) or NULL. */
char *bridge_session_cut_text(struct bridge_session *session);

/* Where the session's VNC server is, for a connection of one's own (the
 * noVNC relay): the local desktop's private socket, or the attached
 * server with its password. A copy the caller frees with
 * vnc_target_finish. False with a message when the desktop is not usable. */
bool bridge_session_vnc_target(struct bridge_session *session, struct vnc_target *out,
			       struct error *err);

/* Full-screen screenshots reuse what did not change since the last one. */
struct vnc_capture_cache *bridge_session_capture_cache(struct bridge_session *session);

/* Mouse buttons left down by mouse_down: every pointer event carries them
 * until mouse_up, so moves in between drag. */
int bridge_session_buttons_held(struct bridge_session *session);
void bridge_session_set_buttons_held(struct bridge_session *session, int buttons);

/* The session's viewer hub, made on first use when wake is given (NULL
 * otherwise, until start_stream made one). */
struct bridge_viewers;
struct bridge_viewers *bridge_session_viewers(struct bridge_session *session, size_t headroom,
					      void (*wake)(void *), void *wake_context);

#endif
