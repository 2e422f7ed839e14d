/* SPDX-License-Identifier: MIT */
/* The types stream.c (the pipeline), encode.c (its encodes) and peer.c
 * (each peer's webrtcbin and signalling) share; types only. Private to
 * webrtc/. */
#ifndef LIZARD_WEBRTC_STATE_H
#define LIZARD_WEBRTC_STATE_H

#include "webrtc/types.h"

#define GST_USE_UNSTABLE_API /* webrtcbin's library says so of itself */
#include <gst/gst.h>
#include <gst/webrtc/webrtc.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* RTP packets a peer's queue holds (a few frames' worth): past that the
 * oldest go, and the peer recovers by NACK or a keyframe. */
#define PEER_QUEUE_PACKETS 400

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
	int width, height;
	char error[256]; /* the pipeline's first error, from its bus */
	/* The keyframe thread's: never held while calling into GStreamer. */
	pthread_mutex_t keyframe_lock;
	pthread_cond_t keyframe_wanted_cond;
	bool keyframe_wanted, stopping;
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

#endif
