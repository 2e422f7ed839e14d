/* SPDX-License-Identifier: MIT */
/* The tool catalog: one table of every MCP tool of the daemon, in the
 * order clients list them, each with its name, text for models, its JSON
 * Schemas (files in bridge/tools/schemas, embedded at build time), its
 * handler (exported by its family's header) and how it is scheduled.
 * Registration walks the table; every call goes through one dispatcher,
 * which releases the sessions the call took and checks that it answered
 * with data exactly when the tool declares an outputSchema. */
#ifndef LIZARD_BRIDGE_TOOLS_CATALOG_H
#define LIZARD_BRIDGE_TOOLS_CATALOG_H

#include "bridge/tools/context.h"

#include <stdbool.h>
#include <stddef.h>

struct cJSON;
struct mcp_server;

struct bridge_tool {
	const char *name;
	const char *title;
	const char *description; /* written for a model */
	const char *input_schema;
	/* NULL for a tool that answers with text and images only; with one,
	 * every successful call answers with data (tools_reply_data). */
	const char *output_schema;
	tools_handler *handler;
	bool read_only; /* changes nothing (annotations.readOnlyHint) */
	/* Joins its session's input lane: runs one at a time, in arrival
	 * order, with the other input to that desktop. */
	bool ordered;
	/* Short, bounded work that is never held up by long calls (a
	 * screenshot, session management): mcp_tool.quick. */
	bool quick;
	/* Acts on no one session (takes no session argument), so its calls
	 * count against no session's bound. */
	bool sessionless;
};

/* Every tool, in listing order. */
const struct bridge_tool *bridge_tools_catalog(size_t *count);

/* Registers the catalog. context must outlive the server. */
bool bridge_tools_register(struct mcp_server *server, struct bridge_tools_context *context);
/* Registers tools from another table the same way (tests). */
bool bridge_tools_register_table(struct mcp_server *server, struct bridge_tools_context *context,
				 const struct bridge_tool *tools, size_t count);
/* The group of a call: the session it acts on, whose lane keeps input in
 * order and whose bound holds its long calls. An mcp_group_fn; userdata
 * is the context. */
bool bridge_tools_group(const char *tool, const struct cJSON *args, char *group, size_t size,
			void *userdata);

#endif
