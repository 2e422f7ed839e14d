/* SPDX-License-Identifier: MIT */
/* What the tools act on, and what one call holds while it runs. main fills
 * a struct bridge_tools_context before the tools are registered; every
 * handler gets it. A call takes sessions (tools_session) and may answer
 * with data (tools_reply_data); both are kept per worker thread, because a
 * handler runs on one worker from start to end, and the catalog's
 * dispatcher ends every call with tools_call_end, which releases the
 * sessions and says whether data went out, to check it against the tool's
 * outputSchema. */
#ifndef LIZARD_BRIDGE_TOOLS_CONTEXT_H
#define LIZARD_BRIDGE_TOOLS_CONTEXT_H

#include "sandbox/size.h"
#include "sandbox/uid.h"

#include <stdbool.h>

struct bridge_registry;
struct bridge_session;
struct bridge_viewer_links;
struct cJSON;
struct mcp_call;
struct sandbox_cgroup_root;
struct sandbox_volumes;

/* The caller owns it and what it points to. */
struct bridge_tools_context {
	struct bridge_registry *registry;
	/* Sizes: NULL root when this daemon cannot create cgroups, and why. */
	struct sandbox_cgroup_root *cgroup_root;
	char cgroup_why[512];
	/* Why sizes have no disk limit here ("" when they have one). */
	char disk_why[512];
	struct sandbox_sizes sizes;
	/* Where a root daemon's sandboxes take their host uids from. */
	struct sandbox_uid_range uid_range;
	/* NULL when the data directory could not be opened (why in volumes_why). */
	struct sandbox_volumes *volumes;
	char volumes_why[512];
	/* Where snapshots are kept (data directory/snapshots, the daemon's,
	 * 0700); "" when there is none. */
	char snapshots_dir[512];
	/* Where viewer links point and how viewers wake the server (main
	 * fills it before the tools are registered). */
	const struct bridge_viewer_links *viewer_links;
};

/* A tool's handler: runs on a worker thread with args already checked
 * against the tool's input schema. Family headers declare theirs with it
 * (`tools_handler tools_click;`), so each matches the catalog's field. */
typedef void tools_handler(struct mcp_call *call, const struct cJSON *args,
			   struct bridge_tools_context *context);

/* The session named by args.session, or the only one, held until the call
 * ends. On failure the call has been failed with a message listing the
 * sessions. */
struct bridge_session *tools_session(struct bridge_tools_context *context, struct mcp_call *call,
				     const struct cJSON *args);
/* Like tools_session, and the desktop must be connected. */
struct bridge_session *tools_usable_session(struct bridge_tools_context *context,
					    struct mcp_call *call, const struct cJSON *args);

/* Answers with data: structuredContent and the same JSON as text. Takes
 * ownership of object; NULL (out of memory while building it) fails the
 * call. The only way a tool answers with data (common.h poisons the MCP
 * engine's own call), so that the catalog sees every answer. */
void tools_reply_data(struct mcp_call *call, struct cJSON *object);
/* The same, with shown as the text (mcp_call_structured_shown). */
void tools_reply_data_shown(struct mcp_call *call, struct cJSON *object, struct cJSON *shown);

/* Ends this thread's call: releases the sessions it took and returns
 * whether it answered with data, ready for the next call. */
bool tools_call_end(void);

#endif
