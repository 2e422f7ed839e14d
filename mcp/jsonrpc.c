#include "jsonrpc.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

static void invalid(struct jsonrpc_message *msg, int code, const char *message)
{
	msg->kind = JSONRPC_INVALID;
	msg->error_code = code;
	snprintf(msg->error_message, sizeof(msg->error_message), "%s", message);
}

void jsonrpc_parse(const char *data, size_t len, struct jsonrpc_message *msg)
{
	memset(msg, 0, sizeof(*msg));
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

	const cJSON *version = cJSON_GetObjectItemCaseSensitive(msg->root, "jsonrpc");
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg->root, "id");
	const cJSON *method = cJSON_GetObjectItemCaseSensitive(msg->root, "method");
	if (id && (cJSON_IsString(id) || cJSON_IsNumber(id)))
		msg->id = id;
	if (!cJSON_IsString(version) || strcmp(version->valuestring, "2.0") != 0) {
		invalid(msg, JSONRPC_INVALID_REQUEST, "Invalid Request: \"jsonrpc\" must be \"2.0\"");
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
		invalid(msg, JSONRPC_INVALID_REQUEST, "Invalid Request: \"method\" must be a string");
		return;
	}
	msg->method = method->valuestring;
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(msg->root, "params");
	if (params && !cJSON_IsObject(params)) {
		invalid(msg, JSONRPC_INVALID_PARAMS, "Invalid params: \"params\" must be an object");
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

static char *print_and_free(cJSON *root)
{
	if (!root)
		return NULL;
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
