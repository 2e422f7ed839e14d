/* SPDX-License-Identifier: MIT */
#include "mcp/call.h"

#include "mcp/jsonrpc.h"
#include "mcp/peer.h"
#include "mcp/state.h"
#include "util/base64.h"
#include "util/blob.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What an image's data says in the content until the reply splices the
 * base64 in: the marker and the image's index. */
#define IMAGE_MARKER "lizard-image-data-"

static void drop_images(struct mcp_call *call)
{
	for (int i = 0; i < call->image_count; i++)
		blob_unref(call->images[i]);
	call->image_count = 0;
}

static void add_text(struct mcp_call *call, const char *fmt, va_list ap)
{
	char stack[1024];
	va_list copy;
	va_copy(copy, ap);
	int n = vsnprintf(stack, sizeof(stack), fmt, copy);
	va_end(copy);
	char *text = stack;
	if (n >= (int)sizeof(stack)) {
		text = malloc((size_t)n + 1);
		if (!text)
			return;
		vsnprintf(text, (size_t)n + 1, fmt, ap);
	}
	cJSON *item = cJSON_CreateObject();
	cJSON_AddStringToObject(item, "type", "text");
	cJSON_AddStringToObject(item, "text", text);
	cJSON_AddItemToArray(call->content, item);
	if (text != stack)
		free(text);
}

void mcp_call_text(struct mcp_call *call, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add_text(call, fmt, ap);
	va_end(ap);
}

void mcp_call_fail(struct mcp_call *call, const char *fmt, ...)
{
	/* An error result carries only the message, not partial output. */
	cJSON_Delete(call->content);
	call->content = cJSON_CreateArray();
	drop_images(call);
	cJSON_Delete(call->structured);
	call->structured = NULL;
	call->is_error = true;
	va_list ap;
	va_start(ap, fmt);
	add_text(call, fmt, ap);
	va_end(ap);
}

bool mcp_call_image_blob(struct mcp_call *call, struct blob *base64, const char *mime_type)
{
	if (call->image_count == MCP_MAX_CALL_IMAGES)
		return false;
	char marker[48];
	snprintf(marker, sizeof(marker), IMAGE_MARKER "%d", call->image_count);
	cJSON *item = cJSON_CreateObject();
	if (!item || !cJSON_AddStringToObject(item, "type", "image") ||
	    !cJSON_AddStringToObject(item, "data", marker) ||
	    !cJSON_AddStringToObject(item, "mimeType", mime_type)) {
		cJSON_Delete(item);
		return false;
	}
	cJSON_AddItemToArray(call->content, item);
	call->images[call->image_count++] = blob_ref(base64);
	return true;
}

bool mcp_call_image(struct mcp_call *call, const uint8_t *data, size_t len, const char *mime_type)
{
	struct blob *base64 = base64_encode(data, len);
	if (!base64)
		return false;
	bool ok = mcp_call_image_blob(call, base64, mime_type);
	blob_unref(base64);
	return ok;
}

bool mcp_call_failed(const struct mcp_call *call)
{
	return call->is_error;
}

void mcp_call_structured(struct mcp_call *call, cJSON *object)
{
	mcp_call_structured_shown(call, object, NULL);
}

void mcp_call_structured_shown(struct mcp_call *call, cJSON *object, cJSON *shown)
{
	if (!object) {
		cJSON_Delete(shown);
		return;
	}
	char *text = cJSON_PrintUnformatted(shown ? shown : object);
	cJSON_Delete(shown);
	if (!text) {
		cJSON_Delete(object);
		return;
	}
	cJSON *item = cJSON_CreateObject();
	cJSON_AddStringToObject(item, "type", "text");
	cJSON_AddStringToObject(item, "text", text);
	cJSON_AddItemToArray(call->content, item);
	free(text);
	cJSON_Delete(call->structured);
	call->structured = object;
}

bool mcp_call_wants_progress(const struct mcp_call *call)
{
	return call->progress_token != NULL;
}

void mcp_call_progress(struct mcp_call *call, double progress, double total, const char *message)
{
	if (!call->progress_token)
		return;
	cJSON *params = cJSON_CreateObject();
	if (!params)
		return;
	cJSON_AddItemToObject(params, "progressToken",
			      cJSON_Duplicate(call->progress_token, false));
	cJSON_AddNumberToObject(params, "progress", progress);
	if (total >= 0)
		cJSON_AddNumberToObject(params, "total", total);
	if (message)
		cJSON_AddStringToObject(params, "message", message);
	mcp_peer_send(call->peer, jsonrpc_notification("notifications/progress", params));
}

bool mcp_call_cancelled(const struct mcp_call *call)
{
	return atomic_load(&((struct mcp_call *)call)->cancelled);
}

void mcp_call_free(struct mcp_call *call)
{
	drop_images(call);
	cJSON_Delete(call->id);
	cJSON_Delete(call->arguments);
	cJSON_Delete(call->content);
	cJSON_Delete(call->structured);
	cJSON_Delete(call->progress_token);
	free(call->scope);
	free(call);
}

/* Sends text with each image's marker replaced by its data. */
static void send_with_images(struct mcp_call *call, char *text)
{
	struct iovec parts[MCP_MAX_SEND_PARTS];
	int count = 0;
	const char *p = text;
	for (int i = 0; i < call->image_count; i++) {
		/* Only an image's own "data" member can hold its marker unescaped
		 * and followed by a quote. */
		char marker[64];
		int marker_len = snprintf(marker, sizeof(marker), "\"data\":\"" IMAGE_MARKER "%d\"",
					  i);
		const char *at = strstr(p, marker);
		if (!at)
			break;
		const char *data_start = at + strlen("\"data\":\"");
		parts[count++] = (struct iovec){ (void *)p, (size_t)(data_start - p) };
		parts[count++] = (struct iovec){ call->images[i]->data, call->images[i]->len };
		p = at + marker_len - 1; /* the closing quote starts the next part */
	}
	parts[count++] = (struct iovec){ (void *)p, strlen(p) };
	mcp_peer_send_parts(call->peer, parts, count);
	free(text);
}

void mcp_call_send_reply(struct mcp_call *call)
{
	cJSON *result = cJSON_CreateObject();
	if (result) {
		cJSON_AddItemToObject(result, "content", call->content);
		call->content = NULL;
		if (call->structured && !call->is_error) {
			cJSON_AddItemToObject(result, "structuredContent", call->structured);
			call->structured = NULL;
		}
		cJSON_AddBoolToObject(result, "isError", call->is_error);
	}
	char *text = jsonrpc_result(call->id, result);
	if (text && call->image_count > 0)
		send_with_images(call, text);
	else
		mcp_peer_send(call->peer, text);
}
