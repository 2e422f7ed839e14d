/* SPDX-License-Identifier: MIT */
#include "bridge/tools/exec.h"

#include "bridge/tools/common.h"

#include "bridge/session/session.h"
#include "mcp/server.h"
#include "sandbox/sandbox.h"
#include "sandbox/run.h"
#include "sandbox/process.h"
#include "util/utf8.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXEC_MAX_OUTPUT (1024 * 1024)
#define EXEC_DEFAULT_TIMEOUT_MS 60000

/* exec's streaming: each chunk as a progress notification, cut at UTF-8
 * boundaries so every message is whole text. */
struct exec_stream {
	struct mcp_call *call;
	struct bridge_session *session;
	char pending[2][4]; /* an incomplete UTF-8 sequence per stream */
	size_t pending_len[2];
	uint64_t sent;
};

static void send_chunk(struct exec_stream *e, int index, const char *data, size_t len)
{
	static const char *const names[] = { "stdout", "stderr" };
	char *text = utf8_sanitize(data, len);
	char *message = NULL;
	if (text && asprintf(&message, "%s: %s", names[index], text) >= 0) {
		e->sent += len;
		mcp_call_progress(e->call, (double)e->sent, -1, message);
	}
	free(message);
	free(text);
}

static void on_output(void *context, enum sandbox_stream stream, const char *data, size_t len)
{
	struct exec_stream *e = context;
	int index = stream == SANDBOX_STDOUT ? 0 : 1;
	char *joined = malloc(e->pending_len[index] + len);
	if (!joined)
		return;
	memcpy(joined, e->pending[index], e->pending_len[index]);
	memcpy(joined + e->pending_len[index], data, len);
	size_t total = e->pending_len[index] + len;
	size_t complete = utf8_complete_prefix(joined, total);
	e->pending_len[index] = total - complete;
	memcpy(e->pending[index], joined + complete, e->pending_len[index]);
	if (complete > 0)
		send_chunk(e, index, joined, complete);
	free(joined);
}

static bool should_stop(void *context)
{
	struct exec_stream *e = context;
	return mcp_call_cancelled(e->call) || bridge_session_state(e->session) == BRIDGE_ENDED;
}

static void add_output(cJSON *result, const char *name, const struct sandbox_output *o)
{
	char *text = utf8_sanitize(o->data, o->len);
	cJSON_AddStringToObject(result, name, text ? text : "");
	free(text);
	char key[32];
	snprintf(key, sizeof(key), "%s_bytes", name);
	cJSON_AddNumberToObject(result, key, (double)o->total);
	snprintf(key, sizeof(key), "%s_truncated", name);
	cJSON_AddBoolToObject(result, key, o->total > o->len);
}

static cJSON *exec_result(const struct sandbox_run_result *r)
{
	cJSON *result = cJSON_CreateObject();
	if (!result)
		return NULL;
	add_output(result, "stdout", &r->out);
	add_output(result, "stderr", &r->err);
	if (r->exited)
		cJSON_AddNumberToObject(result, "exit_code", r->exit_code);
	else
		cJSON_AddNullToObject(result, "exit_code");
	if (r->signal)
		cJSON_AddStringToObject(result, "signal",
					sigabbrev_np(r->signal) ? sigabbrev_np(r->signal)
								: "unknown");
	else
		cJSON_AddNullToObject(result, "signal");
	cJSON_AddBoolToObject(result, "timed_out", r->timed_out);
	cJSON_AddNumberToObject(result, "duration_ms", (double)r->duration_ms);
	if (r->out.total > r->out.len || r->err.total > r->err.len)
		cJSON_AddStringToObject(result, "note",
					"output beyond 1 MiB per stream was cut; the end is kept");
	if (r->timed_out)
		cJSON_AddStringToObject(result, "timeout",
					"the command ran past timeout_ms and was killed with "
					"every process it started");
	return result;
}

void tools_exec(struct mcp_call *call, const cJSON *args, struct bridge_tools_context *context)
{
	struct bridge_session *s = NULL;
	struct sandbox *sandbox = tools_session_sandbox(context, call, args, &s);
	if (!sandbox)
		return;
	const char *command = tools_string(args, "command", NULL);
	const cJSON *argv_json = cJSON_GetObjectItemCaseSensitive(args, "argv");
	if (!command == !argv_json) {
		mcp_call_fail(call,
			      "give command (a string for /bin/sh -context) or argv (an array), "
			      "exactly one of them");
		return;
	}
	const char **argv = NULL;
	char **envs = NULL;
	int count = argv_json ? cJSON_GetArraySize(argv_json) : 3;
	if (!(argv = calloc((size_t)count + 1, sizeof(char *)))) {
		mcp_call_fail(call, "out of memory");
		return;
	}
	if (command) {
		argv[0] = "/bin/sh", argv[1] = "-c", argv[2] = command;
	} else {
		int i = 0;
		const cJSON *item;
		cJSON_ArrayForEach(item, argv_json) argv[i++] = item->valuestring;
	}
	const cJSON *env_object = cJSON_GetObjectItemCaseSensitive(args, "envs");
	if (env_object && !(envs = tools_env_list(call, env_object)))
		goto done;
	const char *input = tools_string(args, "stdin", NULL);
	struct exec_stream stream = { .call = call, .session = s };
	struct sandbox_run run = {
		.command = { .name = "exec",
			     .argv = argv,
			     .envs = (const char *const *)envs,
			     .cwd = tools_string(args, "workdir", NULL),
			     .user = tools_sandbox_user(args),
			     .own_process_tree = true },
		.input = input,
		.input_len = input ? strlen(input) : 0,
		.timeout_ms = tools_int(args, "timeout_ms", EXEC_DEFAULT_TIMEOUT_MS),
		.max_output = EXEC_MAX_OUTPUT,
		.on_output = mcp_call_wants_progress(call) ? on_output : NULL,
		.should_stop = should_stop,
		.context = &stream,
	};
	struct sandbox_run_result r;
	struct error err;
	if (!sandbox_run(sandbox, &run, &r, &err)) {
		tools_fail_sandbox_call(call, s, &err);
		goto done;
	}
	for (int k = 0; k < 2; k++)
		if (stream.pending_len[k])
			send_chunk(&stream, k, stream.pending[k], stream.pending_len[k]);
	if (bridge_session_state(s) == BRIDGE_ENDED)
		mcp_call_fail(call, "session %s ended while the command ran; it was killed",
			      bridge_session_id(s));
	else
		tools_reply_data(call, exec_result(&r));
	sandbox_run_result_finish(&r);
done:
	free(argv);
	tools_free_env_list(envs);
}
