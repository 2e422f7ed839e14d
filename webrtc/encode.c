/* SPDX-License-Identifier: MIT */
/* What GStreamer has (webrtc_init), the encodes a stream makes for its
 * peers, and the keyframe requests they answer (see encode.h). */
#include "webrtc/encode.h"

#include "webrtc/bitrate.h"
#include "webrtc/playout.h"
#include "webrtc/state.h"

#include <gst/gst.h>

#include <string.h>

/* A keyframe at least this often (frames) in any case. */
#define KEYFRAME_MAX_DISTANCE 3000
#define RTP_MTU 1200
/* VP8's finest quantizer while moving (0..63; libvpx's default is 4). At
 * constant bitrate the encoder spends its whole budget on content that
 * needs little, down to near-lossless: a scrolling page took 1.5 of the
 * 2 Mbit/s at SSIM 0.998. With this floor it takes 0.6 to 0.8 at 0.995,
 * arrives sooner (p95 glass-to-glass 126 to 93 ms), and the animation,
 * which needs the whole budget, stays at SSIM 0.988 (bench/viewer.mjs).
 * Text is made exact by the refresh once the motion stops. */
#define VP8_MIN_QUANTIZER 36
/* H.264's, for the same reason (its scale is 0..51). H.264 is OpenH264's,
 * not x264's: Chromium showed each frame of x264's stream only once the
 * next one came (a frame behind, whatever x264's threads, slices or
 * delimiters; x264 needed the last frame of a change sent twice), and
 * OpenH264's at once. A floor of 36 took 70 KB/s on a scrolling page at
 * SSIM 0.983, 11% of the WebSocket viewer's bytes; 37, with OpenH264's
 * background detection off, 59 KB/s (9.8%) at 0.985; 38 fell to SSIM
 * 0.976 (README). */
#define H264_MIN_QP 37

static const char *const codec_names[WEBRTC_CODECS] = { "VP8", "H264" };
static bool codec_ok[WEBRTC_CODECS];

static bool have(const char *element)
{
	GstElementFactory *factory = gst_element_factory_find(element);
	if (factory)
		gst_object_unref(factory);
	return factory != NULL;
}

bool webrtc_encode_init(struct error *err)
{
	const char *needed[] = { "appsrc",  "tee",         "queue",   "videoconvert", "webrtcbin",
				 "nicesrc", "dtlssrtpenc", "srtpenc", "rtpbin",       "sctpenc" };
	for (size_t i = 0; i < sizeof(needed) / sizeof(needed[0]); i++)
		if (!have(needed[i]))
			return error_set(
				err, 0,
				"GStreamer has no %s element: install gstreamer1.0-plugins-"
				"base, -good, -bad and gstreamer1.0-nice",
				needed[i]);
	codec_ok[WEBRTC_VP8] = have("vp8enc") && have("rtpvp8pay");
	codec_ok[WEBRTC_H264] = have("openh264enc") && have("rtph264pay") && have("h264parse");
	if (!codec_ok[WEBRTC_VP8] && !codec_ok[WEBRTC_H264])
		return error_set(err, 0,
				 "GStreamer has neither a VP8 nor an H.264 encoder: install "
				 "gstreamer1.0-plugins-good (vp8enc) or -bad with libopenh264 "
				 "(openh264enc)");
	return true;
}

bool webrtc_encode_available(enum webrtc_codec codec)
{
	return codec >= 0 && codec < WEBRTC_CODECS && codec_ok[codec];
}

const char *webrtc_encode_name(enum webrtc_codec codec)
{
	return codec >= 0 && codec < WEBRTC_CODECS ? codec_names[codec] : "?";
}

void webrtc_encode_set_bitrate(struct webrtc_stream *s, enum webrtc_codec codec, int bits)
{
	struct branch *b = &s->branches[codec];
	b->bitrate = bits;
	if (codec == WEBRTC_VP8)
		g_object_set(b->encoder, "target-bitrate", bits, NULL);
	else
		g_object_set(b->encoder, "bitrate", (guint)bits, NULL);
}

void webrtc_want_keyframe(struct webrtc_stream *s)
{
	pthread_mutex_lock(&s->keyframe_lock);
	s->keyframe_wanted = true;
	pthread_cond_signal(&s->keyframe_wanted_cond);
	pthread_mutex_unlock(&s->keyframe_lock);
}

GstElement *webrtc_element(const char *factory, struct error *err)
{
	GstElement *e = gst_element_factory_make(factory, NULL);
	if (!e)
		error_set(err, 0, "GStreamer could not make a %s element", factory);
	return e;
}

/* Under s->lock: adds the elements, links them in order and starts them. */
static bool add_chain(struct webrtc_stream *s, GstElement **chain, int count, struct error *err)
{
	for (int i = 0; i < count; i++) {
		if (!chain[i]) {
			for (int k = 0; k < count; k++)
				if (chain[k])
					gst_object_unref(chain[k]);
			return false; /* err says which */
		}
	}
	for (int i = 0; i < count; i++)
		gst_bin_add(GST_BIN(s->pipeline), chain[i]);
	for (int i = 0; i + 1 < count; i++) {
		if (!gst_element_link(chain[i], chain[i + 1]))
			return error_set(err, 0, "GStreamer could not link %s to %s",
					 GST_OBJECT_NAME(chain[i]), GST_OBJECT_NAME(chain[i + 1]));
	}
	for (int i = count - 1; i >= 0; i--)
		gst_element_sync_state_with_parent(chain[i]);
	return true;
}

static GstCaps *rtp_caps(enum webrtc_codec codec, bool for_offer);

/* The RTP caps of codec's packets; for_offer adds what the offer must say
 * but the payloader works out itself from the stream. H.264's
 * profile-level-id must be what the encoder makes, or webrtcbin refuses
 * the payloader's caps: constrained baseline (42c0) at level 5.1 (33),
 * fixed, so that no screen size changes it. */
GstCaps *webrtc_rtp_caps(enum webrtc_codec codec, bool for_offer)
{
	GstCaps *caps = rtp_caps(codec, for_offer);
	if (caps && for_offer) /* the offer names the payloader's extension */
		gst_caps_set_simple(caps, "extmap-" G_STRINGIFY(WEBRTC_PLAYOUT_DELAY_ID),
				    G_TYPE_STRING, WEBRTC_PLAYOUT_DELAY_URI, NULL);
	return caps;
}

static GstCaps *rtp_caps(enum webrtc_codec codec, bool for_offer)
{
	if (codec == WEBRTC_VP8)
		return gst_caps_from_string("application/x-rtp,media=video,encoding-name=VP8,"
					    "payload=96,clock-rate=90000");
	/* The offer carries packetization-mode=1 only when these caps do. */
	return gst_caps_from_string(for_offer ? "application/x-rtp,media=video,encoding-name=H264,"
						"payload=97,clock-rate=90000,packetization-mode="
						"(string)1,profile-level-id=(string)42c033"
					      : "application/x-rtp,media=video,encoding-name=H264,"
						"payload=97,clock-rate=90000,packetization-mode="
						"(string)1");
}

/* Under s->lock: the encode for codec, made once. */
bool webrtc_make_branch(struct webrtc_stream *s, enum webrtc_codec codec, struct error *err)
{
	struct branch *b = &s->branches[codec];
	if (b->made)
		return true;
	GstElement *queue = webrtc_element("queue", err),
		   *convert = webrtc_element("videoconvert", err);
	GstElement *encoder, *payloader, *rtp_filter = webrtc_element("capsfilter", err);
	GstElement *tee = webrtc_element("tee", err);
	GstElement *chain[10];
	int count = 0;
	if (queue)
		g_object_set(queue, "leaky", 2 /* downstream */, "max-size-buffers", 1,
			     "max-size-bytes", 0, "max-size-time", (guint64)0, NULL);
	if (convert) /* 0: a thread per core (RGBx to I420 of a whole screen) */
		g_object_set(convert, "n-threads", 0, NULL);
	chain[count++] = queue;
	chain[count++] = convert;
	if (codec == WEBRTC_VP8) {
		encoder = webrtc_element("vp8enc", err);
		/* deadline 1: realtime (the default is for files, far too slow). */
		if (encoder)
			g_object_set(encoder, "deadline", (gint64)1, "cpu-used", 8, "end-usage",
				     1 /* cbr */, "target-bitrate", WEBRTC_BITRATE_START,
				     "lag-in-frames", 0, "keyframe-max-dist", KEYFRAME_MAX_DISTANCE,
				     "min-quantizer", VP8_MIN_QUANTIZER, "threads", 2, NULL);
		payloader = webrtc_element("rtpvp8pay", err);
		if (payloader)
			g_object_set(payloader, "picture-id-mode", 2 /* 15 bits */, "mtu", RTP_MTU,
				     NULL);
		chain[count++] = encoder;
	} else {
		encoder = webrtc_element("openh264enc", err);
		/* Its camera mode, at low complexity, on one thread (one slice).
		 * Its screen-content mode took a third of the bytes on a
		 * scrolling page but half again the latency on the animation,
		 * more CPU, and sent nothing for a change of a few levels of
		 * colour (the root window's, back and forth). No keyframe of its
		 * own on a scene change: a window that opens is no reason for a
		 * frame many times the size of the others, and a peer that lost
		 * a picture asks for one. No background detection: with it, a
		 * scrolling page took 7% more bytes (README). */
		if (encoder) {
			gst_util_set_object_arg(G_OBJECT(encoder), "usage-type", "camera");
			gst_util_set_object_arg(G_OBJECT(encoder), "complexity", "low");
			gst_util_set_object_arg(G_OBJECT(encoder), "rate-control", "bitrate");
			g_object_set(encoder, "bitrate", (guint)WEBRTC_BITRATE_START, "gop-size",
				     (guint)KEYFRAME_MAX_DISTANCE, "qp-min", (guint)H264_MIN_QP,
				     "multi-thread", (guint)1, "scene-change-detection", FALSE,
				     "background-detection", FALSE, NULL);
		}
		/* OpenH264 does not say which colours its YUV means, and
		 * Chromium then takes BT.709's; videoconvert's default for a
		 * screen under 720 lines is BT.601's, which turned a red of
		 * (224, 16, 16) into (242, 36, 16). */
		GstElement *colours = webrtc_element("capsfilter", err);
		if (colours) {
			GstCaps *caps = gst_caps_from_string("video/x-raw,colorimetry=bt709");
			g_object_set(colours, "caps", caps, NULL);
			gst_caps_unref(caps);
		}
		GstElement *profile = webrtc_element("capsfilter", err);
		if (profile) {
			GstCaps *caps = gst_caps_from_string(
				"video/x-h264,profile=constrained-baseline,level=(string)5.1");
			g_object_set(profile, "caps", caps, NULL);
			gst_caps_unref(caps);
		}
		GstElement *parse = webrtc_element("h264parse", err);
		payloader = webrtc_element("rtph264pay", err);
		if (payloader) {
			g_object_set(payloader, "config-interval", -1, "mtu", RTP_MTU, NULL);
			gst_util_set_object_arg(G_OBJECT(payloader), "aggregate-mode",
						"zero-latency");
		}
		chain[count++] = colours;
		chain[count++] = encoder;
		chain[count++] = profile;
		chain[count++] = parse;
	}
	if (payloader)
		webrtc_playout_delay_add(payloader);
	chain[count++] = payloader;
	if (rtp_filter) {
		GstCaps *caps = webrtc_rtp_caps(codec, false);
		g_object_set(rtp_filter, "caps", caps, NULL);
		gst_caps_unref(caps);
	}
	chain[count++] = rtp_filter;
	if (tee)
		g_object_set(tee, "allow-not-linked", TRUE, NULL);
	chain[count++] = tee;
	if (!add_chain(s, chain, count, err))
		return error_prefix(err, "the %s encode", codec_names[codec]);
	if (!gst_element_link(s->raw_tee, queue))
		return error_set(err, 0, "GStreamer could not link the %s encode",
				 codec_names[codec]);
	b->encoder = encoder;
	b->tee = tee;
	b->bitrate = WEBRTC_BITRATE_START;
	b->made = true;
	return true;
}
