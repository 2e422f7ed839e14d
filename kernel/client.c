/* SPDX-License-Identifier: MIT */
#include "kernel/client.h"

#include "util/clock.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

/* A message has a handful of frames; a peer that sends thousands is not a
 * kernel. One frame of a rich result (an image) stays under this. */
#define MAX_FRAMES 64
#define MAX_FRAME_BYTES (16 * 1024 * 1024)
/* iopub may run ahead of us while output pours out; the kernel's own send
 * queue is the other bound (what it drops there never reaches us, which
 * the execute layer notices by a missing idle status). */
#define IOPUB_QUEUE_MESSAGES 100000

struct kernel_client {
	void *context;
	void *sockets[4]; /* by enum kernel_channel */
	void *heartbeat;
	void *monitor;       /* PAIR end of the shell socket's monitor */
	void *iopub_monitor; /* and of iopub's */
	bool iopub_dropped;  /* since the last kernel_client_resync */
	char iopub_endpoint[128];
	unsigned monitors; /* made so far: each inproc address is new */
	struct kernel_key key;
	char session[KERNEL_KEY_LENGTH + 1];
	struct kernel_client_counts counts;
	char language[32];
	bool gone;
};

static const char *const channel_names[] = { "shell", "iopub", "control", "stdin" };

static void *open_socket(struct kernel_client *k, int type, const char *endpoint, const char *name,
			 struct error *err)
{
	void *s = zmq_socket(k->context, type);
	if (!s)
		return error_null(err, errno, "kernel %s socket", name);
	int zero = 0, one = 1;
	int64_t max = MAX_FRAME_BYTES;
	int queue = IOPUB_QUEUE_MESSAGES;
	zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof(zero));
	zmq_setsockopt(s, ZMQ_MAXMSGSIZE, &max, sizeof(max));
	if (type == ZMQ_SUB) {
		zmq_setsockopt(s, ZMQ_SUBSCRIBE, "", 0);
		zmq_setsockopt(s, ZMQ_RCVHWM, &queue, sizeof(queue));
	}
	if (type == ZMQ_REQ) {
		/* A ping that got no answer must not wedge the next one. */
		zmq_setsockopt(s, ZMQ_REQ_RELAXED, &one, sizeof(one));
		zmq_setsockopt(s, ZMQ_REQ_CORRELATE, &one, sizeof(one));
	}
	if (zmq_connect(s, endpoint) != 0) {
		int e = errno;
		zmq_close(s);
		return error_null(err, e, "connecting the kernel's %s socket (%s)", name, endpoint);
	}
	return s;
}

/* The shell socket's DISCONNECTED events arrive on a PAIR socket: the
 * kernel closing its end is how its death shows. */
static void *open_monitor(struct kernel_client *k, enum kernel_channel channel, struct error *err)
{
	char address[64];
	snprintf(address, sizeof(address), "inproc://kernel-monitor-%p-%u", (void *)k,
		 k->monitors++);
	if (zmq_socket_monitor(k->sockets[channel], address, ZMQ_EVENT_DISCONNECTED) != 0)
		return error_null(err, errno, "monitoring the kernel's %s socket",
				  channel_names[channel]);
	void *pair = zmq_socket(k->context, ZMQ_PAIR);
	if (!pair || zmq_connect(pair, address) != 0) {
		int e = errno;
		if (pair)
			zmq_close(pair);
		return error_null(err, e, "connecting the kernel socket monitor");
	}
	return pair;
}

struct kernel_client *kernel_client_create(const struct kernel_endpoints *endpoints,
					   const struct kernel_key *key, struct error *err)
{
	struct kernel_client *k = calloc(1, sizeof(*k));
	if (!k)
		return error_null(err, ENOMEM, "kernel client");
	k->key = *key;
	struct kernel_key session;
	if (!kernel_key_generate(&session, err))
		goto fail;
	memcpy(k->session, session.text, sizeof(k->session));
	k->context = zmq_ctx_new();
	if (!k->context) {
		error_set(err, errno, "zmq_ctx_new");
		goto fail;
	}
	const char *paths[4] = { endpoints->shell, endpoints->iopub, endpoints->control,
				 endpoints->stdin_ };
	const int types[4] = { ZMQ_DEALER, ZMQ_SUB, ZMQ_DEALER, ZMQ_DEALER };
	for (int i = 0; i < 4; i++)
		if (!(k->sockets[i] = open_socket(k, types[i], paths[i], channel_names[i], err)))
			goto fail;
	snprintf(k->iopub_endpoint, sizeof(k->iopub_endpoint), "%s", endpoints->iopub);
	if (!(k->heartbeat = open_socket(k, ZMQ_REQ, endpoints->heartbeat, "heartbeat", err)))
		goto fail;
	/* A kernel that exits closes shell; a message over MAX_FRAME_BYTES
	 * makes ZeroMQ drop iopub's connection (and the message), which then
	 * comes back by itself. */
	if (!(k->monitor = open_monitor(k, KERNEL_SHELL, err)) ||
	    !(k->iopub_monitor = open_monitor(k, KERNEL_IOPUB, err)))
		goto fail;
	return k;
fail:
	kernel_client_destroy(k);
	return NULL;
}

void kernel_client_destroy(struct kernel_client *k)
{
	if (!k)
		return;
	if (k->monitor) {
		zmq_socket_monitor(k->sockets[KERNEL_SHELL], NULL, 0);
		zmq_close(k->monitor);
	}
	if (k->iopub_monitor) {
		if (k->sockets[KERNEL_IOPUB])
			zmq_socket_monitor(k->sockets[KERNEL_IOPUB], NULL, 0);
		zmq_close(k->iopub_monitor);
	}
	for (int i = 0; i < 4; i++)
		if (k->sockets[i])
			zmq_close(k->sockets[i]);
	if (k->heartbeat)
		zmq_close(k->heartbeat);
	if (k->context)
		zmq_ctx_term(k->context);
	free(k);
}

bool kernel_client_send(struct kernel_client *k, enum kernel_channel channel, const char *msg_type,
			cJSON *content, char id[40], struct error *err)
{
	struct kernel_outgoing out;
	if (!kernel_outgoing_build(&out, &k->key, k->session, msg_type, content, err))
		return false;
	void *s = k->sockets[channel];
	/* DONTWAIT: a kernel that stopped reading fills the queue and the send
	 * fails rather than blocking the caller. */
	bool ok = zmq_send(s, "<IDS|MSG>", 9, ZMQ_SNDMORE | ZMQ_DONTWAIT) == 9 &&
		  zmq_send(s, out.signature, 64, ZMQ_SNDMORE | ZMQ_DONTWAIT) == 64;
	for (int i = 0; ok && i < 4; i++)
		ok = zmq_send(s, out.frames[i], out.lengths[i],
			      (i < 3 ? ZMQ_SNDMORE : 0) | ZMQ_DONTWAIT) == (int)out.lengths[i];
	int e = errno;
	if (ok && id)
		memcpy(id, out.msg_id, sizeof(out.msg_id));
	kernel_outgoing_finish(&out);
	if (!ok)
		return error_set(err, e, "sending %s on the kernel's %s socket", msg_type,
				 channel_names[channel]);
	return true;
}

/* Reads every frame of one message already waiting on s. */
static enum kernel_frames_verdict read_message(struct kernel_client *k, void *s,
					       struct kernel_message *m)
{
	zmq_msg_t frames[MAX_FRAMES];
	const void *data[MAX_FRAMES];
	size_t lengths[MAX_FRAMES];
	size_t count = 0;
	bool too_many = false;
	int more = 1;
	while (more) {
		zmq_msg_t frame;
		zmq_msg_init(&frame);
		if (zmq_msg_recv(&frame, s, ZMQ_DONTWAIT) < 0) {
			zmq_msg_close(&frame);
			break;
		}
		more = zmq_msg_more(&frame);
		if (count == MAX_FRAMES) {
			too_many = true;
			zmq_msg_close(&frame);
			continue;
		}
		frames[count] = frame;
		data[count] = zmq_msg_data(&frames[count]);
		lengths[count] = zmq_msg_size(&frames[count]);
		count++;
	}
	enum kernel_frames_verdict v = too_many ? KERNEL_FRAMES_MALFORMED
						: kernel_message_parse(&k->key, data, lengths,
								       count, m);
	for (size_t i = 0; i < count; i++)
		zmq_msg_close(&frames[i]);
	if (v == KERNEL_FRAMES_FORGED)
		k->counts.forged++;
	else if (v == KERNEL_FRAMES_MALFORMED)
		k->counts.malformed++;
	return v;
}

/* True when a monitor said its socket's connection dropped. */
static bool read_monitor(void *monitor)
{
	bool gone = false;
	for (;;) {
		zmq_msg_t frame;
		zmq_msg_init(&frame);
		if (zmq_msg_recv(&frame, monitor, ZMQ_DONTWAIT) < 0) {
			zmq_msg_close(&frame);
			return gone;
		}
		if (zmq_msg_size(&frame) >= 2) {
			uint16_t event;
			memcpy(&event, zmq_msg_data(&frame), sizeof(event));
			if (event == ZMQ_EVENT_DISCONNECTED)
				gone = true;
		}
		zmq_msg_close(&frame);
	}
}

enum kernel_receive_result kernel_client_receive(struct kernel_client *k, int64_t deadline_ms,
						 int cancel_fd, enum kernel_channel *channel,
						 struct kernel_message *m, struct error *err)
{
	if (k->gone)
		return KERNEL_RECEIVE_GONE;
	for (;;) {
		zmq_pollitem_t items[6] = {
			{ .socket = k->sockets[KERNEL_SHELL], .events = ZMQ_POLLIN },
			{ .socket = k->sockets[KERNEL_IOPUB], .events = ZMQ_POLLIN },
			{ .socket = k->sockets[KERNEL_CONTROL], .events = ZMQ_POLLIN },
			{ .socket = k->monitor, .events = ZMQ_POLLIN },
			{ .socket = k->iopub_monitor, .events = ZMQ_POLLIN },
			{ .socket = NULL, .fd = cancel_fd, .events = ZMQ_POLLIN },
		};
		int64_t left = deadline_ms - clock_monotonic_ms();
		if (left < 0)
			left = 0;
		int n = zmq_poll(items, cancel_fd >= 0 ? 6 : 5, (long)left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			error_set(err, errno, "zmq_poll on the kernel's sockets");
			return KERNEL_RECEIVE_FAILED;
		}
		/* Messages already queued are read before a cancel or a death. */
		for (int i = 0; i < 3; i++) {
			if (!(items[i].revents & ZMQ_POLLIN))
				continue;
			if (read_message(k, items[i].socket, m) == KERNEL_FRAMES_OK) {
				*channel = (enum kernel_channel)i;
				return KERNEL_RECEIVED;
			}
		}
		if ((items[4].revents & ZMQ_POLLIN) && read_monitor(k->iopub_monitor)) {
			k->counts.iopub_drops++;
			k->iopub_dropped = true;
		}
		if (cancel_fd >= 0 && (items[5].revents & ZMQ_POLLIN))
			return KERNEL_RECEIVE_CANCELLED;
		if ((items[3].revents & ZMQ_POLLIN) && read_monitor(k->monitor)) {
			k->gone = true;
			return KERNEL_RECEIVE_GONE;
		}
		/* Also when forged messages keep coming: they do not extend it. */
		if (clock_monotonic_ms() >= deadline_ms)
			return KERNEL_RECEIVE_TIMEOUT;
	}
}

bool kernel_client_wait_ready(struct kernel_client *k, int64_t deadline_ms, struct error *err)
{
	bool replied = false, heard = false;
	char asked[40] = "";
	int64_t next_ask = 0;
	while (!(replied && heard)) {
		int64_t now = clock_monotonic_ms();
		if (now >= deadline_ms)
			return error_set(err, ETIMEDOUT, "the kernel did not become ready (%s)",
					 replied ? "no message on iopub" : "no kernel_info reply");
		/* Asking again until iopub speaks: a status sent before our
		 * subscription reached the kernel is lost, and so would be the
		 * only sign that it is live. */
		if (now >= next_ask) {
			if (!kernel_client_send(k, KERNEL_SHELL, "kernel_info_request",
						cJSON_CreateObject(), asked, err))
				return false;
			next_ask = now + 500;
		}
		int64_t until = next_ask < deadline_ms ? next_ask : deadline_ms;
		enum kernel_channel channel;
		struct kernel_message m;
		switch (kernel_client_receive(k, until, -1, &channel, &m, err)) {
		case KERNEL_RECEIVED:
			break;
		case KERNEL_RECEIVE_TIMEOUT:
			continue;
		case KERNEL_RECEIVE_GONE:
			return error_set(err, 0, "the kernel exited while starting");
		default:
			return false;
		}
		if (channel == KERNEL_IOPUB)
			heard = true;
		if (channel == KERNEL_SHELL && strcmp(m.msg_type, "kernel_info_reply") == 0) {
			replied = true;
			const cJSON *info = cJSON_GetObjectItemCaseSensitive(m.content,
									     "language_info");
			const cJSON *name = cJSON_GetObjectItemCaseSensitive(info, "name");
			if (cJSON_IsString(name))
				snprintf(k->language, sizeof(k->language), "%s", name->valuestring);
		}
		kernel_message_free(&m);
	}
	return true;
}

/* ZeroMQ does not reconnect a connection it dropped for a protocol error
 * (the oversized message), so iopub gets a socket of its own again. */
static bool reopen_iopub(struct kernel_client *k, struct error *err)
{
	zmq_socket_monitor(k->sockets[KERNEL_IOPUB], NULL, 0);
	zmq_close(k->iopub_monitor);
	zmq_close(k->sockets[KERNEL_IOPUB]);
	k->iopub_monitor = NULL;
	if (!(k->sockets[KERNEL_IOPUB] = open_socket(k, ZMQ_SUB, k->iopub_endpoint, "iopub", err)))
		return false;
	return (k->iopub_monitor = open_monitor(k, KERNEL_IOPUB, err)) != NULL;
}

bool kernel_client_resync(struct kernel_client *k, int64_t deadline_ms, struct error *err)
{
	if (!k->iopub_dropped)
		return true;
	if (!reopen_iopub(k, err) || !kernel_client_wait_ready(k, deadline_ms, err))
		return error_prefix(err, "after iopub dropped a message");
	k->iopub_dropped = false;
	return true;
}

bool kernel_client_ping(struct kernel_client *k, int64_t timeout_ms)
{
	static const char probe[] = "lizard-bridge ping";
	if (zmq_send(k->heartbeat, probe, sizeof(probe) - 1, ZMQ_DONTWAIT) < 0)
		return false;
	zmq_pollitem_t item = { .socket = k->heartbeat, .events = ZMQ_POLLIN };
	if (zmq_poll(&item, 1, (long)timeout_ms) != 1)
		return false;
	char echo[64];
	int n = zmq_recv(k->heartbeat, echo, sizeof(echo), ZMQ_DONTWAIT);
	return n == (int)sizeof(probe) - 1 && memcmp(echo, probe, (size_t)n) == 0;
}

struct kernel_client_counts kernel_client_counts(const struct kernel_client *k)
{
	return k->counts;
}

const char *kernel_client_language(const struct kernel_client *k)
{
	return k->language;
}
