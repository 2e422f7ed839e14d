/* SPDX-License-Identifier: MIT */
/* A peer of a stream (stream.h): its leaky queue and webrtcbin, the
 * signalling its page and it exchange, and its input channel. */
#include "webrtc/stream.h"

#include "webrtc/encode.h"
#include "webrtc/ice.h"
#include "webrtc/state.h"

#include <gst/sdp/sdp.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Sets a description on webrtcbin. Once it is closing, webrtcbin answers
 * with an error structure it hands to the promise, and leaks it when there
 * is none: each call gets a promise of its own, let go at once. */
static void set_description(GstElement *webrtc, const char *which,
			    GstWebRTCSessionDescription *description)
{
	GstPromise *promise = gst_promise_new();
	g_signal_emit_by_name(webrtc, which, description, promise);
	gst_promise_unref(promise);
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
	set_description(box->webrtc, "set-local-description", offer);
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
			webrtc_want_keyframe(box->stream); /* a picture at once, still or not */
		pthread_mutex_unlock(&box->lock);
	} else if (state == GST_WEBRTC_PEER_CONNECTION_STATE_FAILED) {
		atomic_store(&box->connected, false);
		post(box, WEBRTC_SIGNAL_FAILED, 0, "the connection failed (ICE or DTLS)");
	}
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
	GstCaps *caps = webrtc_rtp_caps(codec, true);
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
				       bool input_channel, const struct webrtc_ice_server *ice,
				       int ice_count, void (*wake)(void *context), void *context,
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
	if (!webrtc_make_branch(s, codec, err))
		goto refused;
	p->queue = webrtc_element("queue", err);
	p->webrtc = webrtc_element("webrtcbin", err);
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
	if (!webrtc_ice_use(p->webrtc, ice, ice_count, err)) {
		gst_object_unref(p->queue);
		gst_object_unref(p->webrtc);
		goto refused;
	}
	box->webrtc = gst_object_ref(p->webrtc);
	connect_signal(p->webrtc, "on-negotiation-needed", G_CALLBACK(on_negotiation_needed), box);
	connect_signal(p->webrtc, "on-ice-candidate", G_CALLBACK(on_ice_candidate), box);
	connect_signal(p->webrtc, "notify::connection-state", G_CALLBACK(on_connection_state), box);
	gst_bin_add_many(GST_BIN(s->pipeline), p->queue, p->webrtc, NULL);
	GstPad *queue_src = gst_element_get_static_pad(p->queue, "src");
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
	set_description(p->webrtc, "set-remote-description", answer);
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
