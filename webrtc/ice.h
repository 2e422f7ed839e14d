/* SPDX-License-Identifier: MIT */
/* A peer's STUN and TURN servers (types.h's webrtc_ice_server, as a page's
 * RTCIceServer has them) handed to its webrtcbin, which wants its own
 * forms: "stun://host:port" for its one STUN server, and
 * "turn(s)://user:credential@host:port" for each TURN server, user and
 * credential escaped. Messages never quote a credential. */
#ifndef LIZARD_WEBRTC_ICE_H
#define LIZARD_WEBRTC_ICE_H

#include "util/error.h"
#include "webrtc/types.h"

#include <stdbool.h>

struct _GstElement;

/* The first STUN URL becomes webrtcbin's stun-server (it takes one), each
 * TURN URL a TURN server. False, with which one, when webrtcbin refuses
 * one or count is over WEBRTC_MAX_ICE_SERVERS (stream.h). */
bool webrtc_ice_use(struct _GstElement *webrtc, const struct webrtc_ice_server *servers, int count,
		    struct error *err);

#endif
