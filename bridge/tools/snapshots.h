/* SPDX-License-Identifier: MIT */
/* Snapshots: snapshot_session, fork_session, list_snapshots,
 * delete_snapshot; create_session restores one with template=<snapshot>.
 * A snapshot is a local session's files (its writable root's layer, HOME,
 * /tmp and /workspace unless a volume is there) and how it was made
 * (template, screen, envs, metadata), kept in the data directory. */
#ifndef LIZARD_BRIDGE_TOOLS_SNAPSHOTS_H
#define LIZARD_BRIDGE_TOOLS_SNAPSHOTS_H

#include "bridge/tools/context.h"

#include <stdbool.h>
#include <stddef.h>

struct cJSON;

tools_handler tools_snapshot_session, tools_list_snapshots, tools_delete_snapshot;
struct bridge_session;
struct mcp_call;

/* Whether name has a snapshot id's shape ("snap-" and 12 hex digits). */
bool tools_is_snapshot_id(const char *name);
/* The snapshot id's directory (in dir) and what meta.json says of how its
 * session was made (the caller deletes it); NULL when the call has been
 * failed (no such snapshot, no data directory). */
struct cJSON *tools_snapshot_load(struct bridge_tools_context *context, struct mcp_call *call,
				  const char *id, char *dir, size_t size);

/* What dir/meta.json (a snapshot's or a built template's) says; NULL
 * when it is missing or not a JSON object. */
struct cJSON *tools_kept_read_meta(const char *dir);
/* Removes a snapshot's or template's directory and answers {key: name,
 * deleted: true}, or fails the call saying why. */
void tools_kept_delete(struct mcp_call *call, const char *dir, const char *key, const char *name);
/* Whether snapshots can be kept here; the call failed with why not. */
bool tools_snapshot_store_ready(struct bridge_tools_context *context, struct mcp_call *call);
/* Makes a snapshot of session; its id in id. A failure leaves nothing and
 * has failed the call. */
bool tools_snapshot_take(struct bridge_tools_context *context, struct mcp_call *call,
			 struct bridge_session *session, char *id, size_t size);

#endif
