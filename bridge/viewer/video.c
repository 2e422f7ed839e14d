/* SPDX-License-Identifier: MIT */
#include "bridge/viewer/video.h"

#include "bridge/viewer/encode.h"
#include "bridge/viewer/hub_state.h"
#include "bridge/viewer/wire.h"
#include "util/clock.h"
#include "util/log.h"
#include "vnc/framebuffer.h"
#include "webrtc/stream.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Frames a second at most: a screen that changes faster is sampled. */
#define VIDEO_MAX_FPS 30
/* The feeder looks again this often while nothing changes (and so sees
 * stopping in time). */
#define FEEDER_WAIT_MS 500

static atomic_bool available;

struct bridge_video {
	struct vnc_framebuffer *fb;
	pthread_mutex_t lock;
	pthread_cond_t peers_changed;
	struct webrtc_stream *stream; /* made with the first peer */
	int peers;
	bool stopping, thread_started;
	pthread_t feeder;
};

bool bridge_video_init(struct error *err)
{
	if (!webrtc_init(err))
		return false;
	atomic_store(&available, true);
	return true;
}

bool bridge_video_available(void)
{
	return atomic_load(&available);
}

void bridge_video_finish(void)
{
	if (atomic_exchange(&available, false))
		webrtc_finish();
}

/* Says when an encoder's bitrate changed (it follows the receivers'
 * reports; webrtc/bitrate.h). */
static void log_bitrate(struct webrtc_stream *stream, int bitrates[WEBRTC_CODECS])
{
	for (int c = 0; c < WEBRTC_CODECS; c++) {
		int now = webrtc_stream_bitrate(stream, (enum webrtc_codec)c);
		if (now != bitrates[c])
			log_debug("video: %s at %d kbit/s", webrtc_codec_name((enum webrtc_codec)c),
				  now / 1000);
		bitrates[c] = now;
	}
}

/* Pushes a frame whenever the picture (or the pointer) changed, while any
 * viewer receives video; sleeps on the peer count otherwise. */
static void *feeder_main(void *arg)
{
	struct bridge_video *v = arg;
	int bitrates[WEBRTC_CODECS] = { 0 };
	uint64_t seen = 0;
	int64_t last_push = 0;
	pthread_mutex_lock(&v->lock);
	while (!v->stopping) {
		if (v->peers == 0) {
			struct timespec deadline = clock_deadline_ms(FEEDER_WAIT_MS);
			pthread_cond_timedwait(&v->peers_changed, &v->lock, &deadline);
			seen = 0; /* a new peer starts from a frame */
			continue;
		}
		struct webrtc_stream *stream = v->stream;
		pthread_mutex_unlock(&v->lock);
		enum vnc_wait_result waited = seen ? vnc_framebuffer_wait_frame_after(
							     v->fb, seen, FEEDER_WAIT_MS)
						   : VNC_WAIT_OK;
		int64_t since = clock_monotonic_ms() - last_push;
		if (waited == VNC_WAIT_OK && since < 1000 / VIDEO_MAX_FPS) {
			struct timespec pause = { 0, (1000 / VIDEO_MAX_FPS - since) * 1000000L };
			nanosleep(&pause, NULL);
		}
		struct vnc_image image;
		uint64_t sequence = 0;
		if (waited == VNC_WAIT_OK &&
		    vnc_framebuffer_snapshot(v->fb, NULL, true, &image, &sequence)) {
			struct error err;
			last_push = clock_monotonic_ms();
			if (!webrtc_stream_push(stream, image.pixels, image.width, image.height,
						&err))
				log_warn("video: %s", err.message);
			seen = sequence ? sequence : 1;
			log_bitrate(stream, bitrates);
		} else if (waited == VNC_WAIT_CLOSED) {
			struct timespec pause = { 0, FEEDER_WAIT_MS * 1000000L };
			nanosleep(&pause, NULL); /* reconnecting: look again later */
		}
		pthread_mutex_lock(&v->lock);
	}
	pthread_mutex_unlock(&v->lock);
	return NULL;
}

struct bridge_video *bridge_video_create(struct vnc_framebuffer *fb)
{
	if (!bridge_video_available())
		return NULL;
	struct bridge_video *v = calloc(1, sizeof(*v));
	if (!v)
		return NULL;
	v->fb = fb;
	pthread_mutex_init(&v->lock, NULL);
	clock_cond_init(&v->peers_changed);
	return v;
}

void bridge_video_destroy(struct bridge_video *v)
{
	if (!v)
		return;
	pthread_mutex_lock(&v->lock);
	v->stopping = true;
	pthread_cond_broadcast(&v->peers_changed);
	pthread_mutex_unlock(&v->lock);
	if (v->thread_started)
		pthread_join(v->feeder, NULL);
	webrtc_stream_destroy(v->stream);
	pthread_cond_destroy(&v->peers_changed);
	pthread_mutex_destroy(&v->lock);
	free(v);
}

/* A JSON text message for the viewer; NULL when out of memory. */
static struct bridge_viewer_message *json_message(struct bridge_viewers *hub, cJSON *json)
{
	char *text = json ? cJSON_PrintUnformatted(json) : NULL;
	cJSON_Delete(json);
	if (!text)
		return NULL;
	struct bridge_viewer_message *m = bridge_viewer_message_new(hub->headroom, true,
								    strlen(text));
	if (m)
		memcpy(m->data + hub->headroom, text, m->len);
	free(text);
	return m;
}

static struct bridge_viewer_message *failed_message(struct bridge_viewers *hub, const char *why)
{
	cJSON *json = cJSON_CreateObject();
	cJSON_AddStringToObject(json, "type", VIEWER_WIRE_TYPE_WEBRTC_FAILED);
	cJSON_AddStringToObject(json, "message", why);
	return json_message(hub, json);
}

/* Under the hub's lock: the viewer leaves video; its canvas is repainted. */
static void leave_video_locked(struct bridge_viewer *w)
{
	w->video = false;
	w->width = 0; /* a hello, then the whole screen */
	w->hub->news = true;
	pthread_cond_broadcast(&w->hub->changed);
}

/* On the network loop's thread: the viewer's peer goes. */
static void stop_peer(struct bridge_viewer *w)
{
	struct webrtc_peer *peer = w->video_peer;
	if (!peer)
		return;
	struct bridge_video *v = w->hub->video;
	pthread_mutex_lock(&w->hub->lock);
	w->video_peer = NULL;
	leave_video_locked(w);
	pthread_mutex_unlock(&w->hub->lock);
	webrtc_peer_destroy(peer);
	pthread_mutex_lock(&v->lock);
	v->peers--;
	pthread_mutex_unlock(&v->lock);
}

/* Tells the page (and stops the peer, if any): bad input or a failure. */
static void refuse(struct bridge_viewer *w, const char *why)
{
	log_info("viewer video: %s", why);
	stop_peer(w);
	struct bridge_viewer_message *m = failed_message(w->hub, why);
	pthread_mutex_lock(&w->hub->lock);
	if (m && w->video_notice_count < VIDEO_MAX_NOTICES) {
		w->video_notices[w->video_notice_count++] = m;
		m = NULL;
	}
	pthread_mutex_unlock(&w->hub->lock);
	free(m); /* a page that keeps sending bad messages is told a few times */
	w->hub->wake(w->hub->wake_context);
}

static void wake_viewers(void *context)
{
	struct bridge_viewers *hub = context;
	hub->wake(hub->wake_context);
}

/* The STUN and TURN servers of the viewer's link (start_stream checked
 * them; hub.h), one per URL, pointing into servers (the caller deletes
 * it). Returns how many. */
static int ice_servers_of(const cJSON *servers,
			  struct webrtc_ice_server out[WEBRTC_MAX_ICE_SERVERS])
{
	int count = 0;
	const cJSON *server;
	cJSON_ArrayForEach(server, servers)
	{
		const char *username = cJSON_GetStringValue(
			cJSON_GetObjectItemCaseSensitive(server, "username"));
		const char *credential = cJSON_GetStringValue(
			cJSON_GetObjectItemCaseSensitive(server, "credential"));
		const cJSON *url;
		cJSON_ArrayForEach(url, cJSON_GetObjectItemCaseSensitive(server, "urls"))
		{
			if (cJSON_IsString(url) && count < WEBRTC_MAX_ICE_SERVERS)
				out[count++] = (struct webrtc_ice_server){ url->valuestring,
									   username, credential };
		}
	}
	return count;
}

/* Wipes the strings of a parsed copy of the ICE servers (credentials
 * among them), then deletes it. */
static void wipe_json(cJSON *json)
{
	for (cJSON *item = json; item; item = item->next) {
		if (cJSON_IsString(item) && item->valuestring)
			memset(item->valuestring, 0, strlen(item->valuestring));
		wipe_json(item->child);
	}
}

static void start_peer(struct bridge_viewer *w, const cJSON *message,
		       const struct webrtc_ice_server *ice, int ice_count)
{
	struct bridge_video *v = w->hub->video;
	pthread_mutex_lock(&w->hub->lock);
	bool kicked = w->kicked;
	pthread_mutex_unlock(&w->hub->lock);
	if (kicked)
		return; /* revoked or ended: its socket is closing */
	if (!v) {
		refuse(w, "this server offers no video");
		return;
	}
	if (w->video_peer) {
		refuse(w, "this viewer's video had already started");
		return;
	}
	const cJSON *codecs = cJSON_GetObjectItemCaseSensitive(message, "codecs");
	int chosen = -1;
	const cJSON *name;
	if (!cJSON_IsArray(codecs))
		codecs = NULL;
	cJSON_ArrayForEach(name, codecs)
	{
		for (int c = 0; c < WEBRTC_CODECS && chosen < 0; c++)
			if (cJSON_IsString(name) &&
			    strcmp(name->valuestring, webrtc_codec_name((enum webrtc_codec)c)) ==
				    0 &&
			    webrtc_codec_available((enum webrtc_codec)c))
				chosen = c;
		if (chosen >= 0)
			break;
	}
	if (chosen < 0) {
		refuse(w, "none of the page's codecs can be encoded here (VP8 and H264 can, "
			  "where GStreamer has them)");
		return;
	}
	struct error err;
	pthread_mutex_lock(&v->lock);
	if (!v->stream)
		v->stream = webrtc_stream_create(&err);
	if (v->stream && !v->thread_started) {
		v->thread_started = pthread_create(&v->feeder, NULL, feeder_main, v) == 0;
		if (!v->thread_started)
			error_set(&err, 0, "no thread to feed the video");
	}
	struct webrtc_peer *peer = v->stream && v->thread_started
					   ? webrtc_peer_create(
						     v->stream, (enum webrtc_codec)chosen,
						     w->role == BRIDGE_VIEWER_CONTROL, ice,
						     ice_count, wake_viewers, w->hub, &err)
					   : NULL;
	if (peer) {
		v->peers++;
		pthread_cond_broadcast(&v->peers_changed);
	}
	pthread_mutex_unlock(&v->lock);
	if (!peer) {
		refuse(w, err.message);
		return;
	}
	pthread_mutex_lock(&w->hub->lock);
	w->video_peer = peer;
	w->video = true;
	w->video_codec = chosen;
	pthread_mutex_unlock(&w->hub->lock);
	if (ice_count > 0)
		log_info("a viewer's video started (%s, with %d STUN and TURN URLs)",
			 webrtc_codec_name((enum webrtc_codec)chosen), ice_count);
	else
		log_info("a viewer's video started (%s)",
			 webrtc_codec_name((enum webrtc_codec)chosen));
}

/* A page's webrtc-start: a peer with the STUN and TURN servers of its
 * link, if any. */
static void start(struct bridge_viewer *w, const cJSON *message)
{
	pthread_mutex_lock(&w->hub->lock);
	cJSON *ice_json = w->hub->ice_servers ? cJSON_Parse(w->hub->ice_servers) : NULL;
	pthread_mutex_unlock(&w->hub->lock);
	struct webrtc_ice_server ice[WEBRTC_MAX_ICE_SERVERS];
	int ice_count = ice_servers_of(ice_json, ice);
	start_peer(w, message, ice, ice_count);
	wipe_json(ice_json);
	cJSON_Delete(ice_json);
}

void bridge_viewer_video_message(struct bridge_viewer *w, const char *text, size_t len)
{
	cJSON *m = cJSON_ParseWithLength(text, len);
	const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "type"));
	struct error err;
	if (!type) {
		refuse(w, "a video message without a type");
	} else if (strcmp(type, VIEWER_WIRE_TYPE_WEBRTC_START) == 0) {
		start(w, m);
	} else if (strcmp(type, VIEWER_WIRE_TYPE_WEBRTC_STOP) == 0) {
		stop_peer(w);
	} else if (!w->video_peer) {
		refuse(w, "a video message before webrtc-start");
	} else if (strcmp(type, VIEWER_WIRE_TYPE_WEBRTC_ANSWER) == 0) {
		const char *sdp = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "sdp"));
		if (!sdp)
			refuse(w, "webrtc-answer needs \"sdp\", a string");
		else if (!webrtc_peer_answer(w->video_peer, sdp, strlen(sdp), &err))
			refuse(w, err.message);
	} else if (strcmp(type, VIEWER_WIRE_TYPE_WEBRTC_KEYFRAME) == 0) {
		webrtc_stream_keyframe(w->hub->video->stream);
	} else if (strcmp(type, VIEWER_WIRE_TYPE_WEBRTC_CANDIDATE) == 0) {
		const cJSON *candidate = cJSON_GetObjectItemCaseSensitive(m, "candidate");
		const cJSON *mline = cJSON_GetObjectItemCaseSensitive(m, "mline");
		if (!cJSON_IsString(candidate) || !cJSON_IsNumber(mline) ||
		    mline->valuedouble < 0 || mline->valuedouble > 64)
			refuse(w, "webrtc-candidate needs \"candidate\", a string, and \"mline\", "
				  "a number from 0");
		else if (!webrtc_peer_candidate(w->video_peer, (unsigned)mline->valuedouble,
						candidate->valuestring, &err))
			refuse(w, err.message);
	} else {
		refuse(w, "an unknown video message");
	}
	cJSON_Delete(m);
}

struct bridge_viewer_message *bridge_viewer_video_next(struct bridge_viewer *w)
{
	if (w->video_notice_count > 0) {
		struct bridge_viewer_message *m = w->video_notices[0];
		memmove(w->video_notices, w->video_notices + 1,
			sizeof(w->video_notices[0]) * (size_t)--w->video_notice_count);
		return m;
	}
	if (!w->video_peer)
		return NULL;
	struct webrtc_signal *signal = webrtc_peer_next_signal(w->video_peer);
	if (!signal)
		return NULL;
	cJSON *json = cJSON_CreateObject();
	if (signal->kind == WEBRTC_SIGNAL_OFFER) {
		cJSON_AddStringToObject(json, "type", VIEWER_WIRE_TYPE_WEBRTC_OFFER);
		cJSON_AddStringToObject(json, "sdp", signal->text);
		cJSON_AddStringToObject(json, "codec",
					webrtc_codec_name((enum webrtc_codec)w->video_codec));
	} else if (signal->kind == WEBRTC_SIGNAL_CANDIDATE) {
		cJSON_AddStringToObject(json, "type", VIEWER_WIRE_TYPE_WEBRTC_CANDIDATE);
		cJSON_AddStringToObject(json, "candidate", signal->text);
		cJSON_AddNumberToObject(json, "mline", signal->mline);
	} else {
		/* The peer stays until the page stops it or leaves; the viewer
		 * gets rectangles again meanwhile. */
		cJSON_AddStringToObject(json, "type", VIEWER_WIRE_TYPE_WEBRTC_FAILED);
		cJSON_AddStringToObject(json, "message", signal->text);
		leave_video_locked(w);
	}
	webrtc_signal_free(signal);
	return json_message(w->hub, json);
}

char *bridge_viewer_video_next_input(struct bridge_viewer *w, size_t *len)
{
	return w->video_peer ? webrtc_peer_next_input(w->video_peer, len) : NULL;
}

void bridge_viewer_video_stop(struct bridge_viewer *w)
{
	stop_peer(w);
	for (int i = 0; i < w->video_notice_count; i++)
		free(w->video_notices[i]);
	w->video_notice_count = 0;
}
