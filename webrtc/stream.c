/* SPDX-License-Identifier: MIT */
/* The pipeline, as it grows:
 *
 *   appsrc -> tee -+-> queue -> videoconvert -> vp8enc -> rtpvp8pay -> caps -> tee -+-> peer
 *                  |                                                                  +-> peer
 *                  +-> queue -> videoconvert -> x264enc -> caps -> rtph264pay -> caps -> tee -> ...
 *
 * where each peer is a leaky queue in front of its own webrtcbin. An
 * encode is made when the first peer asks for its codec. The appsrc and
 * every queue before an encoder hold at most a frame or two and drop the
 * oldest, so a slow encoder skips frames instead of falling behind.
 *
 * Keyframes: a peer's webrtcbin turns a PLI into a force-key-unit event
 * going upstream; a probe on its queue sees it. So does a peer whose
 * connection comes up. Either wakes the stream's keyframe thread, which
 * asks every encoder for a keyframe and pushes the newest frame again
 * (nothing else would come while the screen is still). The thread does
 * that so the probes, which run on webrtcbin's threads, take no lock that
 * is held while calling into GStreamer.
 *
  * Nobody reads the pipeline's bus, so a handler drops every message (a
 * bus nobody drains is a queue without bound), noting the first error;
 * a latency message (a peer joined) has the same thread recalculate the
 * pipeline's latency, without which a new webrtcbin sends nothing. */
#include "webrtc/stream.h"

#include "util/clock.h"
#include "webrtc/bitrate.h"

#define GST_USE_UNSTABLE_API /* webrtcbin's library says so of itself */
#include <gst/app/gstappsrc.h>
#include <gst/gst.h>
#include <gst/sdp/sdp.h>
#include <gst/video/video.h>
#include <gst/webrtc/webrtc.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* RTP packets a peer's queue holds (a few frames' worth): past that the
 * oldest go, and the peer recovers by NACK or a keyframe. */
#define PEER_QUEUE_PACKETS 400
/* Repeats of a still picture on PLI: first after this, doubling to the
 * most (make_keyframe_if_due). */
#define STILL_BACKOFF_MIN_MS 1000
#define STILL_BACKOFF_MAX_MS 60000
/* How often the peers' statistics are read to steer the bitrate. */
#define STATS_INTERVAL_MS 1000
/* A keyframe at least this often (frames) in any case. */
#define KEYFRAME_MAX_DISTANCE 3000
#define RTP_MTU 1200


struct branch {
	bool made;
	GstElement *encoder, *tee;
	int bitrate; /* bits a second, as last set */
};

/* What a statistics reply is about: the stream and the peer's codec. */
struct stats_context {
	struct webrtc_stream *stream;
	enum webrtc_codec codec;
};

struct webrtc_stream {
	GstElement *pipeline, *source, *raw_tee;
	pthread_mutex_t lock; /* peers, branches, the newest frame */
	struct branch branches[WEBRTC_CODECS];
	struct webrtc_peer *peers;
	int peer_count;
	GstBuffer *newest;
	uint64_t frames_pushed;
	int width, height;
	char error[256]; /* the pipeline's first error, from its bus */
	/* The keyframe thread's: never held while calling into GStreamer. */
	pthread_mutex_t keyframe_lock;
	pthread_cond_t keyframe_wanted_cond;
	bool keyframe_wanted, keyframe_forced, stopping;
	bool latency_changed; /* a peer joined: the pipeline's latency is due again */
	/* The worst loss a codec's receivers reported since the last step
	 * (-1: none), and what the replies need to say so. */
	double worst_loss[WEBRTC_CODECS];
	struct stats_context stats_context[WEBRTC_CODECS];
	pthread_t keyframe_thread;
};

/* What a peer's callbacks (on GStreamer's threads) share with its owner;
 * counted, since a callback may still hold it after the peer is gone. */
struct mailbox {
	atomic_int refs;
	pthread_mutex_t lock;
	bool closed; /* the peer is gone: nothing more is queued or woken */
	struct webrtc_signal *head, *tail;
	int count;
	/* Text from the input channel, oldest first. */
	struct input {
		char *text;
		size_t len;
		struct input *next;
	} * inputs, *inputs_tail;
	int input_count;
	bool failed;
	atomic_bool connected;
	void (*wake)(void *context);
	void *context;
	GstElement *webrtc;           /* a reference */
	struct webrtc_stream *stream; /* valid while not closed */
};

struct webrtc_peer {
	struct webrtc_stream *stream;
	enum webrtc_codec codec;
	GstElement *queue, *webrtc;
	GstWebRTCDataChannel *input; /* NULL for a view-only peer */
	struct mailbox *box;
	struct webrtc_peer *next;
};

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

bool webrtc_init(struct error *err)
{
	GError *gerror = NULL;
	if (!gst_init_check(NULL, NULL, &gerror)) {
		error_set(err, 0, "GStreamer did not start: %s",
			  gerror ? gerror->message : "no reason given");
		g_clear_error(&gerror);
		return false;
	}
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

void webrtc_finish(void)
{
	gst_deinit();
}

bool webrtc_codec_available(enum webrtc_codec codec)
{
	return codec >= 0 && codec < WEBRTC_CODECS && codec_ok[codec];
}

const char *webrtc_codec_name(enum webrtc_codec codec)
{
	return codec >= 0 && codec < WEBRTC_CODECS ? codec_names[codec] : "?";
}

void webrtc_signal_free(struct webrtc_signal *signal)
{
	if (!signal)
		return;
	free(signal->text);
	free(signal);
}

/* ---- keyframes ---- */


/* forced: a peer connected or its page asked; otherwise a PLI, which on a
 * still screen is answered with backoff (see make_keyframe_if_due). */
static void want_keyframe(struct webrtc_stream *s, bool forced)
{
	pthread_mutex_lock(&s->keyframe_lock);
	s->keyframe_wanted = true;
	s->keyframe_forced |= forced;
	pthread_cond_signal(&s->keyframe_wanted_cond);
	pthread_mutex_unlock(&s->keyframe_lock);
}

void webrtc_stream_keyframe(struct webrtc_stream *s)
{
	want_keyframe(s, true);
}

static void make_keyframe(struct webrtc_stream *s)
{
	GstElement *encoders[WEBRTC_CODECS];
	int count = 0;
	pthread_mutex_lock(&s->lock);
	for (int i = 0; i < WEBRTC_CODECS; i++)
		if (s->branches[i].made)
			encoders[count++] = gst_object_ref(s->branches[i].encoder);
	GstBuffer *again = s->newest ? gst_buffer_copy(s->newest) : NULL;
	pthread_mutex_unlock(&s->lock);
	for (int i = 0; i < count; i++) {
		gst_element_send_event(encoders[i], gst_video_event_new_upstream_force_key_unit(
							    GST_CLOCK_TIME_NONE, TRUE, 0));
		gst_object_unref(encoders[i]);
	}
	if (again) {
		GST_BUFFER_PTS(again) = GST_CLOCK_TIME_NONE; /* the appsrc stamps it now */
		GST_BUFFER_DTS(again) = GST_CLOCK_TIME_NONE;
		gst_app_src_push_buffer(GST_APP_SRC(s->source), again);
	}
}

/* On webrtcbin's thread: a peer's statistics. */
static void on_stats(GstPromise *promise, gpointer data)
{
	struct stats_context *context = data;
	struct webrtc_stream *s = context->stream;
	if (gst_promise_wait(promise) == GST_PROMISE_RESULT_REPLIED) {
		double loss = webrtc_bitrate_worst_loss(gst_promise_get_reply(promise));
		pthread_mutex_lock(&s->keyframe_lock);
		if (loss > s->worst_loss[context->codec])
			s->worst_loss[context->codec] = loss;
		pthread_mutex_unlock(&s->keyframe_lock);
	}
	gst_promise_unref(promise);
}

/* Each encoder's bitrate from what its receivers reported since the last
 * step, then asks every peer for its statistics again. */
static void steer_bitrate(struct webrtc_stream *s)
{
	GstElement *peers[WEBRTC_MAX_PEERS];
	enum webrtc_codec codecs[WEBRTC_MAX_PEERS];
	int count = 0;
	pthread_mutex_lock(&s->lock);
	for (int c = 0; c < WEBRTC_CODECS; c++) {
		struct branch *b = &s->branches[c];
		pthread_mutex_lock(&s->keyframe_lock);
		double loss = s->worst_loss[c];
		s->worst_loss[c] = -1;
		pthread_mutex_unlock(&s->keyframe_lock);
		int next = b->made ? webrtc_bitrate_next(b->bitrate, loss) : 0;
		if (!b->made || next == b->bitrate)
			continue;
		b->bitrate = next;
		if (c == WEBRTC_VP8)
			g_object_set(b->encoder, "target-bitrate", next, NULL);
		else /* x264enc counts kbit/s, openh264enc bit/s */
			g_object_set(b->encoder, "bitrate",
				     strcmp(h264_encoder, "x264enc") == 0 ? (guint)next / 1000
									  : (guint)next,
				     NULL);
	}
	for (struct webrtc_peer *p = s->peers; p && count < WEBRTC_MAX_PEERS; p = p->next) {
		peers[count] = gst_object_ref(p->webrtc);
		codecs[count++] = p->codec;
	}
	pthread_mutex_unlock(&s->lock);
	for (int i = 0; i < count; i++) {
		GstPromise *promise = gst_promise_new_with_change_func(
			on_stats, &s->stats_context[codecs[i]], NULL);
		g_signal_emit_by_name(peers[i], "get-stats", NULL, promise);
		gst_object_unref(peers[i]);
	}
}

int webrtc_stream_bitrate(struct webrtc_stream *s, enum webrtc_codec codec)
{
	pthread_mutex_lock(&s->lock);
	int bitrate = codec >= 0 && codec < WEBRTC_CODECS && s->branches[codec].made
			      ? s->branches[codec].bitrate
			      : 0;
	pthread_mutex_unlock(&s->lock);
	return bitrate;
}

/* Browsers ask for a keyframe every few seconds while no frame comes
 * (Chromium: 3 s), which on a still screen would cost a whole picture
 * each time. So a PLI while nothing new was pushed since the last repeat
 * is answered after a backoff, doubling from STILL_BACKOFF_MIN_MS to
 * STILL_BACKOFF_MAX_MS; a new frame starts over. The PLI's own request
 * still reaches the encoders, so the next frame is a keyframe anyway;
 * with NACK a repeated keyframe that was lost is resent. */
struct still_screen {
	uint64_t frames; /* frames pushed at the last repeat */
	int64_t next_ms; /* when a PLI may repeat the same frame again */
	int backoff_ms;
};

static void make_keyframe_if_due(struct webrtc_stream *s, bool forced, struct still_screen *still)
{
	pthread_mutex_lock(&s->lock);
	uint64_t frames = s->frames_pushed;
	pthread_mutex_unlock(&s->lock);
	int64_t now = clock_monotonic_ms();
	if (frames != still->frames)
		still->backoff_ms = STILL_BACKOFF_MIN_MS;
	else if (!forced && now < still->next_ms)
		return; /* the same still picture again, too soon */
	else if (!forced)
		still->backoff_ms = still->backoff_ms * 2 > STILL_BACKOFF_MAX_MS
					    ? STILL_BACKOFF_MAX_MS
					    : still->backoff_ms * 2;
	still->frames = frames;
	still->next_ms = now + still->backoff_ms;
	make_keyframe(s);
}

static void *keyframe_main(void *arg)
{
	struct webrtc_stream *s = arg;
	struct still_screen still = { .frames = UINT64_MAX, .backoff_ms = STILL_BACKOFF_MIN_MS };
	int64_t next_stats = clock_monotonic_ms() + STATS_INTERVAL_MS;
	pthread_mutex_lock(&s->keyframe_lock);
	while (!s->stopping) {
		if (clock_monotonic_ms() >= next_stats) {
			next_stats = clock_monotonic_ms() + STATS_INTERVAL_MS;
			pthread_mutex_unlock(&s->keyframe_lock);
			steer_bitrate(s);
			pthread_mutex_lock(&s->keyframe_lock);
			continue;
		}
		if (s->latency_changed) {
			/* Asked for on the bus, done here: a peer's webrtcbin sends
			 * nothing until the pipeline has told it its latency. */
			s->latency_changed = false;
			pthread_mutex_unlock(&s->keyframe_lock);
			gst_bin_recalculate_latency(GST_BIN(s->pipeline));
			pthread_mutex_lock(&s->keyframe_lock);
			continue;
		}
		if (!s->keyframe_wanted) {
			int64_t wait = next_stats - clock_monotonic_ms();
			struct timespec deadline = clock_deadline_ms(wait > 0 ? wait : 0);
			pthread_cond_timedwait(&s->keyframe_wanted_cond, &s->keyframe_lock,
					       &deadline);
			continue;
		}
		bool forced = s->keyframe_forced;
		s->keyframe_wanted = s->keyframe_forced = false;
		pthread_mutex_unlock(&s->keyframe_lock);
		make_keyframe_if_due(s, forced, &still);
		pthread_mutex_lock(&s->keyframe_lock);
	}
	pthread_mutex_unlock(&s->keyframe_lock);
	return NULL;
}

/* ---- the stream ---- */

static GstBusSyncReply on_bus_message(GstBus *bus, GstMessage *message, gpointer data)
{
	(void)bus;
	struct webrtc_stream *s = data;
	if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_LATENCY) {
		pthread_mutex_lock(&s->keyframe_lock);
		s->latency_changed = true;
		pthread_cond_signal(&s->keyframe_wanted_cond);
		pthread_mutex_unlock(&s->keyframe_lock);
	}
	if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_ERROR) {
		GError *gerror = NULL;
		gst_message_parse_error(message, &gerror, NULL);
		pthread_mutex_lock(&s->lock);
		if (!s->error[0])
			snprintf(s->error, sizeof(s->error), "%s: %s",
				 GST_OBJECT_NAME(GST_MESSAGE_SRC(message)),
				 gerror ? gerror->message : "an error");
		pthread_mutex_unlock(&s->lock);
		g_clear_error(&gerror);
	}
	return GST_BUS_DROP;
}

static GstElement *element(const char *factory, struct error *err)
{
	GstElement *e = gst_element_factory_make(factory, NULL);
	if (!e)
		error_set(err, 0, "GStreamer could not make a %s element", factory);
	return e;
}

struct webrtc_stream *webrtc_stream_create(struct error *err)
{
	struct webrtc_stream *s = calloc(1, sizeof(*s));
	if (!s)
		return error_null(err, ENOMEM, "out of memory for a video stream");
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->keyframe_lock, NULL);
	clock_cond_init(&s->keyframe_wanted_cond);
	for (int c = 0; c < WEBRTC_CODECS; c++) {
		s->worst_loss[c] = -1;
		s->stats_context[c] = (struct stats_context){ s, (enum webrtc_codec)c };
	}
	s->pipeline = gst_pipeline_new(NULL);
	s->source = element("appsrc", err);
	s->raw_tee = element("tee", err);
	if (!s->pipeline || !s->source || !s->raw_tee)
		goto elements_failed;
	GstBus *bus = gst_pipeline_get_bus(GST_PIPELINE(s->pipeline));
	gst_bus_set_sync_handler(bus, on_bus_message, s, NULL);
	gst_object_unref(bus);
	/* Live, stamped as frames come, at most two waiting (the older goes). */
	g_object_set(s->source, "is-live", TRUE, "do-timestamp", TRUE, "format", GST_FORMAT_TIME,
		     "max-buffers", (guint64)2, "leaky-type", 2 /* downstream: drop old */, "block",
		     FALSE, NULL);
	g_object_set(s->raw_tee, "allow-not-linked", TRUE, NULL);
	gst_bin_add_many(GST_BIN(s->pipeline), s->source, s->raw_tee, NULL);
	if (!gst_element_link(s->source, s->raw_tee)) {
		error_set(err, 0, "GStreamer could not link the frame source");
		goto linked_failed;
	}
	if (gst_element_set_state(s->pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
		error_set(err, 0, "the video pipeline did not start");
		goto linked_failed;
	}
	if (pthread_create(&s->keyframe_thread, NULL, keyframe_main, s) != 0) {
		error_set(err, errno, "no thread for the video stream's keyframes");
		gst_element_set_state(s->pipeline, GST_STATE_NULL);
		goto linked_failed;
	}
	return s;

elements_failed:
	if (s->source)
		gst_object_unref(s->source);
	if (s->raw_tee)
		gst_object_unref(s->raw_tee);
linked_failed:
	if (s->pipeline)
		gst_object_unref(s->pipeline);
	pthread_cond_destroy(&s->keyframe_wanted_cond);
	pthread_mutex_destroy(&s->keyframe_lock);
	pthread_mutex_destroy(&s->lock);
	free(s);
	return NULL;
}

void webrtc_stream_destroy(struct webrtc_stream *s)
{
	if (!s)
		return;
	while (s->peers)
		webrtc_peer_destroy(s->peers);
	pthread_mutex_lock(&s->keyframe_lock);
	s->stopping = true;
	pthread_cond_signal(&s->keyframe_wanted_cond);
	pthread_mutex_unlock(&s->keyframe_lock);
	pthread_join(s->keyframe_thread, NULL);
	gst_element_set_state(s->pipeline, GST_STATE_NULL);
	gst_object_unref(s->pipeline);
	if (s->newest)
		gst_buffer_unref(s->newest);
	pthread_cond_destroy(&s->keyframe_wanted_cond);
	pthread_mutex_destroy(&s->keyframe_lock);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

bool webrtc_stream_push(struct webrtc_stream *s, uint8_t *pixels, int width, int height,
			struct error *err)
{
	size_t size = (size_t)width * (size_t)height * 4;
	GstBuffer *buffer = gst_buffer_new_wrapped_full(0, pixels, size, 0, size, pixels, free);
	pthread_mutex_lock(&s->lock);
	if (s->error[0]) {
		error_set(err, 0, "the video pipeline failed: %s", s->error);
		pthread_mutex_unlock(&s->lock);
		gst_buffer_unref(buffer);
		return false;
	}
	if (width != s->width || height != s->height) {
		GstCaps *caps = gst_caps_new_simple(
			"video/x-raw", "format", G_TYPE_STRING, "RGBx", "width", G_TYPE_INT, width,
			"height", G_TYPE_INT, height, "framerate", GST_TYPE_FRACTION, 0, 1, NULL);
		gst_app_src_set_caps(GST_APP_SRC(s->source), caps);
		gst_caps_unref(caps);
		s->width = width;
		s->height = height;
	}
	if (s->newest)
		gst_buffer_unref(s->newest);
	s->newest = gst_buffer_ref(buffer);
	s->frames_pushed++;
	pthread_mutex_unlock(&s->lock);
	/* A copy (sharing the pixels): the appsrc stamps what it is given. */
	GstBuffer *sent = gst_buffer_copy(buffer);
	gst_buffer_unref(buffer);
	if (gst_app_src_push_buffer(GST_APP_SRC(s->source), sent) != GST_FLOW_OK)
		return error_set(err, 0, "the video pipeline took no frame");
	return true;
}

int webrtc_stream_peer_count(struct webrtc_stream *s)
{
	pthread_mutex_lock(&s->lock);
	int count = s->peer_count;
	pthread_mutex_unlock(&s->lock);
	return count;
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

/* The RTP caps of codec's packets; for_offer adds what the offer must say
 * but the payloader works out itself from the stream. H.264's
 * profile-level-id must be what the encoder makes, or webrtcbin refuses
 * the payloader's caps: constrained baseline (42c0) at level 5.1 (33),
 * fixed, so that no screen size changes it. */
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
static bool make_branch(struct webrtc_stream *s, enum webrtc_codec codec, struct error *err)
{
	struct branch *b = &s->branches[codec];
	if (b->made)
		return true;
	GstElement *queue = element("queue", err), *convert = element("videoconvert", err);
	GstElement *encoder, *payloader, *rtp_filter = element("capsfilter", err);
	GstElement *tee = element("tee", err);
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
		encoder = element("vp8enc", err);
		/* deadline 1: realtime (the default is for files, far too slow). */
		if (encoder)
			g_object_set(encoder, "deadline", (gint64)1, "cpu-used", 8, "end-usage",
				     1 /* cbr */, "target-bitrate", WEBRTC_BITRATE_START,
				     "lag-in-frames", 0, "keyframe-max-dist", KEYFRAME_MAX_DISTANCE,
				     "threads", 2, NULL);
		payloader = element("rtpvp8pay", err);
		if (payloader)
			g_object_set(payloader, "picture-id-mode", 2 /* 15 bits */, "mtu", RTP_MTU,
				     NULL);
		chain[count++] = encoder;
	} else {
		encoder = element(h264_encoder, err);
		if (encoder && strcmp(h264_encoder, "x264enc") == 0) {
			gst_util_set_object_arg(G_OBJECT(encoder), "tune", "zerolatency");
			gst_util_set_object_arg(G_OBJECT(encoder), "speed-preset", "ultrafast");
			g_object_set(encoder, "bitrate", WEBRTC_BITRATE_START / 1000, "key-int-max",
				     KEYFRAME_MAX_DISTANCE, NULL);
		}
		GstElement *profile = element("capsfilter", err);
		if (profile) {
			GstCaps *caps = gst_caps_from_string(
				"video/x-h264,profile=constrained-baseline,level=(string)5.1");
			g_object_set(profile, "caps", caps, NULL);
			gst_caps_unref(caps);
		}
		GstElement *parse = element("h264parse", err);
		payloader = element("rtph264pay", err);
		if (payloader) {
			g_object_set(payloader, "config-interval", -1, "mtu", RTP_MTU, NULL);
			gst_util_set_object_arg(G_OBJECT(payloader), "aggregate-mode",
						"zero-latency");
		}
		chain[count++] = encoder;
		chain[count++] = profile;
		chain[count++] = parse;
	}
	chain[count++] = payloader;
	if (rtp_filter) {
		GstCaps *caps = rtp_caps(codec, false);
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

/* ---- peers ---- */

static struct mailbox *mailbox_ref(struct mailbox *box)
{
	atomic_fetch_add(&box->refs, 1);
	return box;
}

static void mailbox_unref(gpointer data)
{
	struct mailbox *box = data;
	if (atomic_fetch_sub(&box->refs, 1) != 1)
		return;
	while (box->head) {
		struct webrtc_signal *next = box->head->next;
		webrtc_signal_free(box->head);
		box->head = next;
	}
	while (box->inputs) {
		struct input *next = box->inputs->next;
		free(box->inputs->text);
		free(box->inputs);
		box->inputs = next;
	}
	if (box->webrtc)
		gst_object_unref(box->webrtc);
	pthread_mutex_destroy(&box->lock);
	free(box);
}

static void mailbox_closure_unref(gpointer data, GClosure *closure)
{
	(void)closure;
	mailbox_unref(data);
}

/* Queues a signal for the page (text is copied) and wakes the owner. A
 * full box fails the peer instead of growing. */
static void post(struct mailbox *box, enum webrtc_signal_kind kind, unsigned mline,
		 const char *text)
{
	pthread_mutex_lock(&box->lock);
	if (box->closed || box->failed) {
		pthread_mutex_unlock(&box->lock);
		return;
	}
	struct webrtc_signal *signal = calloc(1, sizeof(*signal));
	if (signal && box->count >= WEBRTC_MAX_SIGNALS - 1 && kind != WEBRTC_SIGNAL_FAILED) {
		kind = WEBRTC_SIGNAL_FAILED;
		text = "the page did not take its signalling messages";
	}
	if (signal && (signal->text = strdup(text))) {
		signal->kind = kind;
		signal->mline = mline;
		if (box->tail)
			box->tail->next = signal;
		else
			box->head = signal;
		box->tail = signal;
		box->count++;
		box->failed = kind == WEBRTC_SIGNAL_FAILED;
	} else {
		free(signal);
		box->failed = true; /* out of memory: the next_signal says so */
	}
	box->wake(box->context);
	pthread_mutex_unlock(&box->lock);
}

static void on_offer_created(GstPromise *promise, gpointer data)
{
	struct mailbox *box = data;
	GstWebRTCSessionDescription *offer = NULL;
	if (gst_promise_wait(promise) == GST_PROMISE_RESULT_REPLIED) {
		const GstStructure *reply = gst_promise_get_reply(promise);
		if (reply)
			gst_structure_get(reply, "offer", GST_TYPE_WEBRTC_SESSION_DESCRIPTION,
					  &offer, NULL);
	}
	gst_promise_unref(promise);
	if (!offer) {
		post(box, WEBRTC_SIGNAL_FAILED, 0, "webrtcbin made no offer");
		return;
	}
	g_signal_emit_by_name(box->webrtc, "set-local-description", offer, NULL);
	gchar *text = gst_sdp_message_as_text(offer->sdp);
	post(box, WEBRTC_SIGNAL_OFFER, 0, text ? text : "");
	g_free(text);
	gst_webrtc_session_description_free(offer);
}

static void on_negotiation_needed(GstElement *webrtc, gpointer data)
{
	struct mailbox *box = data;
	GstPromise *promise = gst_promise_new_with_change_func(on_offer_created, mailbox_ref(box),
							       mailbox_unref);
	g_signal_emit_by_name(webrtc, "create-offer", NULL, promise);
}

static void on_ice_candidate(GstElement *webrtc, guint mline, gchar *candidate, gpointer data)
{
	(void)webrtc;
	post(data, WEBRTC_SIGNAL_CANDIDATE, mline, candidate);
}

static void on_connection_state(GObject *webrtc, GParamSpec *spec, gpointer data)
{
	(void)spec;
	struct mailbox *box = data;
	GstWebRTCPeerConnectionState state;
	g_object_get(webrtc, "connection-state", &state, NULL);
	if (state == GST_WEBRTC_PEER_CONNECTION_STATE_CONNECTED) {
		atomic_store(&box->connected, true);
		pthread_mutex_lock(&box->lock);
		if (!box->closed)
			want_keyframe(box->stream, true); /* a picture at once, still or not */
		pthread_mutex_unlock(&box->lock);
	} else if (state == GST_WEBRTC_PEER_CONNECTION_STATE_FAILED) {
		atomic_store(&box->connected, false);
		post(box, WEBRTC_SIGNAL_FAILED, 0, "the connection failed (ICE or DTLS)");
	}
}

/* Upstream events from the peer's webrtcbin: a PLI arrives as a request
 * for a keyframe. */
static GstPadProbeReturn on_upstream_event(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
	(void)pad;
	struct mailbox *box = data;
	GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
	if (event && gst_video_event_is_force_key_unit(event)) {
		pthread_mutex_lock(&box->lock);
		if (!box->closed)
			want_keyframe(box->stream, false);
		pthread_mutex_unlock(&box->lock);
	}
	return GST_PAD_PROBE_OK;
}

static void connect_signal(gpointer object, const char *name, GCallback callback,
			   struct mailbox *box)
{
	g_signal_connect_data(object, name, callback, mailbox_ref(box), mailbox_closure_unref, 0);
}

/* A text message on the input channel: kept for the owner, who reads it
 * on its own thread. Past the bounds it is dropped: input is not queued
 * without end for a desktop that does not keep up. */
static void on_input_message(GstWebRTCDataChannel *channel, gchar *text, gpointer data)
{
	(void)channel;
	struct mailbox *box = data;
	size_t len = text ? strlen(text) : 0;
	if (!text || len > WEBRTC_MAX_INPUT_MESSAGE)
		return;
	struct input *in = malloc(sizeof(*in));
	if (in && !(in->text = strndup(text, len))) {
		free(in);
		in = NULL;
	}
	if (!in)
		return;
	in->len = len;
	in->next = NULL;
	pthread_mutex_lock(&box->lock);
	if (box->closed || box->input_count >= WEBRTC_MAX_INPUTS) {
		pthread_mutex_unlock(&box->lock);
		free(in->text);
		free(in);
		return;
	}
	if (box->inputs_tail)
		box->inputs_tail->next = in;
	else
		box->inputs = in;
	box->inputs_tail = in;
	box->input_count++;
	box->wake(box->context);
	pthread_mutex_unlock(&box->lock);
}

char *webrtc_peer_next_input(struct webrtc_peer *p, size_t *len)
{
	struct mailbox *box = p->box;
	pthread_mutex_lock(&box->lock);
	struct input *in = box->inputs;
	if (in) {
		box->inputs = in->next;
		if (!box->inputs)
			box->inputs_tail = NULL;
		box->input_count--;
	}
	pthread_mutex_unlock(&box->lock);
	if (!in)
		return NULL;
	char *text = in->text;
	*len = in->len;
	free(in);
	return text;
}

/* The transceiver webrtcbin made for the peer's one sink pad: send only,
 * with retransmissions, in the codec of the pad's caps. */
static bool set_up_transceiver(GstElement *webrtc, enum webrtc_codec codec, struct error *err)
{
	GstWebRTCRTPTransceiver *transceiver = NULL;
	g_signal_emit_by_name(webrtc, "get-transceiver", 0, &transceiver);
	if (!transceiver)
		return error_set(err, 0, "webrtcbin made no transceiver");
	GstCaps *caps = rtp_caps(codec, true);
	g_object_set(transceiver, "direction", GST_WEBRTC_RTP_TRANSCEIVER_DIRECTION_SENDONLY,
		     "do-nack", TRUE, "codec-preferences", caps, NULL);
	gst_caps_unref(caps);
	gst_object_unref(transceiver);
	return true;
}

/* Under s->lock: the peer's queue no longer takes the encode's packets. */
static void unlink_from_tee(struct webrtc_stream *s, struct webrtc_peer *p)
{
	GstPad *queue_sink = gst_element_get_static_pad(p->queue, "sink");
	GstPad *tee_pad = gst_pad_get_peer(queue_sink);
	if (tee_pad) {
		gst_pad_unlink(tee_pad, queue_sink);
		gst_element_release_request_pad(s->branches[p->codec].tee, tee_pad);
		gst_object_unref(tee_pad);
	}
	gst_object_unref(queue_sink);
}

struct webrtc_peer *webrtc_peer_create(struct webrtc_stream *s, enum webrtc_codec codec,
				       bool input_channel, const char *stun_server,
				       void (*wake)(void *context), void *context,
				       struct error *err)
{
	if (!webrtc_codec_available(codec))
		return error_null(err, 0, "this machine's GStreamer cannot encode %s",
				  webrtc_codec_name(codec));
	struct webrtc_peer *p = calloc(1, sizeof(*p));
	struct mailbox *box = calloc(1, sizeof(*box));
	if (!p || !box) {
		free(p);
		free(box);
		return error_null(err, ENOMEM, "out of memory for a video peer");
	}
	atomic_init(&box->refs, 1);
	pthread_mutex_init(&box->lock, NULL);
	box->wake = wake;
	box->context = context;
	box->stream = s;
	p->stream = s;
	p->codec = codec;
	p->box = box;

	pthread_mutex_lock(&s->lock);
	if (s->peer_count >= WEBRTC_MAX_PEERS) {
		error_set(err, 0, "this desktop already has %d video viewers, the most it takes",
			  WEBRTC_MAX_PEERS);
		goto refused;
	}
	if (!make_branch(s, codec, err))
		goto refused;
	p->queue = element("queue", err);
	p->webrtc = element("webrtcbin", err);
	if (!p->queue || !p->webrtc) {
		if (p->queue)
			gst_object_unref(p->queue);
		if (p->webrtc)
			gst_object_unref(p->webrtc);
		goto refused;
	}
	g_object_set(p->queue, "leaky", 2, "max-size-buffers", PEER_QUEUE_PACKETS, "max-size-bytes",
		     0, "max-size-time", (guint64)0, NULL);
	gst_util_set_object_arg(G_OBJECT(p->webrtc), "bundle-policy", "max-bundle");
	if (stun_server)
		g_object_set(p->webrtc, "stun-server", stun_server, NULL);
	box->webrtc = gst_object_ref(p->webrtc);
	connect_signal(p->webrtc, "on-negotiation-needed", G_CALLBACK(on_negotiation_needed), box);
	connect_signal(p->webrtc, "on-ice-candidate", G_CALLBACK(on_ice_candidate), box);
	connect_signal(p->webrtc, "notify::connection-state", G_CALLBACK(on_connection_state), box);
	gst_bin_add_many(GST_BIN(s->pipeline), p->queue, p->webrtc, NULL);
	GstPad *queue_src = gst_element_get_static_pad(p->queue, "src");
	gst_pad_add_probe(queue_src, GST_PAD_PROBE_TYPE_EVENT_UPSTREAM, on_upstream_event,
			  mailbox_ref(box), mailbox_unref);
	GstPad *sink = gst_element_request_pad_simple(p->webrtc, "sink_%u");
	bool linked = sink && gst_pad_link(queue_src, sink) == GST_PAD_LINK_OK;
	gst_object_unref(queue_src);
	if (sink)
		gst_object_unref(sink);
	if (!linked || !set_up_transceiver(p->webrtc, codec, err) ||
	    !gst_element_link(s->branches[codec].tee, p->queue)) {
		if (linked)
			error_set(err, 0, "GStreamer could not link a video peer");
		gst_element_set_state(p->webrtc, GST_STATE_NULL);
		gst_element_set_state(p->queue, GST_STATE_NULL);
		gst_bin_remove_many(GST_BIN(s->pipeline), p->queue, p->webrtc, NULL);
		goto refused;
	}
	gst_element_sync_state_with_parent(p->webrtc);
	gst_element_sync_state_with_parent(p->queue);
	/* Only now: a data channel made before webrtcbin plays fails. It is
	 * in the offer, which webrtcbin makes later, on its own thread. */
	if (input_channel) {
		g_signal_emit_by_name(p->webrtc, "create-data-channel", WEBRTC_INPUT_CHANNEL, NULL,
				      &p->input);
		if (!p->input) {
			error_set(err, 0, "webrtcbin made no data channel for input");
			unlink_from_tee(s, p);
			gst_element_set_state(p->webrtc, GST_STATE_NULL);
			gst_element_set_state(p->queue, GST_STATE_NULL);
			gst_bin_remove_many(GST_BIN(s->pipeline), p->queue, p->webrtc, NULL);
			goto refused;
		}
		connect_signal(p->input, "on-message-string", G_CALLBACK(on_input_message), box);
	}

	p->next = s->peers;
	s->peers = p;
	s->peer_count++;
	pthread_mutex_unlock(&s->lock);
	return p;

refused:
	pthread_mutex_unlock(&s->lock);
	box->closed = true;
	mailbox_unref(box);
	free(p);
	return NULL;
}

void webrtc_peer_destroy(struct webrtc_peer *p)
{
	if (!p)
		return;
	struct webrtc_stream *s = p->stream;
	pthread_mutex_lock(&p->box->lock);
	p->box->closed = true;
	pthread_mutex_unlock(&p->box->lock);
	pthread_mutex_lock(&s->lock);
	for (struct webrtc_peer **at = &s->peers; *at; at = &(*at)->next) {
		if (*at == p) {
			*at = p->next;
			s->peer_count--;
			break;
		}
	}
	unlink_from_tee(s, p);
	pthread_mutex_unlock(&s->lock);
	/* Stopped outside the stream's lock: its threads may be in a probe. */
	g_signal_handlers_disconnect_by_data(p->webrtc, p->box);
	if (p->input) {
		g_signal_handlers_disconnect_by_data(p->input, p->box);
		g_object_unref(p->input);
	}
	gst_element_set_state(p->webrtc, GST_STATE_NULL);
	gst_element_set_state(p->queue, GST_STATE_NULL);
	gst_bin_remove_many(GST_BIN(s->pipeline), p->queue, p->webrtc, NULL);
	mailbox_unref(p->box);
	free(p);
}

struct webrtc_signal *webrtc_peer_next_signal(struct webrtc_peer *p)
{
	struct mailbox *box = p->box;
	pthread_mutex_lock(&box->lock);
	struct webrtc_signal *signal = box->head;
	if (signal) {
		box->head = signal->next;
		if (!box->head)
			box->tail = NULL;
		box->count--;
		signal->next = NULL;
	} else if (box->failed) {
		/* Failed without a message to say so (out of memory): say it once. */
		signal = calloc(1, sizeof(*signal));
		if (signal && !(signal->text = strdup("out of memory"))) {
			free(signal);
			signal = NULL;
		}
		if (signal)
			signal->kind = WEBRTC_SIGNAL_FAILED;
		box->closed = true;
	}
	pthread_mutex_unlock(&box->lock);
	return signal;
}

bool webrtc_peer_answer(struct webrtc_peer *p, const char *sdp, size_t len, struct error *err)
{
	if (len > WEBRTC_MAX_SDP)
		return error_set(err, 0,
				 "the answer is %zu bytes, over the %d a description may have", len,
				 WEBRTC_MAX_SDP);
	char *text = strndup(sdp, len);
	GstSDPMessage *message = NULL;
	if (!text)
		return error_set(err, ENOMEM, "out of memory for an answer");
	if (gst_sdp_message_new_from_text(text, &message) != GST_SDP_OK || !message ||
	    gst_sdp_message_medias_len(message) == 0) {
		free(text);
		if (message)
			gst_sdp_message_free(message);
		return error_set(err, 0, "the answer is not a session description with media");
	}
	free(text);
	GstWebRTCSessionDescription *answer = gst_webrtc_session_description_new(
		GST_WEBRTC_SDP_TYPE_ANSWER, message);
	/* Applied on webrtcbin's thread; a bad one fails the connection. */
	g_signal_emit_by_name(p->webrtc, "set-remote-description", answer, NULL);
	gst_webrtc_session_description_free(answer);
	return true;
}

bool webrtc_peer_candidate(struct webrtc_peer *p, unsigned mline, const char *candidate,
			   struct error *err)
{
	size_t len = strlen(candidate);
	if (len > WEBRTC_MAX_CANDIDATE)
		return error_set(err, 0, "a candidate of %zu bytes is over the %d allowed", len,
				 WEBRTC_MAX_CANDIDATE);
	if (mline > 0)
		return error_set(err, 0, "candidate for media line %u: the offer has one", mline);
	if (len == 0)
		return true; /* the end of the page's candidates */
	if (strncmp(candidate, "candidate:", 10) != 0)
		return error_set(err, 0, "a candidate must start \"candidate:\"");
	g_signal_emit_by_name(p->webrtc, "add-ice-candidate", mline, candidate);
	return true;
}

bool webrtc_peer_connected(struct webrtc_peer *p)
{
	return atomic_load(&p->box->connected);
}
