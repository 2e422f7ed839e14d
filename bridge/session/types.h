/* SPDX-License-Identifier: MIT */
/* The types a session's callers and its own files share: its kind, its
 * state and how it is asked for. Types only. */
#ifndef LIZARD_BRIDGE_SESSION_TYPES_H
#define LIZARD_BRIDGE_SESSION_TYPES_H

#include <stdbool.h>
#include <stdint.h>

struct cJSON;
struct sandbox_cgroup_root;
struct sandbox_limits;
struct sandbox_uid_range;
struct sandbox_volumes;
struct vnc_target;

/* Local templates (a sandbox the bridge runs), then attached servers.
 * BASE and INTERPRETER have no X server and so no screen. */
enum bridge_session_kind {
	BRIDGE_DESKTOP,
	BRIDGE_BARE,
	BRIDGE_BASE,
	BRIDGE_INTERPRETER,
	BRIDGE_ATTACHED,
};

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
	/* Local desktops: a snapshot's directory to start from (the sandbox's
	 * snapshot.h); NULL: none. Copied. */
	const char *restore_dir;
	/* The template or snapshot restore_dir holds, for session_info's
	 * "image"; NULL with it. Copied. */
	const char *image;
};

#endif
