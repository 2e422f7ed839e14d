/* SPDX-License-Identifier: MIT */
/* One tools/call's result, built by its tool handler on a worker thread,
 * and the reply that carries it: text, images, structured data, an error,
 * progress on the way, and whether the client cancelled. Base64 image data
 * never goes through cJSON (which would copy megabytes and scan them for
 * characters base64 does not have): the content holds a marker in each
 * image's place, and the reply goes out in parts with the data spliced in
 * where the markers are. Part of the public surface through server.h. */
#ifndef LIZARD_MCP_CALL_H
#define LIZARD_MCP_CALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct blob;
struct cJSON;
struct mcp_call;

/* Result building inside a tool handler. */
__attribute__((format(printf, 2, 3))) void mcp_call_text(struct mcp_call *call, const char *fmt,
							 ...);
bool mcp_call_image(struct mcp_call *call, const uint8_t *data, size_t len, const char *mime_type);
/* Adds an image already encoded as base64 (standard alphabet), keeping a
 * reference to the blob until the reply is sent. */
bool mcp_call_image_blob(struct mcp_call *call, struct blob *base64, const char *mime_type);
/* Marks the result isError and adds the message: for bad arguments and
 * failed actions, phrased so a model can correct itself. */
__attribute__((format(printf, 2, 3))) void mcp_call_fail(struct mcp_call *call, const char *fmt,
							 ...);
bool mcp_call_failed(const struct mcp_call *call);

/* The tool's data, checked by clients against its output_schema: sent as
 * structuredContent and, for clients that show text, as JSON text. Takes
 * ownership of object. An error result (mcp_call_fail) drops it. */
void mcp_call_structured(struct mcp_call *call, struct cJSON *object);
/* The same with shown as the text instead of object itself: for data that
 * also holds images, whose base64 a reader of the text gains nothing from
 * (they come as image content). Takes ownership of both. */
void mcp_call_structured_shown(struct mcp_call *call, struct cJSON *object, struct cJSON *shown);

/* Whether the request carried a progressToken. */
bool mcp_call_wants_progress(const struct mcp_call *call);
/* Sends notifications/progress for this call when it carried a
 * progressToken; progress must grow from one call to the next (the caller
 * picks its unit: bytes, steps), total < 0 means unknown, message may be
 * NULL. Any thread; a no-op without a token. */
void mcp_call_progress(struct mcp_call *call, double progress, double total, const char *message);

/* True once the client cancelled this request (notifications/cancelled).
 * Long tools look at it between steps and stop early; a cancelled call
 * sends no reply. */
bool mcp_call_cancelled(const struct mcp_call *call);

/* Inside mcp/ only (server.c makes and runs calls). */
/* Sends the result as the reply to the request, its images spliced in. */
void mcp_call_send_reply(struct mcp_call *call);
/* Frees the call and what it holds. */
void mcp_call_free(struct mcp_call *call);

#endif
