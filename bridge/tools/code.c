/* SPDX-License-Identifier: MIT */
#include "bridge/tools/code.h"

#include "bridge/tools/common.h"

#include "bridge/session/code.h"
#include "bridge/session/session.h"
#include "kernel/execute.h"
#include "mcp/server.h"
#include "util/blob.h"
#include "util/utf8.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RUN_CODE_DEFAULT_TIMEOUT_MS 60000
/* Of each log, what the text shows; the structured result has all. */
#define SHOWN_LOG_BYTES (16 * 1024)

/* MIME types by the names results carry. */
static const struct {
	const char *mime, *name;
} forms[] = {
	{ "text/plain", "text" },
	{ "text/html", "html" },
	{ "text/markdown", "markdown" },
	{ "image/svg+xml", "svg" },
	{ "image/png", "png" },
	{ "image/jpeg", "jpeg" },
	{ "application/json", "json" },
	{ "text/latex", "latex" },
	{ "application/javascript", "javascript" },
};

static const char *form_name(const char *mime)
{
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++)
		if (strcmp(forms[i].mime, mime) == 0)
			return forms[i].name;
	return NULL;
}

/* Jupyter may send a text form as a list of lines. */
static cJSON *form_value(const cJSON *value, bool keep_json)
{
	if (keep_json || !cJSON_IsArray(value))
		return cJSON_Duplicate(value, true);
	size_t length = 0;
	const cJSON *line;
	cJSON_ArrayForEach(line, value) if (cJSON_IsString(line))
		length += strlen(line->valuestring);
	char *joined = malloc(length + 1), *p = joined;
	if (!joined)
		return NULL;
	cJSON_ArrayForEach(line, value) if (cJSON_IsString(line))
	{
		size_t n = strlen(line->valuestring);
		memcpy(p, line->valuestring, n);
		p += n;
	}
	*p = '\0';
	cJSON *out = cJSON_CreateString(joined);
	free(joined);
	return out;
}

/* One result as the hosted interpreter shapes it; the images it holds go
 * to the call as image content too (up to what a reply carries). */
static cJSON *result_json(struct mcp_call *call, const struct kernel_result *r, int *images)
{
	cJSON *item = cJSON_CreateObject();
	if (!item)
		return NULL;
	cJSON_AddBoolToObject(item, "is_main_result", r->is_main);
	cJSON *extra = NULL;
	const cJSON *form;
	cJSON_ArrayForEach(form, r->data)
	{
		const char *name = form_name(form->string);
		cJSON *value = form_value(form, name && strcmp(name, "json") == 0);
		if (!value)
			continue;
		if (!name) {
			if (!extra)
				extra = cJSON_AddObjectToObject(item, "extra");
			cJSON_AddItemToObject(extra, form->string, value);
			continue;
		}
		cJSON_AddItemToObject(item, name, value);
		bool image = strcmp(name, "png") == 0 || strcmp(name, "jpeg") == 0;
		if (image && cJSON_IsString(value) && *images < MCP_MAX_CALL_IMAGES) {
			size_t length = strlen(value->valuestring);
			struct blob *b = blob_create(length + 1);
			if (b) {
				/* base64 from the kernel, which may wrap its lines. */
				size_t at = 0;
				for (size_t i = 0; i < length; i++)
					if (value->valuestring[i] != '\n')
						b->data[at++] = value->valuestring[i];
				b->data[at] = 0;
				b->len = at;
				if (mcp_call_image_blob(call, b, form->string))
					(*images)++;
				blob_unref(b);
			}
		}
	}
	return item;
}

/* A kernel's text is UTF-8 as a rule; the rare chunk that is not is
 * repaired, the rest goes out without a second copy. */
static cJSON *log_json(const struct kernel_log *log)
{
	cJSON *list = cJSON_CreateArray();
	for (size_t i = 0; list && i < log->count; i++) {
		const char *chunk = log->chunks[i];
		if (utf8_valid(chunk, strlen(chunk), NULL)) {
			cJSON_AddItemToArray(list, cJSON_CreateString(chunk));
			continue;
		}
		char *text = utf8_sanitize(chunk, strlen(chunk));
		cJSON_AddItemToArray(list, cJSON_CreateString(text ? text : ""));
		free(text);
	}
	return list;
}

static cJSON *string_or_null(const char *text)
{
	return text && *text ? cJSON_CreateString(text) : cJSON_CreateNull();
}

static cJSON *run_json(struct mcp_call *call, const struct bridge_code_result *r, int *images)
{
	const struct kernel_execution *e = &r->execution;
	cJSON *out = cJSON_CreateObject();
	if (!out)
		return NULL;
	cJSON *results = cJSON_AddArrayToObject(out, "results");
	for (size_t i = 0; results && i < e->result_count; i++)
		cJSON_AddItemToArray(results, result_json(call, &e->results[i], images));
	cJSON *logs = cJSON_AddObjectToObject(out, "logs");
	if (logs) {
		cJSON_AddItemToObject(logs, "stdout", log_json(&e->out));
		cJSON_AddItemToObject(logs, "stderr", log_json(&e->err));
	}
	if (e->has_error) {
		cJSON *error = cJSON_AddObjectToObject(out, "error");
		cJSON_AddStringToObject(error, "name", e->error_name ? e->error_name : "");
		cJSON_AddStringToObject(error, "value", e->error_value ? e->error_value : "");
		cJSON_AddStringToObject(error, "traceback", e->traceback ? e->traceback : "");
	} else {
		cJSON_AddNullToObject(out, "error");
	}
	if (e->execution_count > 0)
		cJSON_AddNumberToObject(out, "execution_count", e->execution_count);
	else
		cJSON_AddNullToObject(out, "execution_count");
	cJSON_AddItemToObject(out, "context", string_or_null(r->context));
	cJSON_AddStringToObject(out, "language", r->language);
	if (r->has_exit_code)
		cJSON_AddNumberToObject(out, "exit_code", r->exit_code);
	else
		cJSON_AddNullToObject(out, "exit_code");
	cJSON_AddBoolToObject(out, "timed_out", r->timed_out);
	cJSON_AddBoolToObject(out, "restarted", r->restarted);
	if (r->note[0])
		cJSON_AddStringToObject(out, "note", r->note);
	cJSON *truncated = cJSON_AddObjectToObject(out, "truncated");
	if (truncated) {
		cJSON_AddNumberToObject(truncated, "stdout_bytes", (double)e->out.dropped_bytes);
		cJSON_AddNumberToObject(truncated, "stderr_bytes", (double)e->err.dropped_bytes);
		cJSON_AddNumberToObject(truncated, "results", (double)e->omitted_results);
		cJSON_AddNumberToObject(truncated, "result_bytes", (double)e->omitted_bytes);
		cJSON_AddBoolToObject(truncated, "output_lost", e->output_lost);
	}
	cJSON_AddNumberToObject(out, "duration_ms",
				(double)(e->elapsed_ms > 0 ? e->elapsed_ms : 0));
	return out;
}

/* A log as the text shows it: its last SHOWN_LOG_BYTES, with a first
 * entry that says how much came before (all of it is in the data). */
static void shorten_log(cJSON *list, size_t dropped)
{
	size_t total = 0;
	cJSON *chunk;
	cJSON_ArrayForEach(chunk, list) total += strlen(chunk->valuestring);
	if (total <= SHOWN_LOG_BYTES && dropped == 0)
		return;
	/* Whole chunks go while what stays is still over the bound... */
	while (total > SHOWN_LOG_BYTES) {
		size_t length = strlen(cJSON_GetArrayItem(list, 0)->valuestring);
		if (total - length < SHOWN_LOG_BYTES)
			break;
		total -= length;
		dropped += length;
		cJSON_DeleteItemFromArray(list, 0);
	}
	/* ...then the first keeps its end, cut on a character boundary. */
	const char *first = cJSON_GetArrayItem(list, 0)->valuestring;
	size_t skip = total > SHOWN_LOG_BYTES ? total - SHOWN_LOG_BYTES : 0;
	while (first[skip] && ((unsigned char)first[skip] & 0xc0) == 0x80)
		skip++;
	if (skip > 0) {
		cJSON_ReplaceItemInArray(list, 0, cJSON_CreateString(first + skip));
		dropped += skip;
	}
	char said[120];
	snprintf(said, sizeof(said), "[%zu bytes before this are in the structured result]\n",
		 dropped);
	cJSON_InsertItemInArray(list, 0, cJSON_CreateString(said));
}

static cJSON *shown_logs(const cJSON *logs)
{
	cJSON *shown = cJSON_CreateObject();
	static const char *const streams[] = { "stdout", "stderr" };
	for (int i = 0; i < 2 && shown; i++) {
		const cJSON *all = cJSON_GetObjectItemCaseSensitive(logs, streams[i]);
		cJSON *tail = cJSON_CreateArray();
		const cJSON *chunk;
		size_t total = 0;
		cJSON_ArrayForEach(chunk, all) total += strlen(chunk->valuestring);
		/* Only chunks that may show are copied; shorten_log cuts the first. */
		size_t skipped = 0;
		cJSON_ArrayForEach(chunk, all)
		{
			size_t length = strlen(chunk->valuestring);
			if (total - skipped - length >= SHOWN_LOG_BYTES && chunk->next) {
				skipped += length;
				continue;
			}
			cJSON_AddItemToArray(tail, cJSON_CreateString(chunk->valuestring));
		}
		shorten_log(tail, skipped);
		cJSON_AddItemToObject(shown, streams[i], tail);
	}
	return shown;
}

/* The text a model reads: the same JSON with each image's base64 replaced
 * by where the picture is, and long logs cut to their end (copied member
 * by member, so a megabyte of log is never copied whole). */
static cJSON *shown_json(const cJSON *out)
{
	cJSON *shown = cJSON_CreateObject();
	for (const cJSON *m = out->child; shown && m; m = m->next)
		cJSON_AddItemToObject(shown, m->string,
				      strcmp(m->string, "logs") == 0 ? shown_logs(m)
								     : cJSON_Duplicate(m, true));
	cJSON *item;
	int n = 0;
	cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(shown, "results"))
	{
		static const char *const images[] = { "png", "jpeg" };
		for (int i = 0; i < 2; i++) {
			cJSON *data = cJSON_GetObjectItemCaseSensitive(item, images[i]);
			if (!cJSON_IsString(data))
				continue;
			char said[120];
			snprintf(said, sizeof(said),
				 "(%zu bytes of base64: image %d of the content)",
				 strlen(data->valuestring), ++n);
			cJSON_ReplaceItemViaPointer(item, data, cJSON_CreateString(said));
		}
	}
	return shown;
}

struct run_stream {
	struct mcp_call *call;
	double sent;
};

static void send_output(void *opaque, const char *stream, const char *text, size_t length)
{
	struct run_stream *s = opaque;
	char *clean = utf8_sanitize(text, length);
	char *message = NULL;
	if (clean && asprintf(&message, "%s: %s", stream, clean) >= 0) {
		s->sent += (double)length;
		mcp_call_progress(s->call, s->sent, -1, message);
	}
	free(message);
	free(clean);
}

static bool client_gave_up(void *opaque)
{
	struct run_stream *s = opaque;
	return mcp_call_cancelled(s->call);
}

void tools_run_code(struct mcp_call *call, const cJSON *args, struct bridge_tools_context *context)
{
	struct bridge_session *s = tools_session(context, call, args);
	if (!s)
		return;
	char **envs = NULL;
	const cJSON *env_object = cJSON_GetObjectItemCaseSensitive(args, "envs");
	if (env_object && !(envs = tools_env_list(call, env_object)))
		return;
	struct run_stream stream = { .call = call };
	struct bridge_code_request request = {
		.code = tools_string(args, "code", NULL),
		.language = tools_string(args, "language", NULL),
		.context = tools_string(args, "context", NULL),
		.envs = (const char *const *)envs,
		.timeout_ms = tools_int(args, "timeout_ms", RUN_CODE_DEFAULT_TIMEOUT_MS),
		.on_output = mcp_call_wants_progress(call) ? send_output : NULL,
		.should_stop = client_gave_up,
		.opaque = &stream,
	};
	struct bridge_code_result result;
	struct error err;
	if (!bridge_code_run(s, &request, &result, &err)) {
		mcp_call_fail(call, "%s", err.message);
	} else {
		int images = 0;
		cJSON *out = run_json(call, &result, &images);
		tools_reply_data_shown(call, out, out ? shown_json(out) : NULL);
		bridge_code_result_finish(&result);
	}
	tools_free_env_list(envs);
}

static cJSON *context_json(const struct bridge_code_context_info *info)
{
	cJSON *out = cJSON_CreateObject();
	if (out && (!cJSON_AddStringToObject(out, "id", info->id) ||
		    !cJSON_AddStringToObject(out, "language", info->language) ||
		    !cJSON_AddStringToObject(out, "cwd", info->cwd))) {
		cJSON_Delete(out);
		return NULL;
	}
	return out;
}

void tools_create_code_context(struct mcp_call *call, const cJSON *args,
			       struct bridge_tools_context *context)
{
	struct bridge_session *s = tools_session(context, call, args);
	if (!s)
		return;
	struct bridge_code_context_info info;
	struct error err;
	if (!bridge_code_context_create(s, tools_string(args, "language", NULL),
					tools_string(args, "cwd", NULL), false, &info, &err))
		mcp_call_fail(call, "%s", err.message);
	else
		tools_reply_data(call, context_json(&info));
}

void tools_list_code_contexts(struct mcp_call *call, const cJSON *args,
			      struct bridge_tools_context *context)
{
	struct bridge_session *s = tools_session(context, call, args);
	if (!s)
		return;
	cJSON *out = cJSON_CreateObject();
	cJSON *list = bridge_code_contexts_describe(s);
	if (!out || !list) {
		cJSON_Delete(out);
		cJSON_Delete(list);
		mcp_call_fail(call, "out of memory");
		return;
	}
	cJSON_AddItemToObject(out, "contexts", list);
	tools_reply_data(call, out);
}

void tools_restart_code_context(struct mcp_call *call, const cJSON *args,
				struct bridge_tools_context *context)
{
	struct bridge_session *s = tools_session(context, call, args);
	if (!s)
		return;
	struct bridge_code_context_info info;
	struct error err;
	if (!bridge_code_context_restart(s, tools_string(args, "context", ""), &info, &err))
		mcp_call_fail(call, "%s", err.message);
	else
		tools_reply_data(call, context_json(&info));
}

void tools_remove_code_context(struct mcp_call *call, const cJSON *args,
			       struct bridge_tools_context *context)
{
	struct bridge_session *s = tools_session(context, call, args);
	if (!s)
		return;
	const char *id = tools_string(args, "context", "");
	struct error err;
	if (!bridge_code_context_remove(s, id, &err))
		mcp_call_fail(call, "%s", err.message);
	else
		mcp_call_text(call, "removed code context %s; its kernel has stopped", id);
}
