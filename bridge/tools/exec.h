/* SPDX-License-Identifier: MIT */
/* exec: a command in a session's sandbox, with its stdout, stderr and exit
 * status as data, and its output streamed as progress notifications when
 * the client asks for progress. Local sessions only (an attached VNC
 * server is no sandbox); it runs outside the session's input lane so a
 * long command does not hold up clicks, and stops when the session ends,
 * the client cancels or timeout_ms passes, killing everything it started. */
#ifndef LIZARD_BRIDGE_TOOLS_EXEC_H
#define LIZARD_BRIDGE_TOOLS_EXEC_H

#include "bridge/tools/context.h"

tools_handler tools_exec;

#endif
