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
/* x264's, for the same reason (its scale, 0..51, is not VP8's). With
 * x264's superfast preset and the uneven multi-hexagon motion search
 * (a scrolled page moves further than ultrafast's diamond finds), a
 * scrolling page took 49 KB/s at SSIM 0.987, where ultrafast without a
 * floor took 214 KB/s; the animation kept SSIM 0.989 at 43% of a core,
 * where VP8 takes 74% (bench/viewer.mjs, README). */
#define H264_MIN_QP 32

static const char *const codec_names[WEBRTC_CODECS] = { "VP8", "H264" };
static bool codec_ok[WEBRTC_CODECS];
static const char *h264_encoder; /* x264enc, else openh264enc */

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
	h264_encoder = have("x264enc") ? "x264enc" : have("openh264enc") ? "openh264enc" : NULL;
	codec_ok[WEBRTC_H264] = h264_encoder && have("rtph264pay") && have("h264parse");
	if (!codec_ok[WEBRTC_VP8] && !codec_ok[WEBRTC_H264])
		return error_set(err, 0,
				 "GStreamer has neither a VP8 nor an H.264 encoder: install "
				 "gstreamer1.0-plugins-good (vp8enc) or -ugly (x264enc)");
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
	else /* x264enc counts kbit/s, openh264enc bit/s */
		g_object_set(b->encoder, "bitrate",
			     strcmp(h264_encoder, "x264enc") == 0 ? (guint)bits / 1000
								  : (guint)bits,
			     NULL);
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

/* A frame's number rides on it as a reference timestamp of a kind of
 * its own, which buffer copies keep and nothing downstream reads. */
static GstStaticCaps frame_number_caps = GST_STATIC_CAPS("timestamp/x-lizard-frame");

void webrtc_frame_number_set(GstBuffer *buffer, uint64_t number)
{
	GstCaps *caps = gst_static_caps_get(&frame_number_caps);
	gst_buffer_add_reference_timestamp_meta(buffer, caps, number, GST_CLOCK_TIME_NONE);
	gst_caps_unref(caps);
}

uint64_t webrtc_frame_number(GstBuffer *buffer)
{
	GstCaps *caps = gst_static_caps_get(&frame_number_caps);
	GstReferenceTimestampMeta *meta = gst_buffer_get_reference_timestamp_meta(buffer, caps);
	gst_caps_unref(caps);
	return meta ? meta->timestamp : 0;
}

/* On the H.264 queue's thread: the frame the encode takes now. */
static GstPadProbeReturn on_h264_taken(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
	(void)pad;
	struct webrtc_stream *s = data;
	GstBuffer *buffer = GST_PAD_PROBE_INFO_BUFFER(info);
	uint64_t number = buffer ? webrtc_frame_number(buffer) : 0;
	if (number)
		atomic_store(&s->h264_taken, number);
	return GST_PAD_PROBE_OK;
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
	GstElement *chain[8];
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
		encoder = webrtc_element(h264_encoder, err);
		if (encoder && strcmp(h264_encoder, "x264enc") == 0) {
			gst_util_set_object_arg(G_OBJECT(encoder), "tune", "zerolatency");
			gst_util_set_object_arg(G_OBJECT(encoder), "speed-preset", "superfast");
			gst_util_set_object_arg(G_OBJECT(encoder), "me", "umh");
			g_object_set(encoder, "bitrate", WEBRTC_BITRATE_START / 1000, "key-int-max",
				     KEYFRAME_MAX_DISTANCE, "qp-min", H264_MIN_QP, NULL);
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
	if (codec == WEBRTC_H264) {
		GstPad *taken = gst_element_get_static_pad(queue, "src");
		gst_pad_add_probe(taken, GST_PAD_PROBE_TYPE_BUFFER, on_h264_taken, s, NULL);
		gst_object_unref(taken);
	}
	b->encoder = encoder;
	b->tee = tee;
	b->bitrate = WEBRTC_BITRATE_START;
	b->made = true;
	return true;
}
