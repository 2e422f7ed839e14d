/* SPDX-License-Identifier: MIT */
/* A session's state, shared by the files of bridge/session/ (lifetime,
 * input, resources, session_info); types only, not public. */
#ifndef LIZARD_BRIDGE_SESSION_STATE_H
#define LIZARD_BRIDGE_SESSION_STATE_H

#include "sandbox/name.h"
#include "bridge/session/types.h"
#include "sandbox/size.h"
#include "sandbox/uid.h"
#include "vnc/target.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

struct cJSON;
struct sandbox_cgroup;
struct bridge_code_contexts;

#define FREEZE_TIMEOUT_MS 5000

struct bridge_session {
	char id[64];
	atomic_int refs;
	enum bridge_session_kind kind;
	int width, height;
	struct vnc_target target; /* attached; host is the socket path for local ones */
	struct cJSON *metadata;
	time_t created;

	bool network;
	char **envs; /* NAME=value, NULL-terminated */
	struct sandbox_desktop *desktop;
	struct sandbox_cgroup_root *cgroup_root;
	struct sandbox_limits limits;
	bool limited;
	char size_name[16];
	struct sandbox_cgroup *cgroup; /* while the desktop runs */
	struct sandbox_volumes *volumes;
	char volume[SANDBOX_NAME_MAX + 1]; /* "" for none */
	bool volume_held;
	char *restore_dir; /* NULL: none */
	char image[80];    /* "" for none */
	struct sandbox_uid_range uid_range;
	struct bridge_code_contexts *code; /* run_code's contexts */
	char access_token[48];             /* ports.c; set once at creation */
	struct vnc_framebuffer *fb;
	struct vnc_capture_cache *capture_cache;

	/* Readers send through conn; the supervisor swaps it on reconnect. */
	pthread_rwlock_t conn_lock;
	struct vnc_conn *conn;

	/* Set once when the session ends: a VNC connection (or connect) in
	 * progress gives up at once. */
	atomic_bool ending;

	pthread_mutex_t lock; /* the fields below */
	pthread_cond_t changed;
	enum bridge_session_state state;
	char failure[400];
	int64_t timeout_ms, deadline_ms;
	int buttons_held;
	bool paused;
	int64_t paused_at_ms;
	struct bridge_viewers *viewers;
	int exposed_ports[32]; /* ports.c: BRIDGE_SESSION_MAX_PORTS */
	int exposed_count;
	bool supervising;
	pthread_t supervisor; /* attached: reconnects; local: watches the desktop */
	int stop_fd;          /* an eventfd the supervisor polls; readable once ended */
};


#endif
