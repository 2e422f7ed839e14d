/* SPDX-License-Identifier: MIT */
/* run_code and the code contexts (bridge/session/code.h does the work):
 * results in each MIME form the kernel gave, named as the hosted code
 * interpreter names them, with every PNG and JPEG also an image a model
 * can see; logs as the chunks that came, streamed as progress when asked;
 * the error with a plain traceback. Local sessions only, outside the
 * session's input lane. */
#ifndef LIZARD_BRIDGE_TOOLS_CODE_H
#define LIZARD_BRIDGE_TOOLS_CODE_H

#include "bridge/tools/context.h"

tools_handler tools_run_code, tools_create_code_context, tools_list_code_contexts,
	tools_restart_code_context, tools_remove_code_context;

#endif
