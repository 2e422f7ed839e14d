/* Commands and files in a session's sandbox: exec, read_file, write_file,
 * list_files. They work on local sessions only (an attached VNC server is
 * no sandbox), run outside the session's input lane so a long command does
 * not hold up clicks, and stop when the session ends or the client
 * cancels. */
#include "bridge/tools/common.h"

#include "bridge/session/session.h"
#include "bridge/session/resources.h"
#include "mcp/server.h"
#include "sandbox/sandbox.h"
#include "util/base64.h"
#include "util/blob.h"
#include "util/utf8.h"
#include "sandbox/process.h"
#include "sandbox/run.h"
#include "sandbox/files.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXEC_MAX_OUTPUT (1024 * 1024)
/* A reply carries the data twice (structuredContent and its JSON text),
 * base64 makes it 4/3 larger, and the official SDK's stdio client takes
 * messages of at most 10 MiB: 3 MiB per read keeps under that. Writes are
 * bounded by the 4 MiB the daemon accepts per message. */
#define FILE_MAX_PER_CALL (3 * 1024 * 1024)
#define EXEC_DEFAULT_TIMEOUT_MS 60000
#define MAX_ENVS 256
#define MAX_ARGV 1024

/* A sandbox call that failed: when its session ended meanwhile, that is
 * what happened (its programs were killed), whatever the sandbox said. */
static void fail_sandbox_call(struct mcp_call *call, struct bridge_session *s,
			      const struct error *err)
{
	if (bridge_session_state(s) == BRIDGE_ENDED)
		mcp_call_fail(call, "session %s ended while %s ran", bridge_session_id(s),
			      mcp_call_tool_name(call));
	else
		mcp_call_fail(call, "%s", err->message);
}

/* The session's sandbox, or NULL with the call failed saying why. */
static struct sandbox *session_sandbox(struct bridge_tools_context *c, struct mcp_call *call,
				       const cJSON *args, struct bridge_session **session)
{
	struct bridge_session *s = tools_session(c, call, args);
	if (!s)
		return NULL;
	*session = s;
	struct sandbox *sandbox = bridge_session_sandbox(s);
	if (!sandbox) {
		mcp_call_fail(call,
			      "%s works in sandboxes, and session %s is not one: it is attached to a "
			      "VNC server the bridge does not run (or has not started). Create a "
			      "local session (template desktop or bare) for commands and files.",
			      mcp_call_tool_name(call), bridge_session_id(s));
		return NULL;
	}
	struct error err;
	enum bridge_session_state state = bridge_session_state(s);
	if (state == BRIDGE_ENDED || state == BRIDGE_FAILED) {
		bridge_session_usable(s, &err);
		mcp_call_fail(call, "%s", err.message);
		return NULL;
	}
	if (bridge_session_paused(s)) {
		mcp_call_fail(call,
			      "session %s is paused: its processes are frozen, so %s cannot run; "
			      "resume_session first",
			      bridge_session_id(s), mcp_call_tool_name(call));
		return NULL;
	}
	return sandbox;
}

static enum sandbox_user user_of(const cJSON *args)
{
	return strcmp(tools_string(args, "user", "user"), "root") == 0 ? SANDBOX_AS_ROOT
								     : SANDBOX_AS_USER;
}

char **tools_env_list(struct mcp_call *call, const cJSON *object)
{
	int count = cJSON_GetArraySize(object);
	if (count > MAX_ENVS) {
		mcp_call_fail(call, "envs takes at most %d variables", MAX_ENVS);
		return NULL;
	}
	char **list = calloc((size_t)count + 1, sizeof(char *));
	if (!list) {
		mcp_call_fail(call, "out of memory");
		return NULL;
	}
	int n = 0;
	const cJSON *item;
	cJSON_ArrayForEach(item, object)
	{
		const char *name = item->string;
		bool valid = name[0] && !strchr("0123456789", name[0]);
		for (const char *p = name; *p && valid; p++)
			valid = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
				(*p >= '0' && *p <= '9') || *p == '_';
		if (!valid || !cJSON_IsString(item)) {
			mcp_call_fail(call,
				      "envs must map names (letters, digits, _) to strings; '%.64s' "
				      "does not",
				      name);
			goto fail;
		}
		if (asprintf(&list[n], "%s=%s", name, item->valuestring) < 0) {
			list[n] = NULL;
			mcp_call_fail(call, "out of memory");
			goto fail;
		}
		n++;
	}
	return list;
fail:
	for (int i = 0; i < n; i++)
		free(list[i]);
	free(list);
	return NULL;
}

void tools_free_env_list(char **list)
{
	for (size_t i = 0; list && list[i]; i++)
		free(list[i]);
	free(list);
}

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
		cJSON_AddStringToObject(result, "signal", sigabbrev_np(r->signal)
								  ? sigabbrev_np(r->signal)
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

static void exec_tool(struct mcp_call *call, const cJSON *args, void *userdata)
{
	struct bridge_session *s = NULL;
	struct sandbox *sandbox = session_sandbox(userdata, call, args, &s);
	if (!sandbox)
		return;
	const char *command = tools_string(args, "command", NULL);
	const cJSON *argv_json = cJSON_GetObjectItemCaseSensitive(args, "argv");
	if (!command == !argv_json) {
		mcp_call_fail(call, "give command (a string for /bin/sh -c) or argv (an array), "
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
		cJSON_ArrayForEach(item, argv_json)
			argv[i++] = item->valuestring;
	}
	const cJSON *env_object = cJSON_GetObjectItemCaseSensitive(args, "envs");
	if (env_object && !(envs = tools_env_list(call, env_object)))
		goto done;
	const char *input = tools_string(args, "stdin", NULL);
	struct exec_stream stream = { .call = call, .session = s };
	struct sandbox_run run = {
		.command = { .name = "exec", .argv = argv, .envs = (const char *const *)envs,
			     .cwd = tools_string(args, "workdir", NULL), .user = user_of(args),
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
		fail_sandbox_call(call, s, &err);
		goto done;
	}
	for (int k = 0; k < 2; k++)
		if (stream.pending_len[k])
			send_chunk(&stream, k, stream.pending[k], stream.pending_len[k]);
	if (bridge_session_state(s) == BRIDGE_ENDED)
		mcp_call_fail(call, "session %s ended while the command ran; it was killed",
			      bridge_session_id(s));
	else
		mcp_call_structured(call, exec_result(&r));
	sandbox_run_result_finish(&r);
done:
	free(argv);
	tools_free_env_list(envs);
}

static void read_file_tool(struct mcp_call *call, const cJSON *args, void *userdata)
{
	struct bridge_session *s = NULL;
	struct sandbox *sandbox = session_sandbox(userdata, call, args, &s);
	if (!sandbox)
		return;
	const char *path = tools_string(args, "path", "");
	const cJSON *offset_json = cJSON_GetObjectItemCaseSensitive(args, "offset");
	const cJSON *length_json = cJSON_GetObjectItemCaseSensitive(args, "length");
	uint64_t offset = offset_json ? (uint64_t)offset_json->valuedouble : 0;
	uint64_t length = length_json ? (uint64_t)length_json->valuedouble : FILE_MAX_PER_CALL;
	struct sandbox_file_data file;
	struct error err;
	if (!sandbox_read_file(sandbox, user_of(args), path, offset, length, &file, &err)) {
		fail_sandbox_call(call, s, &err);
		return;
	}
	if (!length_json && file.sized && file.size > offset &&
	    file.size - offset > FILE_MAX_PER_CALL) {
		mcp_call_fail(call,
			      "%s is %llu bytes; a call reads at most %d MiB: give offset and "
			      "length to read it in parts",
			      path, (unsigned long long)file.size, FILE_MAX_PER_CALL / (1024 * 1024));
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
	mcp_call_structured(call, result);
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

static void write_file_tool(struct mcp_call *call, const cJSON *args, void *userdata)
{
	struct bridge_session *s = NULL;
	struct sandbox *sandbox = session_sandbox(userdata, call, args, &s);
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
		mcp_call_fail(call, "mode '%.16s' is not octal permissions such as \"644\" or "
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
	bool ok = sandbox_write_file(sandbox, user_of(args), path, data ? (const void *)bytes : text,
				     len, mode, &err);
	free(bytes);
	if (!ok) {
		fail_sandbox_call(call, s, &err);
		return;
	}
	cJSON *result = cJSON_CreateObject();
	cJSON_AddStringToObject(result, "path", path);
	cJSON_AddNumberToObject(result, "bytes", (double)len);
	mcp_call_structured(call, result);
}

static const char *type_name(char type)
{
	switch (type) {
	case 'f': return "file";
	case 'd': return "directory";
	case 'l': return "symlink";
	case 'p': return "fifo";
	case 's': return "socket";
	case 'c': return "char_device";
	case 'b': return "block_device";
	default: return "unknown";
	}
}

static void list_files_tool(struct mcp_call *call, const cJSON *args, void *userdata)
{
	struct bridge_session *s = NULL;
	struct sandbox *sandbox = session_sandbox(userdata, call, args, &s);
	if (!sandbox)
		return;
	const char *path = tools_string(args, "path", sandbox_inside_home(sandbox));
	struct sandbox_dir_entry *entries;
	size_t count;
	bool truncated;
	struct error err;
	if (!sandbox_list_files(sandbox, user_of(args), path, &entries, &count, &truncated, &err)) {
		fail_sandbox_call(call, s, &err);
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
	mcp_call_structured(call, result);
}

#define USER_PROPERTY                                                                       \
	"\"user\":{\"type\":\"string\",\"enum\":[\"user\",\"root\"],\"description\":\"user "  \
	"(the default, uid 1000) or root, which is root inside the sandbox only.\"}"
#define PATH_PROPERTY                                                                       \
	"\"path\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":4096,\"description\":"  \
	"\"A path in the sandbox; relative paths start at HOME (/home/user).\"}"

static const struct mcp_tool sandbox_tools[] = {
	{
		.name = "exec",
		.title = "Run a command",
		.description =
			"Run a command in the session's sandbox and return its stdout, stderr and "
			"exit code (a non-zero exit is a normal result). command runs with "
			"/bin/sh -c; argv runs a program directly. Output beyond 1 MiB per stream "
			"is cut, keeping the end. Output streams as progress notifications when "
			"the request has a progressToken. At timeout_ms (default 60000) the "
			"command is killed with everything it started; programs it leaves in "
			"the background end with it too (use launch for those). Local sessions "
			"only.",
		.input_schema =
			"{\"type\":\"object\",\"properties\":{"
			"\"command\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":65536},"
			"\"argv\":{\"type\":\"array\",\"minItems\":1,\"maxItems\":1024,\"items\":"
			"{\"type\":\"string\"}},"
			"\"envs\":{\"type\":\"object\",\"description\":\"Environment variables "
			"(strings) over the session's.\"},"
			"\"workdir\":{\"type\":\"string\",\"maxLength\":4096,\"description\":"
			"\"Working directory; default HOME.\"},"
			USER_PROPERTY ","
			"\"stdin\":{\"type\":\"string\",\"maxLength\":1048576},"
			"\"timeout_ms\":{\"type\":\"integer\",\"minimum\":1000,\"maximum\":600000},"
			SESSION_PROPERTY "}}",
		.output_schema =
			"{\"type\":\"object\",\"properties\":{"
			"\"stdout\":{\"type\":\"string\"},\"stderr\":{\"type\":\"string\"},"
			"\"stdout_bytes\":{\"type\":\"integer\"},\"stderr_bytes\":{\"type\":\"integer\"},"
			"\"stdout_truncated\":{\"type\":\"boolean\"},"
			"\"stderr_truncated\":{\"type\":\"boolean\"},"
			"\"exit_code\":{\"type\":[\"integer\",\"null\"]},"
			"\"signal\":{\"type\":[\"string\",\"null\"]},"
			"\"timed_out\":{\"type\":\"boolean\"},\"duration_ms\":{\"type\":\"integer\"},"
			"\"note\":{\"type\":\"string\"},\"timeout\":{\"type\":\"string\"}},"
			"\"required\":[\"stdout\",\"stderr\",\"exit_code\",\"signal\",\"timed_out\","
			"\"duration_ms\"]}",
		.handler = exec_tool,
	},
	{
		.name = "read_file",
		.title = "Read a file",
		.description = "Read a file in the session's sandbox: UTF-8 text comes back as "
			       "text, anything else as base64 data, with the file's size. At most "
			       "3 MiB per call; use offset and length for larger files. Files the "
			       "kernel reports as empty (most of /proc and /sys) are read to their "
			       "end, and their size is where the read ended (offset + length). "
			       "Local sessions only.",
		.input_schema =
			"{\"type\":\"object\",\"properties\":{" PATH_PROPERTY ","
			"\"offset\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":9007199254740991},"
			"\"length\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":3145728},"
			USER_PROPERTY "," SESSION_PROPERTY "},\"required\":[\"path\"]}",
		.output_schema =
			"{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},"
			"\"size\":{\"type\":\"integer\"},\"offset\":{\"type\":\"integer\"},"
			"\"length\":{\"type\":\"integer\"},\"encoding\":{\"type\":\"string\","
			"\"enum\":[\"utf-8\",\"base64\"]},\"text\":{\"type\":\"string\"},"
			"\"data\":{\"type\":\"string\"}},\"required\":[\"path\",\"size\",\"offset\","
			"\"length\",\"encoding\"]}",
		.handler = read_file_tool,
		.read_only = true,
	},
	{
		.name = "write_file",
		.title = "Write a file",
		.description = "Write a file in the session's sandbox, creating its parent "
			       "directories: text (UTF-8) or data (base64, written exactly), with "
			       "mode (octal, default \"644\"). It replaces the file. A request must "
			       "fit the 4 MiB message limit: about 3 MB of text or base64 data. "
			       "Local sessions only.",
		.input_schema =
			"{\"type\":\"object\",\"properties\":{" PATH_PROPERTY ","
			"\"text\":{\"type\":\"string\"},\"data\":{\"type\":\"string\"},"
			"\"mode\":{\"type\":\"string\",\"maxLength\":5},"
			USER_PROPERTY "," SESSION_PROPERTY "},\"required\":[\"path\"]}",
		.output_schema = "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},"
				 "\"bytes\":{\"type\":\"integer\"}},\"required\":[\"path\",\"bytes\"]}",
		.handler = write_file_tool,
	},
	{
		.name = "list_files",
		.title = "List a directory",
		.description = "The entries of a directory in the session's sandbox (default "
			       "HOME) with type, size and mtime (seconds since 1970), at most "
			       "10000. Local sessions only.",
		.input_schema =
			"{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\","
			"\"minLength\":1,\"maxLength\":4096},"
			USER_PROPERTY "," SESSION_PROPERTY "}}",
		.output_schema =
			"{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},"
			"\"entries\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":"
			"{\"name\":{\"type\":\"string\"},\"type\":{\"type\":\"string\"},\"size\":"
			"{\"type\":\"integer\"},\"mtime\":{\"type\":\"integer\"}}}},"
			"\"truncated\":{\"type\":\"boolean\"}},\"required\":[\"path\",\"entries\","
			"\"truncated\"]}",
		.handler = list_files_tool,
		.read_only = true,
	},
};

bool tools_register_sandbox(struct mcp_server *server, struct bridge_tools_context *context)
{
	return tools_register(server, context, sandbox_tools,
			      sizeof(sandbox_tools) / sizeof(sandbox_tools[0]));
}
