/* SPDX-License-Identifier: MIT */
/* Checks tool arguments against the JSON Schema subset our tools declare:
 * type (one or a list), enum, minimum/maximum, minLength/maxLength,
 * items/minItems/maxItems, properties/required. Properties not declared are
 * refused, so a misspelled argument never passes silently. */
#ifndef LIZARD_MCP_SCHEMA_H
#define LIZARD_MCP_SCHEMA_H

#include "util/error.h"
#include <stdbool.h>
#include <stddef.h>

struct cJSON;

/* On failure writes a message naming the argument, what it got and what
 * is allowed. tool names the tool in that message. */
bool mcp_schema_check_arguments(const struct cJSON *schema, const struct cJSON *args,
				const char *tool, struct error *err);

#endif
