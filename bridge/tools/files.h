/* SPDX-License-Identifier: MIT */
/* Files in a session's sandbox: read_file, write_file, list_files. Text
 * travels as text, anything else as base64, at most 3 MiB a call so that
 * a reply fits what MCP clients take. Local sessions only, outside the
 * session's input lane, as the sandbox's user unless root is asked for
 * (root inside the sandbox only). */
#ifndef LIZARD_BRIDGE_TOOLS_FILES_H
#define LIZARD_BRIDGE_TOOLS_FILES_H

#include "bridge/tools/context.h"

tools_handler tools_read_file, tools_write_file, tools_list_files;

#endif
