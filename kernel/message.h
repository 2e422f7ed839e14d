/* SPDX-License-Identifier: MIT */
/* One Jupyter message as it travels over ZeroMQ (messaging protocol 5.3):
 * routing frames, the "<IDS|MSG>" delimiter, the HMAC-SHA256 signature in
 * hex, then header, parent header, metadata and content as four JSON frames,
 * then binary buffers. The signature covers the four JSON frames exactly as
 * sent, so a message is verified on its raw frames before any JSON is
 * parsed, and a message whose signature does not match is never looked at.
 * The key is the connection file's "key" string, its bytes used as is. */
#ifndef LIZARD_KERNEL_MESSAGE_H
#define LIZARD_KERNEL_MESSAGE_H

#include "util/error.h"

#include <stdbool.h>
#include <stddef.h>

struct cJSON;

/* 32 random bytes in hex: a key, a session id. */
#define KERNEL_KEY_LENGTH 64

struct kernel_key {
	char text[KERNEL_KEY_LENGTH + 1];
};

/* A fresh key from getrandom(). */
bool kernel_key_generate(struct kernel_key *key, struct error *err);

/* A received message, verified and parsed. Owned by whoever received it;
 * kernel_message_free releases it. */
struct kernel_message {
	struct cJSON *header, *parent_header, *metadata, *content;
	const char *msg_type;  /* in header */
	const char *msg_id;    /* in header */
	const char *parent_id; /* in parent_header; "" when it has none */
};

void kernel_message_free(struct kernel_message *m);

/* The four JSON frames of an outgoing message and its signature, built
 * from msg_type and content (which the call takes over). session names the
 * client (KERNEL_KEY_LENGTH hex). id gets the new message's id. */
struct kernel_outgoing {
	char *frames[4]; /* header, parent_header, metadata, content */
	size_t lengths[4];
	char signature[65];
	char msg_id[40];
};

bool kernel_outgoing_build(struct kernel_outgoing *out, const struct kernel_key *key,
			   const char *session, const char *msg_type, struct cJSON *content,
			   struct error *err);
void kernel_outgoing_finish(struct kernel_outgoing *out);

/* Why a set of received frames was not a message. */
enum kernel_frames_verdict {
	KERNEL_FRAMES_OK,
	KERNEL_FRAMES_MALFORMED, /* no delimiter, too few frames, bad JSON */
	KERNEL_FRAMES_FORGED,    /* the signature does not match */
};

/* Checks and parses frames[0..count): skips routing frames up to the
 * delimiter, verifies the signature in constant time, then parses. On
 * KERNEL_FRAMES_OK fills *m. */
enum kernel_frames_verdict kernel_message_parse(const struct kernel_key *key,
						const void *const *frames, const size_t *lengths,
						size_t count, struct kernel_message *m);

#endif
