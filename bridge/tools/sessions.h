/* SPDX-License-Identifier: MIT */
/* Session management: create_session, list_sessions, session_info,
 * set_timeout, pause_session, resume_session, kill_session, and the viewer
 * links of start_stream and stop_stream. Each answers with the session's
 * description (bridge_session_describe) where it has one to give. */
#ifndef LIZARD_BRIDGE_TOOLS_SESSIONS_H
#define LIZARD_BRIDGE_TOOLS_SESSIONS_H

#include "bridge/tools/context.h"

tools_handler tools_create_session, tools_fork_session, tools_list_sessions, tools_session_info,
	tools_set_timeout, tools_pause_session, tools_resume_session, tools_start_stream,
	tools_stop_stream, tools_kill_session;

#endif
