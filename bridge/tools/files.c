/* SPDX-License-Identifier: MIT */
#include "bridge/tools/files.h"

#include "bridge/tools/common.h"

#include "mcp/server.h"
#include "sandbox/sandbox.h"
#include "sandbox/files.h"
#include "util/base64.h"
#include "util/blob.h"
#include "util/utf8.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

/* A reply carries the data twice (structuredContent and its JSON text),
 * base64 makes it 4/3 larger, and the official SDK's stdio client takes
 * messages of at most 10 MiB: 3 MiB per read keeps under that. Writes are
 * bounded by the 4 MiB the daemon accepts per message. */
#define FILE_MAX_PER_CALL (3 * 1024 * 1024)

void tools_read_file(struct mcp_call *call, const cJSON *args, struct bridge_tools_context *context)
{
	struct bridge_session *s = NULL;
	struct sandbox *sandbox = tools_session_sandbox(context, call, args, &s);
	if (!sandbox)
		return;
	const char *path = tools_string(args, "path", "");
	const cJSON *offset_json = cJSON_GetObjectItemCaseSensitive(args, "offset");
	const cJSON *length_json = cJSON_GetObjectItemCaseSensitive(args, "length");
	uint64_t offset = offset_json ? (uint64_t)offset_json->valuedouble : 0;
	uint64_t length = length_json ? (uint64_t)length_json->valuedouble : FILE_MAX_PER_CALL;
	struct sandbox_file_data file;
	struct error err;
	if (!sandbox_read_file(sandbox, tools_sandbox_user(args), path, offset, length, &file,
			       &err)) {
		tools_fail_sandbox_call(call, s, &err);
		return;
	}
	if (!length_json && file.sized && file.size > offset &&
	    file.size - offset > FILE_MAX_PER_CALL) {
		mcp_call_fail(call,
			      "%s is %llu bytes; a call reads at most %d MiB: give offset and "
			      "length to read it in parts",
			      path, (unsigned long long)file.size,
			      FILE_MAX_PER_CALL / (1024 * 1024));
		free(file.data);
		return;
	}
	if (!length_json && file.more) {
		mcp_call_fail(call,
			      "%s goes on beyond %d MiB (the kernel does not tell its size); a "
			      "call reads at most that: give offset and length to read it in parts",
			      path, FILE_MAX_PER_CALL / (1024 * 1024));
		free(file.data);
		return;
	}
	cJSON *result = cJSON_CreateObject();
	cJSON_AddStringToObject(result, "path", path);
	cJSON_AddNumberToObject(result, "size", (double)file.size);
	cJSON_AddNumberToObject(result, "offset", (double)offset);
	cJSON_AddNumberToObject(result, "length", (double)file.len);
	if (utf8_is_text(file.data, file.len)) {
		cJSON_AddStringToObject(result, "encoding", "utf-8");
		cJSON_AddStringToObject(result, "text", file.data);
	} else {
		struct blob *encoded = base64_encode((const unsigned char *)file.data, file.len);
		cJSON_AddStringToObject(result, "encoding", "base64");
		cJSON_AddStringToObject(result, "data", encoded ? encoded->data : "");
		blob_unref(encoded);
	}
	free(file.data);
	tools_reply_data(call, result);
}

static bool parse_mode(const char *text, unsigned *mode)
{
	char *end;
	unsigned long value = strtoul(text, &end, 8);
	if (end == text || *end || value > 07777)
		return false;
	*mode = (unsigned)value;
	return true;
}

void tools_write_file(struct mcp_call *call, const cJSON *args,
		      struct bridge_tools_context *context)
{
	struct bridge_session *s = NULL;
	struct sandbox *sandbox = tools_session_sandbox(context, call, args, &s);
	if (!sandbox)
		return;
	const char *path = tools_string(args, "path", "");
	const char *text = tools_string(args, "text", NULL);
	const char *data = tools_string(args, "data", NULL);
	if (!text == !data) {
		mcp_call_fail(call, "give text (UTF-8) or data (base64), exactly one of them");
		return;
	}
	unsigned mode;
	if (!parse_mode(tools_string(args, "mode", "644"), &mode)) {
		mcp_call_fail(call,
			      "mode '%.16s' is not octal permissions such as \"644\" or "
			      "\"0755\"",
			      tools_string(args, "mode", ""));
		return;
	}
	unsigned char *bytes = NULL;
	size_t len = text ? strlen(text) : 0;
	if (data) {
		size_t data_len = strlen(data);
		bytes = malloc(data_len / 4 * 3 + 3);
		if (!bytes || !base64_decode(data, data_len, bytes, &len)) {
			mcp_call_fail(call, bytes ? "data is not base64 (standard alphabet, no "
						    "line breaks)"
						  : "out of memory");
			free(bytes);
			return;
		}
	}
	struct error err;
	bool ok = sandbox_write_file(sandbox, tools_sandbox_user(args), path,
				     data ? (const void *)bytes : text, len, mode, &err);
	free(bytes);
	if (!ok) {
		tools_fail_sandbox_call(call, s, &err);
		return;
	}
	cJSON *result = cJSON_CreateObject();
	cJSON_AddStringToObject(result, "path", path);
	cJSON_AddNumberToObject(result, "bytes", (double)len);
	tools_reply_data(call, result);
}

static const char *type_name(char type)
{
	switch (type) {
	case 'f':
		return "file";
	case 'd':
		return "directory";
	case 'l':
		return "symlink";
	case 'p':
		return "fifo";
	case 's':
		return "socket";
	case 'c':
		return "char_device";
	case 'b':
		return "block_device";
	default:
		return "unknown";
	}
}

void tools_list_files(struct mcp_call *call, const cJSON *args,
		      struct bridge_tools_context *context)
{
	struct bridge_session *s = NULL;
	struct sandbox *sandbox = tools_session_sandbox(context, call, args, &s);
	if (!sandbox)
		return;
	const char *path = tools_string(args, "path", sandbox_inside_home(sandbox));
	struct sandbox_dir_entry *entries;
	size_t count;
	bool truncated;
	struct error err;
	if (!sandbox_list_files(sandbox, tools_sandbox_user(args), path, &entries, &count,
				&truncated, &err)) {
		tools_fail_sandbox_call(call, s, &err);
		return;
	}
	cJSON *result = cJSON_CreateObject();
	cJSON_AddStringToObject(result, "path", path);
	cJSON *list = cJSON_AddArrayToObject(result, "entries");
	for (size_t i = 0; i < count; i++) {
		cJSON *entry = cJSON_CreateObject();
		char *name = utf8_sanitize(entries[i].name, strlen(entries[i].name));
		cJSON_AddStringToObject(entry, "name", name ? name : "");
		free(name);
		cJSON_AddStringToObject(entry, "type", type_name(entries[i].type));
		cJSON_AddNumberToObject(entry, "size", (double)entries[i].size);
		cJSON_AddNumberToObject(entry, "mtime", (double)entries[i].mtime);
		cJSON_AddItemToArray(list, entry);
	}
	cJSON_AddBoolToObject(result, "truncated", truncated);
	sandbox_free_entries(entries, count);
	tools_reply_data(call, result);
}
