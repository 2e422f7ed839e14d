/* SPDX-License-Identifier: MIT */
#include "mcp/jsonrpc.h"

#include "util/utf8.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void invalid(struct jsonrpc_message *msg, int code, const char *message)
{
	msg->kind = JSONRPC_INVALID;
	msg->error_code = code;
	snprintf(msg->error_message, sizeof(msg->error_message), "%s", message);
}

/* Numbers as they were written.
 *
 * cJSON keeps a number only as a double, which changes integers above 2^53
 * (9007199254740993 comes back as 9.00719925474099e+15). Ids and tokens
 * the client gets back must be exactly its own, so their text is found in
 * the message and kept as a raw item that prints verbatim. The message has
 * already been parsed, so this scanner only needs to step over values. */

static const char *skip_space(const char *p, const char *end)
{
	/* cJSON treats every byte up to the space as white space. */
	while (p < end && (unsigned char)*p <= ' ')
		p++;
	return p;
}

/* p is at an opening quote; returns the byte after the closing one. */
static const char *skip_string(const char *p, const char *end)
{
	for (p++; p < end; p++) {
		if (*p == '\\')
			p++;
		else if (*p == '"')
			return p + 1;
	}
	return NULL;
}

static const char *skip_value(const char *p, const char *end)
{
	if (p < end && *p == '"')
		return skip_string(p, end);
	int depth = 0;
	while (p < end) {
		char c = *p;
		if (c == '"') {
			p = skip_string(p, end);
			if (!p)
				return NULL;
			continue;
		}
		if (c == '{' || c == '[') {
			depth++;
		} else if (c == '}' || c == ']') {
			if (depth == 0)
				return p;
			if (--depth == 0)
				return p + 1;
		} else if (depth == 0 && (c == ',' || (unsigned char)c <= ' ')) {
			return p;
		}
		p++;
	}
	return depth == 0 ? p : NULL;
}

/* Whether the quoted key at [start, end) names key, escapes decoded. */
static bool key_is(const char *start, const char *end, const char *key)
{
	size_t len = (size_t)(end - start);
	if (!memchr(start, '\\', len))
		return len == strlen(key) + 2 && memcmp(start + 1, key, len - 2) == 0;
	cJSON *decoded = cJSON_ParseWithLength(start, len);
	bool same = cJSON_IsString(decoded) && strcmp(decoded->valuestring, key) == 0;
	cJSON_Delete(decoded);
	return same;
}

/* The text of the first member named key of the object at [p, end), as
 * cJSON_GetObjectItemCaseSensitive finds it. */
static bool member_text(const char *p, const char *end, const char *key, const char **value,
			const char **value_end)
{
	p = skip_space(p, end);
	if (p == end || *p != '{')
		return false;
	for (p++;;) {
		p = skip_space(p, end);
		if (p == end || *p != '"')
			return false;
		const char *key_start = p;
		if (!(p = skip_string(p, end)))
			return false;
		bool wanted = key_is(key_start, p, key);
		p = skip_space(p, end);
		if (p == end || *p != ':')
			return false;
		p = skip_space(p + 1, end);
		const char *start = p;
		if (!(p = skip_value(p, end)))
			return false;
		if (wanted) {
			*value = start;
			*value_end = p;
			return true;
		}
		p = skip_space(p, end);
		if (p == end || *p != ',')
			return false;
		p++;
	}
}

/* The JSON grammar's number, which cJSON's is looser than ("01", "1."):
 * only text that is one may be echoed. */
static bool is_json_number(const char *p, const char *end)
{
	if (p < end && *p == '-')
		p++;
	if (p == end || *p < '0' || *p > '9')
		return false;
	if (*p == '0')
		p++;
	else
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	if (p < end && *p == '.') {
		const char *digits = ++p;
		while (p < end && *p >= '0' && *p <= '9')
			p++;
		if (p == digits)
			return false;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		const char *digits = p;
		while (p < end && *p >= '0' && *p <= '9')
			p++;
		if (p == digits)
			return false;
	}
	return p == end;
}

/* Replaces the number member name of parent, whose text is in the object
 * at [p, end), with its exact text. Other members stay as they are. */
static void keep_number_text(cJSON *parent, const char *name, const char *p, const char *end)
{
	cJSON *item = cJSON_GetObjectItemCaseSensitive(parent, name);
	const char *value, *value_end;
	if (!cJSON_IsNumber(item) || !member_text(p, end, name, &value, &value_end) ||
	    !is_json_number(value, value_end))
		return;
	char *text = strndup(value, (size_t)(value_end - value));
	cJSON *raw = text ? cJSON_CreateRaw(text) : NULL;
	free(text);
	if (raw)
		cJSON_ReplaceItemInObjectCaseSensitive(parent, name, raw);
}

/* Spans of the nested objects whose numbers are echoed. */
static bool object_text(const char *p, const char *end, const char *name, const char **inner,
			const char **inner_end)
{
	return member_text(p, end, name, inner, inner_end) && *inner < *inner_end && **inner == '{';
}

static void keep_echoed_numbers(cJSON *root, const char *data, size_t len)
{
	const char *end = data + len;
	keep_number_text(root, "id", data, end);
	const char *params, *params_end, *meta, *meta_end;
	cJSON *params_item = cJSON_GetObjectItemCaseSensitive(root, "params");
	if (!cJSON_IsObject(params_item) || !object_text(data, end, "params", &params, &params_end))
		return;
	keep_number_text(params_item, "requestId", params, params_end);
	cJSON *meta_item = cJSON_GetObjectItemCaseSensitive(params_item, "_meta");
	if (cJSON_IsObject(meta_item) && object_text(params, params_end, "_meta", &meta, &meta_end))
		keep_number_text(meta_item, "progressToken", meta, meta_end);
}

bool jsonrpc_is_id(const cJSON *item)
{
	return cJSON_IsString(item) || cJSON_IsNumber(item) || cJSON_IsRaw(item);
}

void jsonrpc_parse(const char *data, size_t len, struct jsonrpc_message *msg)
{
	memset(msg, 0, sizeof(*msg));
	/* JSON text is UTF-8 (RFC 8259). Refusing anything else here keeps
	 * bytes that are not text out of every string the bridge later echoes:
	 * method names, ids, arguments, clipboard text. */
	size_t bad;
	if (!utf8_valid(data, len, &bad)) {
		char message[120];
		snprintf(message, sizeof(message),
			 "Parse error: the message is not valid UTF-8 (byte %zu)", bad);
		invalid(msg, JSONRPC_PARSE_ERROR, message);
		return;
	}
	const char *end = NULL;
	msg->root = cJSON_ParseWithLengthOpts(data, len, &end, false);
	if (!msg->root) {
		invalid(msg, JSONRPC_PARSE_ERROR, "Parse error: the message is not valid JSON");
		return;
	}
	/* Only white space may follow the value. */
	for (const char *p = end; p && p < data + len; p++) {
		if (*p != ' ' && *p != '\t' && *p != '\r' && *p != '\n') {
			invalid(msg, JSONRPC_PARSE_ERROR,
				"Parse error: unexpected data after the JSON value");
			return;
		}
	}
	if (cJSON_IsArray(msg->root)) {
		invalid(msg, JSONRPC_INVALID_REQUEST,
			"Invalid Request: JSON-RPC batches are not supported; send one message "
			"per line");
		return;
	}
	if (!cJSON_IsObject(msg->root)) {
		invalid(msg, JSONRPC_INVALID_REQUEST, "Invalid Request: expected a JSON object");
		return;
	}
	keep_echoed_numbers(msg->root, data, len);

	const cJSON *version = cJSON_GetObjectItemCaseSensitive(msg->root, "jsonrpc");
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg->root, "id");
	const cJSON *method = cJSON_GetObjectItemCaseSensitive(msg->root, "method");
	if (jsonrpc_is_id(id))
		msg->id = id;
	if (!cJSON_IsString(version) || strcmp(version->valuestring, "2.0") != 0) {
		invalid(msg, JSONRPC_INVALID_REQUEST,
			"Invalid Request: \"jsonrpc\" must be \"2.0\"");
		return;
	}
	if (id && !msg->id) {
		invalid(msg, JSONRPC_INVALID_REQUEST,
			"Invalid Request: \"id\" must be a string or a number");
		return;
	}
	if (!method) {
		if (cJSON_GetObjectItemCaseSensitive(msg->root, "result") ||
		    cJSON_GetObjectItemCaseSensitive(msg->root, "error")) {
			msg->kind = JSONRPC_RESPONSE;
			return;
		}
		invalid(msg, JSONRPC_INVALID_REQUEST, "Invalid Request: \"method\" is missing");
		return;
	}
	if (!cJSON_IsString(method)) {
		invalid(msg, JSONRPC_INVALID_REQUEST,
			"Invalid Request: \"method\" must be a string");
		return;
	}
	msg->method = method->valuestring;
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(msg->root, "params");
	if (params && !cJSON_IsObject(params)) {
		invalid(msg, JSONRPC_INVALID_PARAMS,
			"Invalid params: \"params\" must be an object");
		return;
	}
	msg->params = params;
	msg->kind = msg->id ? JSONRPC_REQUEST : JSONRPC_NOTIFICATION;
}

void jsonrpc_message_finish(struct jsonrpc_message *msg)
{
	cJSON_Delete(msg->root);
	memset(msg, 0, sizeof(*msg));
}

static cJSON *envelope(const cJSON *id)
{
	cJSON *root = cJSON_CreateObject();
	if (!root)
		return NULL;
	cJSON_AddStringToObject(root, "jsonrpc", "2.0");
	cJSON *id_copy = id ? cJSON_Duplicate(id, false) : cJSON_CreateNull();
	cJSON_AddItemToObject(root, "id", id_copy);
	return root;
}

void jsonrpc_repair_strings(cJSON *item)
{
	for (; item; item = item->next) {
		if (cJSON_IsString(item) && item->valuestring) {
			size_t len = strlen(item->valuestring);
			if (!utf8_valid(item->valuestring, len, NULL)) {
				char *repaired = utf8_repair(item->valuestring, len, NULL);
				if (repaired) {
					cJSON_free(item->valuestring);
					item->valuestring = repaired;
				}
			}
		}
		if (item->child)
			jsonrpc_repair_strings(item->child);
	}
}

/* Whatever text went into a reply (a VNC server's reason, a program's
 * output), what goes out is UTF-8. */
static char *print_and_free(cJSON *root)
{
	if (!root)
		return NULL;
	jsonrpc_repair_strings(root);
	char *text = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	return text;
}

char *jsonrpc_result(const cJSON *id, cJSON *result)
{
	cJSON *root = envelope(id);
	if (!root) {
		cJSON_Delete(result);
		return NULL;
	}
	cJSON_AddItemToObject(root, "result", result ? result : cJSON_CreateObject());
	return print_and_free(root);
}

char *jsonrpc_notification(const char *method, cJSON *params)
{
	cJSON *root = cJSON_CreateObject();
	if (!root) {
		cJSON_Delete(params);
		return NULL;
	}
	cJSON_AddStringToObject(root, "jsonrpc", "2.0");
	cJSON_AddStringToObject(root, "method", method);
	cJSON_AddItemToObject(root, "params", params ? params : cJSON_CreateObject());
	return print_and_free(root);
}

char *jsonrpc_error(const cJSON *id, int code, const char *message)
{
	cJSON *root = envelope(id);
	if (!root)
		return NULL;
	cJSON *error = cJSON_AddObjectToObject(root, "error");
	cJSON_AddNumberToObject(error, "code", code);
	cJSON_AddStringToObject(error, "message", message);
	return print_and_free(root);
}
