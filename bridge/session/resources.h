/* SPDX-License-Identifier: MIT */
/* A local session's resources: its cgroup's pause and resume, what it
 * uses, and the "resources" part of session_info. */
#ifndef LIZARD_BRIDGE_SESSION_RESOURCES_H
#define LIZARD_BRIDGE_SESSION_RESOURCES_H

#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"

struct bridge_session;
struct cJSON;

/* Freezes (resumes) every process of a local session with a cgroup. While
 * paused the deadline does not run, input fails, and the framebuffer keeps
 * the last frame. False with a message when it cannot (attached, no
 * cgroup, already paused or not paused, not ready, the freezer failed). */
bool bridge_session_pause(struct bridge_session *session, struct error *err);
bool bridge_session_resume(struct bridge_session *session, struct error *err);
bool bridge_session_paused(struct bridge_session *session);
/* Runs work on a ready local session with its processes frozen (left as
 * they were when it is paused), then thaws them; false with a message
 * when it is not such a session, has no cgroup, or work failed. */
bool bridge_session_while_frozen(struct bridge_session *session,
				 bool (*work)(struct bridge_session *, void *, struct error *),
				 void *context, struct error *err);
/* What a session's cgroup uses now (BRIDGE_USAGE_UNKNOWN where it cannot
 * tell); false when it has none. */
#define BRIDGE_USAGE_UNKNOWN UINT64_MAX
struct bridge_session_usage {
	uint64_t cpu_usec;     /* CPU time of all its processes, ever */
	uint64_t memory_bytes; /* now, page cache included */
	uint64_t memory_peak_bytes;
	uint64_t processes; /* now, not threads */
	uint64_t oom_kills; /* processes the kernel killed for memory */
};
bool bridge_session_usage(struct bridge_session *session, struct bridge_session_usage *usage);

/* Adds "resources" (size, limits, usage) to info for a session with a
 * size. */
void bridge_session_describe_resources(struct bridge_session *session, struct cJSON *info);

#endif
