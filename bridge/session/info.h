/* SPDX-License-Identifier: MIT */
/* session_info: what a client is told about a session. */
#ifndef LIZARD_BRIDGE_SESSION_INFO_H
#define LIZARD_BRIDGE_SESSION_INFO_H

struct bridge_session;
struct cJSON;

/* session_info as a JSON object (caller deletes). */
struct cJSON *bridge_session_describe(struct bridge_session *session);

#endif
