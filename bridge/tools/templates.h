/* SPDX-License-Identifier: MIT */
/* Templates an operator builds (build_template, list_templates,
 * delete_template, and `lizard-bridge template ...`): a root filesystem
 * made from the host's system or another template, with files written and
 * commands run as root (sandbox/template.h), kept in the data directory
 * under templates/<name>/ in a snapshot's form, and what starts in it
 * (base, bare or desktop) and its envs. create_session template=<name>
 * starts one, as it restores a snapshot. */
#ifndef LIZARD_BRIDGE_TOOLS_TEMPLATES_H
#define LIZARD_BRIDGE_TOOLS_TEMPLATES_H

#include "bridge/tools/context.h"

#include <stdbool.h>
#include <stddef.h>

struct cJSON;

tools_handler tools_build_template, tools_list_templates, tools_delete_template;

/* A built template's or a snapshot's directory (in dir) and its meta
 * (the caller deletes it); NULL when the call has been failed. */
struct cJSON *tools_image_load(struct bridge_tools_context *context, struct mcp_call *call,
			       const char *name, char *dir, size_t size);

/* `lizard-bridge template build|list|delete ...` (argv from "template"
 * on); the process's exit status. */
int tools_template_command(int argc, char **argv);

#endif
