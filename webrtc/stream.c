/* SPDX-License-Identifier: MIT */
/* The pipeline, as it grows:
 *
 *   appsrc -> tee -+-> queue -> videoconvert -> vp8enc -> rtpvp8pay -> caps -> tee -+-> peer
 *                  |                                                                  +-> peer
 *                  +-> queue -> videoconvert -> caps -> openh264enc -> caps -> h264parse
 *                                -> rtph264pay -> caps -> tee -> ...
 *
 * where each peer is a leaky queue in front of its own webrtcbin. An
 * encode is made when the first peer asks for its codec. The appsrc and
 * every queue before an encoder hold at most a frame or two and drop the
 * oldest, so a slow encoder skips frames instead of falling behind.
 *
 * Keyframes: a peer whose connection comes up, or whose page has no
 * picture yet, wakes the stream's keyframe thread, which asks every
 * encoder for a keyframe and pushes the newest frame again (nothing else
 * would come while the screen is still). The thread does that so the
 * callbacks, on webrtcbin's threads, take no lock that is held while
 * calling into GStreamer. A PLI is not answered that way: webrtcbin
 * turns it into a force-key-unit event that travels up to the encoder
 * by itself, so the next frame of a moving screen is a keyframe; and a
 * still screen needs none, since the viewer shows it from its exact
 * updates (bridge/viewer/video.h). Repeating the picture on every PLI
 * would cost a keyframe every few seconds on a still screen: browsers
 * send one whenever no frame came for a while (Chromium: after 3 s, for
 * as long as packets came in the last 5 s), and each answer restarts
 * that clock.
 *
  * Nobody reads the pipeline's bus, so a handler drops every message (a
 * bus nobody drains is a queue without bound), noting the first error;
 * a latency message (a peer joined) has the same thread recalculate the
 * pipeline's latency, without which a new webrtcbin sends nothing. */
#include "webrtc/stream.h"

#include "webrtc/encode.h"
#include "webrtc/state.h"

#include "util/clock.h"
#include "webrtc/bitrate.h"

#include <gst/app/gstappsrc.h>
#include <gst/gst.h>
#include <gst/sdp/sdp.h>
#include <gst/video/video.h>
#include <gst/webrtc/webrtc.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How often the peers' statistics are read to steer the bitrate. */
#define STATS_INTERVAL_MS 1000

bool webrtc_init(struct error *err)
{
	GError *gerror = NULL;
	if (!gst_init_check(NULL, NULL, &gerror)) {
		error_set(err, 0, "GStreamer did not start: %s",
			  gerror ? gerror->message : "no reason given");
		g_clear_error(&gerror);
		return false;
	}
	return webrtc_encode_init(err);
}

void webrtc_finish(void)
{
	gst_deinit();
}

bool webrtc_codec_available(enum webrtc_codec codec)
{
	return webrtc_encode_available(codec);
}

const char *webrtc_codec_name(enum webrtc_codec codec)
{
	return webrtc_encode_name(codec);
}

void webrtc_signal_free(struct webrtc_signal *signal)
{
	if (!signal)
		return;
	free(signal->text);
	free(signal);
}

/* ---- keyframes ---- */

void webrtc_stream_keyframe(struct webrtc_stream *s)
{
	webrtc_want_keyframe(s);
}

/* Pushes the newest frame again, as a keyframe of every encoder. */
static void push_keyframe(struct webrtc_stream *s)
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

/* On webrtcbin's thread: a peer's statistics, while it holds the
 * promise. */
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
		webrtc_encode_set_bitrate(s, (enum webrtc_codec)c, next);
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
		/* Ours goes now: webrtcbin keeps its own until it replies, or
		 * drops it unreplied when the peer ends meanwhile (on_stats is
		 * then never called, and an unref there leaked it). */
		gst_promise_unref(promise);
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

static void *keyframe_main(void *arg)
{
	struct webrtc_stream *s = arg;
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
		s->keyframe_wanted = false;
		pthread_mutex_unlock(&s->keyframe_lock);
		push_keyframe(s);
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
	s->source = webrtc_element("appsrc", err);
	s->raw_tee = webrtc_element("tee", err);
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
