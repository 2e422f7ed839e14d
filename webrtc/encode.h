/* SPDX-License-Identifier: MIT */
/* What GStreamer has for video, a stream's encodes (one per codec, made
 * when a peer first asks for it), their bitrates, and the keyframe
 * requests the stream's thread answers. Private to webrtc/. */
#ifndef LIZARD_WEBRTC_ENCODE_H
#define LIZARD_WEBRTC_ENCODE_H

#include "util/error.h"
#include "webrtc/types.h"

#include <gst/gst.h>

#include <stdbool.h>
#include <stdint.h>

struct webrtc_stream;

/* After gst_init: checks the elements video needs and which codecs have
 * an encoder (webrtc_init). */
bool webrtc_encode_init(struct error *err);
bool webrtc_encode_available(enum webrtc_codec codec);
const char *webrtc_encode_name(enum webrtc_codec codec);
/* Under s->lock: sets codec's encoder to bits a second. */
void webrtc_encode_set_bitrate(struct webrtc_stream *s, enum webrtc_codec codec, int bits);

/* A new element of factory, or NULL with err set. */
GstElement *webrtc_element(const char *factory, struct error *err);
/* The RTP caps of codec: for a transceiver's offer (for_offer), or the
 * payloader's. */
GstCaps *webrtc_rtp_caps(enum webrtc_codec codec, bool for_offer);
/* Under s->lock: codec's encode, made the first time a peer asks for it. */
bool webrtc_make_branch(struct webrtc_stream *s, enum webrtc_codec codec, struct error *err);
/* Wakes the stream's keyframe thread, which repeats the newest frame as a
 * keyframe: a peer connected or its page has no picture. (A PLI needs no
 * repeat: stream.c says why.) */
void webrtc_want_keyframe(struct webrtc_stream *s);

#endif
