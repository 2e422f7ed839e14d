/* SPDX-License-Identifier: MIT */
#include "bridge/session/session.h"
#include "bridge/session/state.h"
#include "bridge/session/code.h"
#include "bridge/session/ports.h"


#include "bridge/viewer/hub.h"
#include "bridge/viewer/novnc.h"
#include "sandbox/cgroup.h"
#include "sandbox/desktop.h"
#include "sandbox/sandbox.h"
#include "sandbox/volume.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/utf8.h"
#include "vnc/capture.h"
#include "vnc/conn.h"
#include "vnc/framebuffer.h"
#include "vnc/target.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CONNECT_TIMEOUT_S 10
#define RECONNECT_FIRST_MS 500
#define RECONNECT_MAX_MS 10000
#define CGROUP_DESTROY_TIMEOUT_MS 5000


const char *bridge_session_state_name(enum bridge_session_state state)
{
	static const char *const names[] = { "starting", "ready", "reconnecting", "failed",
					     "ended" };
	return names[state];
}

struct bridge_session *bridge_session_create(const char *id, const struct bridge_session_spec *spec,
					     struct error *err)
{
	struct bridge_session *s = calloc(1, sizeof(*s));
	if (!s)
		goto oom;
	snprintf(s->id, sizeof(s->id), "%s", id);
	atomic_init(&s->refs, 1);
	s->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->kind = spec->kind;
	s->width = spec->width;
	s->height = spec->height;
	s->created = time(NULL);
	s->state = BRIDGE_STARTING;
	pthread_mutex_init(&s->lock, NULL);
	clock_cond_init(&s->changed);
	pthread_rwlock_init(&s->conn_lock, NULL);
	s->fb = vnc_framebuffer_create();
	s->capture_cache = vnc_capture_cache_create();
	s->code = bridge_code_contexts_create();
	s->metadata = spec->metadata ? cJSON_Duplicate(spec->metadata, true) : cJSON_CreateObject();
	if (!s->fb || !s->capture_cache || !s->metadata || !s->code)
		goto oom_session;
	s->network = spec->network;
	size_t env_count = 0;
	while (spec->envs && spec->envs[env_count])
		env_count++;
	if (!(s->envs = calloc(env_count + 1, sizeof(char *))))
		goto oom_session;
	for (size_t i = 0; i < env_count; i++)
		if (!(s->envs[i] = strdup(spec->envs[i])))
			goto oom_session;
	if (spec->kind == BRIDGE_ATTACHED) {
		s->target = *spec->target;
		s->target.host = strdup(spec->target->host);
		s->target.password = spec->target->password ? strdup(spec->target->password) : NULL;
		if (!s->target.host || (spec->target->password && !s->target.password))
			goto oom_session;
	}
	if (spec->limits && spec->cgroup_root) {
		s->cgroup_root = spec->cgroup_root;
		s->limits = *spec->limits;
		s->limited = true;
		snprintf(s->size_name, sizeof(s->size_name), "%s",
			 spec->size_name ? spec->size_name : "custom");
	}
	s->volumes = spec->volumes;
	s->uid_range = spec->uid_range ? *spec->uid_range : SANDBOX_UID_RANGE_DEFAULT;
	if (spec->restore_dir && !(s->restore_dir = strdup(spec->restore_dir)))
		goto oom_session;
	if (spec->image)
		snprintf(s->image, sizeof(s->image), "%s", spec->image);
	if (spec->volume)
		snprintf(s->volume, sizeof(s->volume), "%s", spec->volume);
	bridge_session_set_timeout(s, spec->timeout_ms);
	if (!bridge_session_ports_init(s, err)) {
		bridge_session_unref(s);
		return NULL;
	}
	return s;

oom_session:
	bridge_session_unref(s);
oom:
	error_set(err, 0, "out of memory");
	return NULL;
}

/* The event sink: one for the process, set before sessions start and
 * cleared before what it reports to goes away. */
static pthread_mutex_t sink_lock = PTHREAD_MUTEX_INITIALIZER;
static bridge_session_event_fn sink_fn;
static void *sink_context;

void bridge_session_set_event_sink(bridge_session_event_fn fn, void *context)
{
	pthread_mutex_lock(&sink_lock);
	sink_fn = fn;
	sink_context = context;
	pthread_mutex_unlock(&sink_lock);
}

static void report(const struct bridge_session *s, enum bridge_session_state from,
		   enum bridge_session_state to, const char *why)
{
	pthread_mutex_lock(&sink_lock);
	if (sink_fn)
		sink_fn(s->id, from, to, why, sink_context);
	pthread_mutex_unlock(&sink_lock);
}

static void set_state(struct bridge_session *s, enum bridge_session_state state, const char *why)
{
	/* The reason may come from a VNC server: whole characters only. */
	char reason[sizeof(s->failure)];
	if (why)
		utf8_excerpt(reason, sizeof(reason), why);
	pthread_mutex_lock(&s->lock);
	enum bridge_session_state from = s->state;
	bool changed = from != BRIDGE_ENDED && from != state;
	if (from != BRIDGE_ENDED) {
		if (changed)
			log_info("session %s: %s%s%s", s->id, bridge_session_state_name(state),
				 why ? ": " : "", why ? why : "");
		s->state = state;
		if (why)
			snprintf(s->failure, sizeof(s->failure), "%s", reason);
	}
	pthread_cond_broadcast(&s->changed);
	pthread_mutex_unlock(&s->lock);
	if (changed)
		report(s, from, state, why ? reason : NULL);
}

static bool ended(struct bridge_session *s)
{
	pthread_mutex_lock(&s->lock);
	bool is_ended = s->state == BRIDGE_ENDED;
	pthread_mutex_unlock(&s->lock);
	return is_ended;
}

/* Sleeps up to ms, waking early when the session ends. */
static void sleep_unless_ended(struct bridge_session *s, int64_t ms)
{
	struct timespec until = clock_deadline_ms(ms);
	pthread_mutex_lock(&s->lock);
	while (s->state != BRIDGE_ENDED)
		if (pthread_cond_timedwait(&s->changed, &s->lock, &until) != 0)
			break;
	pthread_mutex_unlock(&s->lock);
}

/* Attached sessions: when the server drops, reconnect with growing pauses
 * until it is back or the session ends. */
/* Clipboard text from the desktop goes to the session's viewers. */
static void clipboard_changed(void *context, const char *utf8, size_t len)
{
	struct bridge_session *s = context;
	pthread_mutex_lock(&s->lock);
	if (s->viewers)
		bridge_viewers_clipboard(s->viewers, utf8, len);
	pthread_mutex_unlock(&s->lock);
}

static struct vnc_conn *listen_to_clipboard(struct bridge_session *s, struct vnc_conn *conn)
{
	if (conn)
		vnc_conn_on_cut_text(conn, clipboard_changed, s);
	return conn;
}

static void *supervise(void *arg)
{
	struct bridge_session *s = arg;
	struct error err;
	while (!ended(s)) {
		pthread_rwlock_rdlock(&s->conn_lock);
		bool alive = vnc_conn_alive(s->conn, &err);
		pthread_rwlock_unlock(&s->conn_lock);
		if (alive) {
			sleep_unless_ended(s, 200);
			continue;
		}
		set_state(s, BRIDGE_RECONNECTING, err.message);
		int64_t pause = RECONNECT_FIRST_MS;
		while (!ended(s)) {
			sleep_unless_ended(s, pause);
			if (ended(s))
				break;
			struct vnc_conn *fresh = vnc_conn_open(&s->target, s->fb, CONNECT_TIMEOUT_S,
							       &s->ending, &err);
			if (fresh) {
				listen_to_clipboard(s, fresh);
				pthread_rwlock_wrlock(&s->conn_lock);
				struct vnc_conn *old = s->conn;
				s->conn = fresh;
				pthread_rwlock_unlock(&s->conn_lock);
				vnc_conn_destroy(old);
				set_state(s, BRIDGE_READY, NULL);
				break;
			}
			log_debug("session %s: reconnect failed: %s", s->id, err.message);
			pause = pause * 2 > RECONNECT_MAX_MS ? RECONNECT_MAX_MS : pause * 2;
		}
	}
	return NULL;
}

/* Local sessions: when the desktop ends by itself (its X server or its
 * sandbox's init died: the OOM killer, a program that killed it), the
 * session fails, saying why, and what is left of its sandbox stops then,
 * helpers included. The session stays known, failed, until it is killed
 * or its deadline passes. */
static void *watch_local(void *arg)
{
	struct bridge_session *s = arg;
	struct error ended_by;
	const char *why = ended_by.message;
	while (!ended(s)) {
		if (!sandbox_desktop_wait_ended(s->desktop, 1000, s->stop_fd, &ended_by))
			continue;
		if (ended(s))
			break;
		char reason[512];
		struct sandbox_usage usage;
		struct error failed;
		if (s->cgroup && sandbox_cgroup_usage(s->cgroup, &usage, &failed) &&
		    usage.oom_kills != SANDBOX_USAGE_UNKNOWN && usage.oom_kills > 0) {
			char limits[160];
			sandbox_limits_describe(&s->limits, limits, sizeof(limits));
			snprintf(reason, sizeof(reason),
				 "%.200s; the kernel's OOM killer ended %llu of the session's "
				 "processes (its size: %.160s)",
				 why, (unsigned long long)usage.oom_kills, limits);
		} else {
			snprintf(reason, sizeof(reason), "%s", why);
		}
		set_state(s, BRIDGE_FAILED, reason);
		sandbox_desktop_end(s->desktop);
		break;
	}
	return NULL;
}

static bool start_local(struct bridge_session *s, struct error *err)
{
	struct sandbox_desktop_options options = {
		.width = s->width,
		.height = s->height,
		.window_manager = s->kind == BRIDGE_DESKTOP,
		.no_x_server = !bridge_session_has_screen(s),
		.network = s->network,
		.envs = (const char *const *)s->envs,
		.disk_bytes = s->limited ? s->limits.disk_bytes : 0,
		.uid_range = &s->uid_range,
		.restore_dir = s->restore_dir,
	};
	struct error failed;
	char workspace[512];
	if (s->volume[0]) {
		if (!s->volumes) {
			error_set(err, 0, "volumes are not available in this daemon");
			return false;
		}
		bool image = false;
		if (!sandbox_volume_acquire(s->volumes, s->volume, s->id, workspace,
					    sizeof(workspace), &image, &failed)) {
			error_set(err, 0, "%s", failed.message);
			return false;
		}
		s->volume_held = true;
		if (image)
			options.workspace_image = workspace;
		else
			options.workspace_dir = workspace;
	}
	/* Before the sandbox: bwrap joins it before exec, so every process of
	 * the session is limited from its first instruction. */
	if (s->limited) {
		s->cgroup = sandbox_cgroup_create(s->cgroup_root, s->id, &s->limits, &failed);
		if (!s->cgroup) {
			error_set(err, 0, "cannot limit the session to size %s: %s", s->size_name,
				  failed.message);
			return false;
		}
		options.cgroup = s->cgroup;
	}
	struct sandbox_desktop *desktop = sandbox_desktop_start(&options, &failed);
	if (desktop && bridge_session_has_screen(s))
		log_info("local desktop on display :%d (%dx%d), files in %s",
			 sandbox_desktop_display(desktop), s->width, s->height,
			 sandbox_run_dir(sandbox_desktop_sandbox(desktop)));
	else if (desktop)
		log_info("local sandbox without a screen, files in %s",
			 sandbox_run_dir(sandbox_desktop_sandbox(desktop)));
	pthread_mutex_lock(&s->lock);
	s->desktop = desktop;
	bool ended_meanwhile = s->state == BRIDGE_ENDED;
	pthread_mutex_unlock(&s->lock);
	/* Ended while it started: nothing of it runs on. */
	if (ended_meanwhile)
		sandbox_desktop_kill(desktop);
	if (!s->desktop) {
		error_set(err, 0, "%s", failed.message);
		return false;
	}
	if (!bridge_session_has_screen(s))
		return true;
	struct vnc_target target = { .host = (char *)sandbox_desktop_vnc_socket(s->desktop),
				     .is_unix = true };
	s->conn = listen_to_clipboard(
		s, vnc_conn_open(&target, s->fb, CONNECT_TIMEOUT_S, &s->ending, err));
	if (!s->conn)
		return false;
	/* X starts the pointer in the middle of the screen. Saying so makes
	 * our idea of it right, and keeps Xvnc from painting its own pointer
	 * into the picture (it does while its pointer and our last one differ). */
	struct vnc_input_event centre = { .type = VNC_INPUT_POINTER,
					  .x = s->width / 2,
					  .y = s->height / 2 };
	return vnc_conn_send_input(s->conn, &centre, 1, err);
}

bool bridge_session_start(struct bridge_session *s, struct error *err)
{
	bool ok;
	if (s->kind == BRIDGE_ATTACHED) {
		ok = (s->conn = listen_to_clipboard(s, vnc_conn_open(&s->target, s->fb,
								     CONNECT_TIMEOUT_S, &s->ending,
								     err)));
		if (ok && pthread_create(&s->supervisor, NULL, supervise, s) == 0)
			s->supervising = true;
	} else {
		ok = start_local(s, err);
		if (ok && pthread_create(&s->supervisor, NULL, watch_local, s) == 0)
			s->supervising = true;
		/* Ready means its kernel answers: the first run_code is fast. */
		if (ok && s->kind == BRIDGE_INTERPRETER)
			ok = bridge_code_start_default(s, err);
	}
	if (ok && bridge_session_has_screen(s)) {
		int w, h;
		vnc_framebuffer_size(s->fb, &w, &h);
		s->width = w;
		s->height = h;
	}
	set_state(s, ok ? BRIDGE_READY : BRIDGE_FAILED, ok ? NULL : err->message);
	return ok;
}

struct bridge_session *bridge_session_ref(struct bridge_session *s)
{
	atomic_fetch_add(&s->refs, 1);
	return s;
}

/* A session that ends stops its programs at once, so calls still running
 * on it (a long exec, a write into a FIFO) come back now instead of at
 * their own timeouts. The rest of the sandbox goes with the last
 * reference. Frozen processes cannot die: they are thawed first. */
static void stop_programs(struct bridge_session *s)
{
	pthread_mutex_lock(&s->lock);
	struct sandbox_desktop *desktop = s->desktop;
	bool paused = s->paused;
	pthread_mutex_unlock(&s->lock);
	struct error failed;
	if (desktop && paused && s->cgroup &&
	    !sandbox_cgroup_thaw(s->cgroup, FREEZE_TIMEOUT_MS, &failed))
		log_warn("session %s: %s", s->id, failed.message);
	sandbox_desktop_kill(desktop);
}

void bridge_session_end(struct bridge_session *s, const char *why)
{
	atomic_store(&s->ending, true);
	pthread_mutex_lock(&s->lock);
	enum bridge_session_state from = s->state;
	bool first = from != BRIDGE_ENDED;
	s->state = BRIDGE_ENDED;
	if (first)
		utf8_excerpt(s->failure, sizeof(s->failure), why);
	pthread_cond_broadcast(&s->changed);
	pthread_mutex_unlock(&s->lock);
	if (first) {
		log_info("session %s ended: %s", s->id, why);
		report(s, from, BRIDGE_ENDED, why);
	}
	vnc_framebuffer_close(s->fb);
	pthread_mutex_lock(&s->lock);
	if (s->viewers)
		bridge_viewers_end(s->viewers);
	pthread_mutex_unlock(&s->lock);
	if (first) {
		uint64_t one = 1;
		if (s->stop_fd >= 0 && write(s->stop_fd, &one, sizeof(one)) != sizeof(one))
			log_debug("session %s: cannot wake its supervisor", s->id);
		bridge_code_contexts_cancel(s->code);
		stop_programs(s);
		/* Its exposed ports' connections close with it. */
		bridge_session_ports_changed();
	}
}

void bridge_session_unref(struct bridge_session *s)
{
	if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
		return;
	bridge_session_end(s, "released");
	if (s->supervising)
		pthread_join(s->supervisor, NULL);
	/* The connection's thread may still hand on clipboard text: it finds
	 * no viewers from here on. */
	pthread_mutex_lock(&s->lock);
	struct bridge_viewers *viewers = s->viewers;
	s->viewers = NULL;
	pthread_mutex_unlock(&s->lock);
	bridge_viewers_destroy(viewers);
	vnc_conn_destroy(s->conn);
	struct error failed;
	/* Frozen processes cannot exit: let them go before the desktop ends. */
	if (s->cgroup && s->paused && !sandbox_cgroup_thaw(s->cgroup, FREEZE_TIMEOUT_MS, &failed))
		log_warn("session %s: %s", s->id, failed.message);
	if (!sandbox_desktop_destroy(s->desktop, &failed))
		log_warn("session %s: %s", s->id, failed.message);
	/* Also ends whatever escaped the sandbox's init. */
	if (s->cgroup && !sandbox_cgroup_destroy(s->cgroup, CGROUP_DESTROY_TIMEOUT_MS, &failed))
		log_warn("session %s: %s", s->id, failed.message);
	if (s->volume_held && !sandbox_volume_release(s->volumes, s->volume, s->id, &failed))
		log_warn("session %s: %s", s->id, failed.message);
	for (size_t i = 0; s->envs && s->envs[i]; i++)
		free(s->envs[i]);
	free(s->envs);
	free(s->restore_dir);
	bridge_code_contexts_destroy(s->code);
	vnc_framebuffer_destroy(s->fb);
	vnc_capture_cache_destroy(s->capture_cache);
	if (s->kind == BRIDGE_ATTACHED)
		vnc_target_finish(&s->target);
	cJSON_Delete(s->metadata);
	if (s->stop_fd >= 0)
		close(s->stop_fd);
	pthread_rwlock_destroy(&s->conn_lock);
	pthread_cond_destroy(&s->changed);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

const char *bridge_session_id(const struct bridge_session *s)
{
	return s->id;
}

enum bridge_session_state bridge_session_state(struct bridge_session *s)
{
	pthread_mutex_lock(&s->lock);
	enum bridge_session_state state = s->state;
	pthread_mutex_unlock(&s->lock);
	return state;
}

struct vnc_framebuffer *bridge_session_framebuffer(struct bridge_session *s)
{
	return s->fb;
}

static bool vnc_target_copy(struct bridge_session *s, struct vnc_target *out, struct error *err)
{
	memset(out, 0, sizeof(*out));
	if (!bridge_session_usable(s, err))
		return false;
	const struct vnc_target *from = &s->target;
	struct vnc_target local = { 0 };
	if (s->desktop) {
		local.host = (char *)sandbox_desktop_vnc_socket(s->desktop);
		local.is_unix = true;
		from = &local;
	}
	*out = *from;
	out->host = strdup(from->host);
	out->password = from->password ? strdup(from->password) : NULL;
	if (!out->host || (from->password && !out->password)) {
		vnc_target_finish(out);
		error_set(err, 0, "out of memory");
		return false;
	}
	return true;
}

struct bridge_novnc *bridge_session_open_novnc(struct bridge_session *s, bool view_only,
					       struct error *err)
{
	struct vnc_target target;
	if (!vnc_target_copy(s, &target, err))
		return NULL;
	struct bridge_novnc *relay = bridge_novnc_create(&target, view_only);
	vnc_target_finish(&target);
	if (!relay)
		error_set(err, 0, "out of memory");
	return relay;
}

struct sandbox_desktop *bridge_session_desktop(struct bridge_session *s)
{
	return s->desktop;
}

struct sandbox *bridge_session_sandbox(struct bridge_session *s)
{
	return s->desktop ? sandbox_desktop_sandbox(s->desktop) : NULL;
}

int64_t bridge_session_deadline(struct bridge_session *s)
{
	pthread_mutex_lock(&s->lock);
	/* The lifetime clock stops while paused. */
	int64_t deadline = s->paused ? 0 : s->deadline_ms;
	pthread_mutex_unlock(&s->lock);
	return deadline;
}

void bridge_session_set_timeout(struct bridge_session *s, int64_t timeout_ms)
{
	pthread_mutex_lock(&s->lock);
	s->timeout_ms = timeout_ms;
	/* While paused the clock stands at the pause: resume adds the gap. */
	int64_t now = s->paused ? s->paused_at_ms : clock_monotonic_ms();
	s->deadline_ms = timeout_ms > 0 ? now + timeout_ms : 0;
	pthread_mutex_unlock(&s->lock);
}

bool bridge_session_has_screen(const struct bridge_session *s)
{
	return s->kind != BRIDGE_BASE && s->kind != BRIDGE_INTERPRETER;
}

bool bridge_session_usable(struct bridge_session *s, struct error *err)
{
	if (!bridge_session_has_screen(s))
		return error_set(err, 0,
				 "session %s has template %s, which has no screen: exec, the file "
				 "tools and run_code work in it; create_session template=desktop "
				 "(or bare) for one with a screen",
				 s->id, s->kind == BRIDGE_BASE ? "base" : "interpreter");
	pthread_mutex_lock(&s->lock);
	enum bridge_session_state state = s->state;
	bool paused = s->paused;
	char failure[sizeof(s->failure)];
	snprintf(failure, sizeof(failure), "%s", s->failure);
	pthread_mutex_unlock(&s->lock);
	switch (state) {
	case BRIDGE_READY:
		if (paused) {
			error_set(err, 0,
				  "session %s is paused: its processes are frozen; resume_session "
				  "first (screenshot shows the last frame meanwhile)",
				  s->id);
			return false;
		}
		break;
	case BRIDGE_ENDED:
		error_set(err, 0, "session %s has ended (%s)", s->id, failure);
		return false;
	case BRIDGE_STARTING:
		error_set(err, 0, "session %s is still starting; try again in a moment", s->id);
		return false;
	case BRIDGE_RECONNECTING:
		error_set(err, 0,
			  "session %s lost its VNC server (%s) and is reconnecting; try again "
			  "shortly",
			  s->id, failure);
		return false;
	case BRIDGE_FAILED:
		error_set(err, 0, "session %s failed: %s", s->id, failure);
		return false;
	}
	pthread_rwlock_rdlock(&s->conn_lock);
	bool alive = vnc_conn_alive(s->conn, err);
	pthread_rwlock_unlock(&s->conn_lock);
	return alive;
}

struct vnc_capture_cache *bridge_session_capture_cache(struct bridge_session *s)
{
	return s->capture_cache;
}

struct bridge_viewers *bridge_session_viewers(struct bridge_session *s, size_t headroom,
					      void (*wake)(void *), void *wake_context)
{
	pthread_mutex_lock(&s->lock);
	if (!s->viewers && wake) {
		s->viewers = bridge_viewers_create(s->fb, headroom, wake, wake_context);
		if (s->viewers && s->paused)
			bridge_viewers_set_paused(s->viewers, true);
	}
	struct bridge_viewers *viewers = s->viewers;
	pthread_mutex_unlock(&s->lock);
	return viewers;
}
