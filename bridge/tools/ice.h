/* SPDX-License-Identifier: MIT */
/* start_stream's ice_servers: the STUN and TURN servers a deployment gives
 * the viewer pages' RTCPeerConnection (one host or a LAN needs none). They
 * are checked here, where they come in, and written again as the JSON the
 * page passes to the browser, with only the fields it knows. The input
 * schema has made the argument an array of at most ICE_MAX_SERVERS
 * objects; everything inside each object is checked here. A credential is
 * a secret: no message quotes one, and nothing here logs. */
#ifndef LIZARD_BRIDGE_TOOLS_ICE_H
#define LIZARD_BRIDGE_TOOLS_ICE_H

#include "util/error.h"

#include <stdbool.h>

struct cJSON;

#define ICE_MAX_SERVERS 8
#define ICE_MAX_URLS 4
/* Bytes of a URL, a username, a credential. */
#define ICE_MAX_URL 256
#define ICE_MAX_NAME 256

/* value: the argument, or NULL when it was not given. True with *json the
 * servers as a compact JSON array (malloc'd; it may hold credentials, so
 * the caller wipes it before freeing), or *json NULL when there are none
 * (no argument, or an empty array). False with err naming the field at
 * fault ("ice_servers[1].urls[0] must start with ..."). */
bool tools_ice_servers(const struct cJSON *value, char **json, struct error *err);

#endif
