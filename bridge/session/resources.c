/* SPDX-License-Identifier: MIT */
/* A local session's resources: the usage and limits session_info reports,
 * and pause/resume with the cgroup freezer (the deadline stands still and
 * the VNC connection stops reading while the desktop is frozen). */
#include "bridge/session/resources.h"

#include "bridge/session/session.h"
#include "bridge/session/state.h"

#include "bridge/viewer/hub.h"
#include "sandbox/cgroup.h"
#include "sandbox/desktop.h"
#include "sandbox/sandbox.h"
#include "util/log.h"
#include "vnc/conn.h"
#include "vnc/framebuffer.h"
#include "util/clock.h"

#include <cjson/cJSON.h>
#include <stdio.h>

static void add_count(cJSON *object, const char *name, uint64_t value)
{
	if (value != SANDBOX_USAGE_UNKNOWN)
		cJSON_AddNumberToObject(object, name, (double)value);
}

/* Size, limits and what the session's cgroup uses now. */
void bridge_session_describe_resources(struct bridge_session *s, cJSON *info)
{
	if (!s->limited)
		return;
	cJSON *resources = cJSON_AddObjectToObject(info, "resources");
	if (!resources)
		return;
	cJSON_AddStringToObject(resources, "size", s->size_name);
	cJSON *limits = cJSON_AddObjectToObject(resources, "limits");
	if (limits) {
		cJSON_AddNumberToObject(limits, "cpus", s->limits.cpu_millis / 1000.0);
		cJSON_AddNumberToObject(limits, "memory_bytes", (double)s->limits.memory_bytes);
		cJSON_AddNumberToObject(limits, "pids", (double)s->limits.pids);
		if (s->limits.disk_bytes)
			cJSON_AddNumberToObject(limits, "disk_bytes", (double)s->limits.disk_bytes);
		else
			cJSON_AddNullToObject(limits, "disk_bytes");
	}
	struct sandbox_usage usage;
	struct error failed;
	if (!s->cgroup || !sandbox_cgroup_usage(s->cgroup, &usage, &failed))
		return;
	cJSON *used = cJSON_AddObjectToObject(resources, "usage");
	if (!used)
		return;
	if (usage.cpu_usec != SANDBOX_USAGE_UNKNOWN)
		cJSON_AddNumberToObject(used, "cpu_seconds", usage.cpu_usec / 1e6);
	if (usage.cpu_throttled_usec != SANDBOX_USAGE_UNKNOWN)
		cJSON_AddNumberToObject(used, "cpu_throttled_seconds",
					usage.cpu_throttled_usec / 1e6);
	add_count(used, "memory_bytes", usage.memory_bytes);
	add_count(used, "memory_peak_bytes", usage.memory_peak_bytes);
	add_count(used, "processes", usage.processes);
	add_count(used, "tasks", usage.tasks);
	add_count(used, "oom_kills", usage.oom_kills);
	pthread_mutex_lock(&s->lock);
	struct sandbox *sandbox = s->desktop ? sandbox_desktop_sandbox(s->desktop) : NULL;
	pthread_mutex_unlock(&s->lock);
	uint64_t disk_used, disk_total;
	if (sandbox && sandbox_disk_use(sandbox, &disk_used, &disk_total))
		cJSON_AddNumberToObject(used, "disk_bytes", (double)disk_used);
}

bool bridge_session_usage(struct bridge_session *s, struct bridge_session_usage *usage)
{
	struct sandbox_usage cgroup;
	struct error failed;
	if (!s->cgroup || !sandbox_cgroup_usage(s->cgroup, &cgroup, &failed))
		return false;
	/* The cgroup's unknown is the same UINT64_MAX as ours. */
	*usage = (struct bridge_session_usage){
		.cpu_usec = cgroup.cpu_usec,
		.memory_bytes = cgroup.memory_bytes,
		.memory_peak_bytes = cgroup.memory_peak_bytes,
		.processes = cgroup.processes,
		.oom_kills = cgroup.oom_kills,
	};
	return true;
}

/* Pause and resume run one at a time per session (they also exclude
 * each other across sessions, which is harmless: each is bounded by the
 * freezer's deadline). */
static pthread_mutex_t pause_lock = PTHREAD_MUTEX_INITIALIZER;

static bool check_pausable(struct bridge_session *s, bool want_paused, struct error *err)
{
	if (s->kind == BRIDGE_ATTACHED) {
		error_set(
			err, 0,
			"session %s is attached to a VNC server the bridge does not run; only "
			"local sessions (templates desktop, bare, base, interpreter) can be paused",
			s->id);
		return false;
	}
	if (!s->cgroup) {
		error_set(
			err, 0,
			"session %s has no cgroup to freeze: it was created without a size because "
			"this daemon cannot create cgroups (see its start log)",
			s->id);
		return false;
	}
	pthread_mutex_lock(&s->lock);
	enum bridge_session_state state = s->state;
	bool paused = s->paused;
	pthread_mutex_unlock(&s->lock);
	if (state != BRIDGE_READY) {
		error_set(err, 0, "session %s is %s, not ready", s->id,
			  bridge_session_state_name(state));
		return false;
	}
	if (paused == want_paused) {
		error_set(err, 0,
			  want_paused ? "session %s is already paused"
				      : "session %s is not paused; it is running",
			  s->id);
		return false;
	}
	return true;
}

bool bridge_session_pause(struct bridge_session *s, struct error *err)
{
	pthread_mutex_lock(&pause_lock);
	bool ok = check_pausable(s, true, err);
	struct error failed;
	if (ok) {
		/* Stop reading first: a frozen Xvnc must not look like a dead one. */
		pthread_rwlock_rdlock(&s->conn_lock);
		vnc_conn_set_paused(s->conn, true);
		pthread_rwlock_unlock(&s->conn_lock);
		ok = sandbox_cgroup_freeze(s->cgroup, FREEZE_TIMEOUT_MS, &failed);
		if (!ok) {
			error_set(err, 0, "cannot pause session %s: %s", s->id, failed.message);
			pthread_rwlock_rdlock(&s->conn_lock);
			vnc_conn_set_paused(s->conn, false);
			pthread_rwlock_unlock(&s->conn_lock);
		}
	}
	if (ok) {
		pthread_mutex_lock(&s->lock);
		s->paused = true;
		s->paused_at_ms = clock_monotonic_ms();
		pthread_cond_broadcast(&s->changed);
		if (s->viewers)
			bridge_viewers_set_paused(s->viewers, true);
		pthread_mutex_unlock(&s->lock);
		log_info("session %s paused", s->id);
	}
	pthread_mutex_unlock(&pause_lock);
	return ok;
}

bool bridge_session_resume(struct bridge_session *s, struct error *err)
{
	pthread_mutex_lock(&pause_lock);
	bool ok = check_pausable(s, false, err);
	struct error failed;
	if (ok && !(ok = sandbox_cgroup_thaw(s->cgroup, FREEZE_TIMEOUT_MS, &failed)))
		error_set(err, 0, "cannot resume session %s: %s", s->id, failed.message);
	if (ok) {
		pthread_mutex_lock(&s->lock);
		/* The deadline moves by the time spent paused. */
		if (s->deadline_ms > 0)
			s->deadline_ms += clock_monotonic_ms() - s->paused_at_ms;
		s->paused = false;
		pthread_cond_broadcast(&s->changed);
		if (s->viewers)
			bridge_viewers_set_paused(s->viewers, false);
		pthread_mutex_unlock(&s->lock);
		pthread_rwlock_rdlock(&s->conn_lock);
		vnc_conn_set_paused(s->conn, false);
		pthread_rwlock_unlock(&s->conn_lock);
		log_info("session %s resumed", s->id);
	}
	pthread_mutex_unlock(&pause_lock);
	return ok;
}

static void set_conn_paused(struct bridge_session *s, bool paused)
{
	pthread_rwlock_rdlock(&s->conn_lock);
	vnc_conn_set_paused(s->conn, paused);
	pthread_rwlock_unlock(&s->conn_lock);
}

bool bridge_session_while_frozen(struct bridge_session *s,
				 bool (*work)(struct bridge_session *, void *, struct error *),
				 void *context, struct error *err)
{
	if (s->kind == BRIDGE_ATTACHED || !bridge_session_sandbox(s))
		return error_set(err, 0,
				 "session %s is not a local sandbox; only local sessions have "
				 "files the bridge can keep",
				 s->id);
	pthread_mutex_lock(&pause_lock);
	pthread_mutex_lock(&s->lock);
	bool ready = s->state == BRIDGE_READY, paused = s->paused;
	pthread_mutex_unlock(&s->lock);
	bool ok = ready || error_set(err, 0, "session %s is not ready", s->id);
	/* Unfrozen, its programs could swap a directory for a link while
	 * the daemon copies, and have the host's files copied in. */
	if (ok && !s->cgroup)
		ok = error_set(err, 0,
			       "session %s has no cgroup to freeze while its files are copied: it "
			       "was created without a size because this daemon cannot create "
			       "cgroups (see its start log)",
			       s->id);
	struct error failed;
	bool freeze = ok && s->cgroup && !paused;
	/* As pause does: a frozen Xvnc must not look like a dead one. */
	if (freeze)
		set_conn_paused(s, true);
	if (freeze && !(ok = sandbox_cgroup_freeze(s->cgroup, FREEZE_TIMEOUT_MS, &failed)))
		error_set(err, 0, "cannot freeze session %s: %s", s->id, failed.message);
	ok = ok && work(s, context, err);
	if (freeze && !sandbox_cgroup_thaw(s->cgroup, FREEZE_TIMEOUT_MS, &failed))
		log_warn("session %s stays frozen: %s", s->id, failed.message);
	if (freeze)
		set_conn_paused(s, false);
	pthread_mutex_unlock(&pause_lock);
	return ok;
}

bool bridge_session_paused(struct bridge_session *s)
{
	pthread_mutex_lock(&s->lock);
	bool paused = s->paused;
	pthread_mutex_unlock(&s->lock);
	return paused;
}
