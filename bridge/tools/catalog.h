/* The tool catalog: every MCP tool of the daemon, registered with the MCP
 * server, and what the tools act on. */
#ifndef LIZARD_BRIDGE_TOOLS_CATALOG_H
#define LIZARD_BRIDGE_TOOLS_CATALOG_H

#include <stdbool.h>
#include <stddef.h>

#include "sandbox/size.h"
#include "sandbox/uid.h"

struct bridge_viewer_links;
struct cJSON;
struct mcp_server;
struct bridge_registry;
struct sandbox_cgroup_root;
struct sandbox_volumes;

/* What the tools act on; the caller owns it and what it points to. */
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
	/* Where viewer links point and how viewers wake the server (main
	 * fills it before the tools are registered). */
	const struct bridge_viewer_links *viewer_links;
};

bool bridge_tools_register(struct mcp_server *server, struct bridge_tools_context *context);
/* The group of a call: the session it acts on, whose lane keeps input in
 * order and whose bound holds its long calls. An mcp_group_fn; userdata
 * is the context. */
bool bridge_tools_group(const char *tool, const struct cJSON *args, char *group, size_t size,
			void *userdata);

#endif
