/* SPDX-License-Identifier: MIT */
/* A desktop as WebRTC video, with GStreamer's webrtcbin. One stream per
 * desktop: frames come in through an appsrc only when the picture changed
 * (a still screen encodes nothing and sends nothing), are encoded once per
 * codec (VP8 or H.264 constrained baseline, made the first time a peer
 * asks for it) and the RTP packets of that one encode go to every peer
 * through a tee, each peer behind a small leaky queue: a peer that falls
 * behind loses packets, asks again (NACK) or for a keyframe (PLI), and
 * never holds the others up. A peer that connects gets the newest frame
 * again as a keyframe, so a peer that joins a still screen gets a picture
 * at once; a PLI makes the next frame a keyframe, and on a still screen
 * that is all (nothing is sent until the picture changes).
 *
 * Signalling is plain data (an offer, ICE candidates out; an answer and
 * candidates in); the caller carries it and wakes when a peer has some
 * (wake runs on GStreamer's threads: it must be quick and take no lock the
 * caller holds while calling in here). Knows nothing of VNC, MCP or the
 * viewer's wire format. */
#ifndef LIZARD_WEBRTC_STREAM_H
#define LIZARD_WEBRTC_STREAM_H

#include "util/error.h"
#include "webrtc/types.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct webrtc_stream;
struct webrtc_peer;


/* Peers per stream, and signalling messages waiting per peer (more fail
 * the peer: a page that does not read its socket gets no unbounded queue). */
#define WEBRTC_MAX_PEERS 16
#define WEBRTC_MAX_SIGNALS 256
/* A session description or candidate longer than this is refused. */
#define WEBRTC_MAX_SDP (64 * 1024)
#define WEBRTC_MAX_CANDIDATE 1024
/* The input channel's bounds: bytes a message, messages waiting. */
#define WEBRTC_MAX_INPUT_MESSAGE (64 * 1024)
#define WEBRTC_MAX_INPUTS 256
#define WEBRTC_INPUT_CHANNEL "input"
/* STUN and TURN URLs a peer takes. */
#define WEBRTC_MAX_ICE_SERVERS 32

/* Once per process, before anything else here: starts GStreamer and checks
 * that the elements are installed. False, with what is missing, when
 * video cannot work on this machine. */
bool webrtc_init(struct error *err);
/* At exit, after every stream is destroyed: GStreamer lets go of what it
 * holds for the process. Nothing here works afterwards. */
void webrtc_finish(void);
/* Whether webrtc_init found this codec's encoder and payloader. */
bool webrtc_codec_available(enum webrtc_codec codec);
/* "VP8", "H264": the names SDP uses. */
const char *webrtc_codec_name(enum webrtc_codec codec);

struct webrtc_stream *webrtc_stream_create(struct error *err);
/* Ends every peer's connection first. NULL is accepted. */
void webrtc_stream_destroy(struct webrtc_stream *stream);
/* A new picture: width x height pixels, R, G, B, X in memory, rows
 * width * 4 bytes apart. The stream takes pixels (malloc'd) and frees
 * them. */
bool webrtc_stream_push(struct webrtc_stream *stream, uint8_t *pixels, int width, int height,
			struct error *err);
/* Every encoder makes a keyframe of the newest frame, sent again (a page
 * that connected but has no picture asks for it). */
void webrtc_stream_keyframe(struct webrtc_stream *stream);
/* The codec's encoder's bitrate now (bits a second; webrtc/bitrate.h says
 * how it follows the receivers' reports), or 0 when it has none. */
int webrtc_stream_bitrate(struct webrtc_stream *stream, enum webrtc_codec codec);
/* Peers now, so the caller can stop sending frames when there are none. */
int webrtc_stream_peer_count(struct webrtc_stream *stream);

/* A signal (types.h) taken with webrtc_peer_next_signal. */
void webrtc_signal_free(struct webrtc_signal *signal);

/* A peer that receives the stream in codec; ice (ice_count of them, up to
 * WEBRTC_MAX_ICE_SERVERS) are the STUN and TURN servers of a deployment
 * beyond one host or LAN, usually those its page has too. With
 * input_channel the offer has a data channel, "input", whose text
 * messages the owner takes with webrtc_peer_next_input; without, the peer
 * has none and takes none the page opens. The offer follows as a signal. */
struct webrtc_peer *webrtc_peer_create(struct webrtc_stream *stream, enum webrtc_codec codec,
				       bool input_channel, const struct webrtc_ice_server *ice,
				       int ice_count, void (*wake)(void *context), void *context,
				       struct error *err);
/* Ends the connection and frees the peer; no wake is called afterwards.
 * NULL is accepted. */
void webrtc_peer_destroy(struct webrtc_peer *peer);
/* The next signalling message for the page (the caller frees it), or NULL. */
struct webrtc_signal *webrtc_peer_next_signal(struct webrtc_peer *peer);
/* The page's answer (SDP text, len bytes). */
bool webrtc_peer_answer(struct webrtc_peer *peer, const char *sdp, size_t len, struct error *err);
/* One of the page's ICE candidates ("candidate:..."), for media line mline. */
bool webrtc_peer_candidate(struct webrtc_peer *peer, unsigned mline, const char *candidate,
			   struct error *err);
/* The next text message from the page's input channel (NUL-terminated,
 * *len bytes; the caller frees it), or NULL. Messages over
 * WEBRTC_MAX_INPUT_MESSAGE bytes, and any beyond WEBRTC_MAX_INPUTS waiting,
 * are dropped. */
char *webrtc_peer_next_input(struct webrtc_peer *peer, size_t *len);
/* Whether its connection is up (ICE and DTLS done). */
bool webrtc_peer_connected(struct webrtc_peer *peer);

#endif
