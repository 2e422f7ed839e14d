/* SPDX-License-Identifier: MIT */
/* The sessions a bridge holds, by id, and their deadlines: a reaper thread
 * ends each session when its time is up. */
#ifndef LIZARD_BRIDGE_REGISTRY_H
#define LIZARD_BRIDGE_REGISTRY_H

#include "util/error.h"
#include <stdbool.h>
#include <stddef.h>

struct bridge_registry;
struct bridge_session;
struct cJSON;

#define BRIDGE_MAX_SESSIONS 64

struct bridge_registry *bridge_registry_create(void);
/* Ends every session once and forgets it; from then on nothing can be
 * added or acquired ("the bridge is shutting down"), so calls still running
 * fail fast. Safe to call again. NULL is fine. */
void bridge_registry_shutdown(struct bridge_registry *registry);
/* Shuts down (if not yet) and frees. Only once no thread can call into the
 * registry any more: after the MCP server's workers are joined. NULL is
 * fine. */
void bridge_registry_destroy(struct bridge_registry *registry);

/* Drops a reference on the registry's own thread: the last one takes a
 * desktop down (grace periods, joins), which a network loop must not wait
 * for. NULL is fine. */
void bridge_registry_release(struct bridge_registry *registry, struct bridge_session *session);

/* A fresh id, unguessable enough not to collide: "s-" and 8 hex digits. */
void bridge_registry_new_id(char *id, size_t size);
/* Takes a reference of its own. False (with a message) when full. */
bool bridge_registry_add(struct bridge_registry *registry, struct bridge_session *session,
			 struct error *err);
/* The named session, or the only one when id is NULL, with a reference the
 * caller drops. NULL with a message that lists the sessions otherwise. */
struct bridge_session *bridge_registry_acquire(struct bridge_registry *registry, const char *id,
					       struct error *err);
/* Ends the session and forgets it. */
bool bridge_registry_kill(struct bridge_registry *registry, const char *id, const char *why,
			  struct error *err);
/* session_info of every session, as a JSON array. */
struct cJSON *bridge_registry_describe(struct bridge_registry *registry);
/* Sessions per state (indexed by enum bridge_session_state). */
/* References to every session now (at most max); the caller unrefs them. */
size_t bridge_registry_snapshot(struct bridge_registry *registry, struct bridge_session **out,
				size_t max);
/* Calls fn for every session under the registry's lock (so each stays
 * alive without a reference, and the caller never ends up destroying one);
 * fn must be quick and must not call the registry. */
void bridge_registry_visit(struct bridge_registry *registry,
			   void (*fn)(struct bridge_session *session, void *context),
			   void *context);
void bridge_registry_count_states(struct bridge_registry *registry, int counts[5]);
/* The lane id (a session's id) for ordering calls; false when unknown. */
bool bridge_registry_lane(struct bridge_registry *registry, const char *id, char *lane,
			  size_t size);

#endif
