/* SPDX-License-Identifier: MIT */
/* The codecs and the signalling messages of a stream (stream.h), apart so
 * that the files behind it can share them; types only. */
#ifndef LIZARD_WEBRTC_TYPES_H
#define LIZARD_WEBRTC_TYPES_H

enum webrtc_codec { WEBRTC_VP8, WEBRTC_H264, WEBRTC_CODECS };

/* What a peer sends its page, taken with webrtc_peer_next_signal. */
enum webrtc_signal_kind { WEBRTC_SIGNAL_OFFER, WEBRTC_SIGNAL_CANDIDATE, WEBRTC_SIGNAL_FAILED };
struct webrtc_signal {
	enum webrtc_signal_kind kind;
	unsigned mline; /* a candidate's media line */
	char *text;     /* the offer's SDP, the candidate, or why the peer failed */
	struct webrtc_signal *next;
};

/* A STUN or TURN server for a peer's own ICE candidates, in the terms a
 * page's RTCIceServer uses: url is "stun:host[:port]", "turn:..." or
 * "turns:..." (with "?transport=udp|tcp" if wanted); TURN needs username
 * and credential, which are secrets. */
struct webrtc_ice_server {
	const char *url, *username, *credential;
};

#endif
