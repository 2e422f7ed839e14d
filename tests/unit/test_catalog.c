/* SPDX-License-Identifier: MIT */
/* The tool catalog: every schema is a JSON Schema object, every embedded
 * file belongs to a tool, names follow the MCP rule, tools that act on a
 * session declare it, the pieces the schema files repeat agree, the input
 * lane and the quick tools are the ones they were, and registering the
 * catalog lists every tool. Handlers that need no desktop run through the
 * catalog's dispatcher against a real registry and real volumes, and the
 * dispatcher fails a call that answers with data its tool does not
 * declare (or declares data and gives none). */
#include "test.h"

#include "bridge/context.h"
#include "bridge/session/registry.h"
#include "bridge/session/session.h"
#include "bridge/tools/catalog.h"
#include "bridge/tools/tool_schemas.h"
#include "mcp/server.h"
#include "mcp/workers.h"
#include "sandbox/volume.h"
#include "vnc/target.h"

#include <cjson/cJSON.h>
#include <ftw.h>
#include <pthread.h>
#include <stdbool.h>
#include <time.h>
#include <unistd.h>

/* What the MCP server sent, as the capture send function got it. */
#define MAX_MESSAGES 256
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t arrived = PTHREAD_COND_INITIALIZER;
static char *messages[MAX_MESSAGES];
static int message_count;

static void capture(void *context, const struct iovec *parts, int count)
{
	(void)context;
	char *json = test_join_parts(parts, count);
	pthread_mutex_lock(&lock);
	if (message_count < MAX_MESSAGES)
		messages[message_count++] = json;
	else
		free(json);
	pthread_cond_broadcast(&arrived);
	pthread_mutex_unlock(&lock);
}

/* The reply to request id (a string id), parsed, or NULL after 10 s. */
static cJSON *wait_reply(const char *id)
{
	char needle[96];
	snprintf(needle, sizeof(needle), "\"id\":\"%s\"", id);
	struct timespec deadline;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 10;
	cJSON *found = NULL;
	pthread_mutex_lock(&lock);
	while (!found) {
		for (int i = 0; i < message_count && !found; i++)
			if (strstr(messages[i], needle))
				found = cJSON_Parse(messages[i]);
		if (!found && pthread_cond_timedwait(&arrived, &lock, &deadline) != 0)
			break;
	}
	pthread_mutex_unlock(&lock);
	return found;
}

static void forget_messages(void)
{
	pthread_mutex_lock(&lock);
	for (int i = 0; i < message_count; i++)
		free(messages[i]);
	message_count = 0;
	pthread_mutex_unlock(&lock);
}

static struct mcp_server *make_server(void)
{
	return mcp_server_create("catalog-test", "1", NULL,
				 &(struct mcp_workers_limits){ .threads = 2,
							       .long_per_owner = 2,
							       .long_per_group = 2,
							       .quick_per_owner = 2 });
}

static void send_text(struct mcp_peer *peer, const char *text)
{
	mcp_peer_handle(peer, text, strlen(text));
}

/* Calls a tool and returns the whole reply (the caller deletes it). */
static cJSON *call_tool(struct mcp_peer *peer, const char *id, const char *name,
			const char *arguments)
{
	char request[1024];
	snprintf(request, sizeof(request),
		 "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"method\":\"tools/call\",\"params\":"
		 "{\"name\":\"%s\",\"arguments\":%s}}",
		 id, name, arguments);
	send_text(peer, request);
	return wait_reply(id);
}

static const cJSON *result_of(const cJSON *reply)
{
	return cJSON_GetObjectItemCaseSensitive(reply, "result");
}

static bool is_error(const cJSON *reply)
{
	return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(result_of(reply), "isError"));
}

static const cJSON *structured(const cJSON *reply)
{
	return cJSON_GetObjectItemCaseSensitive(result_of(reply), "structuredContent");
}

/* The text of the reply's first content block, or "". */
static const char *first_text(const cJSON *reply)
{
	const cJSON *content = cJSON_GetObjectItemCaseSensitive(result_of(reply), "content");
	const cJSON *text = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(content, 0),
							     "text");
	return cJSON_IsString(text) ? text->valuestring : "";
}

static const char *string_of(const cJSON *object, const char *key)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, key);
	return cJSON_IsString(item) ? item->valuestring : NULL;
}

static double number_of(const cJSON *object, const char *key)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, key);
	return cJSON_IsNumber(item) ? item->valuedouble : -1;
}

static const struct bridge_tool *tool_named(const char *name)
{
	size_t count;
	const struct bridge_tool *tools = bridge_tools_catalog(&count);
	for (size_t i = 0; i < count; i++)
		if (strcmp(tools[i].name, name) == 0)
			return &tools[i];
	return NULL;
}

/* One of a tool's schemas, parsed (the caller deletes it), or NULL. */
static cJSON *schema_of(const char *name, bool output)
{
	const struct bridge_tool *tool = tool_named(name);
	const char *text = !tool ? NULL : output ? tool->output_schema : tool->input_schema;
	return text ? cJSON_Parse(text) : NULL;
}

static const cJSON *property(const cJSON *schema, const char *name)
{
	return cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(schema, "properties"), name);
}

static bool lists(const cJSON *array, const char *name)
{
	const cJSON *item;
	cJSON_ArrayForEach(item, array) if (cJSON_IsString(item) &&
					    strcmp(item->valuestring, name) == 0) return true;
	return false;
}

/* The tools whose flag is set, in catalog order, joined by spaces. */
static void tools_with(bool (*flag)(const struct bridge_tool *), char *out, size_t size)
{
	size_t count, used = 0;
	const struct bridge_tool *tools = bridge_tools_catalog(&count);
	out[0] = '\0';
	for (size_t i = 0; i < count; i++)
		if (flag(&tools[i]))
			used += (size_t)snprintf(out + used, size - used, "%s%s", used ? " " : "",
						 tools[i].name);
}

static bool is_ordered(const struct bridge_tool *tool)
{
	return tool->ordered;
}
static bool is_quick(const struct bridge_tool *tool)
{
	return tool->quick;
}

static void every_schema_is_an_object_schema(void)
{
	size_t count;
	const struct bridge_tool *tools = bridge_tools_catalog(&count);
	ASSERT(count > 0);
	for (size_t i = 0; i < count; i++) {
		for (int output = 0; output < 2; output++) {
			const char *text = output ? tools[i].output_schema : tools[i].input_schema;
			if (!text && output)
				continue;
			cJSON *schema = text ? cJSON_Parse(text) : NULL;
			const cJSON *type = cJSON_GetObjectItemCaseSensitive(schema, "type");
			bool ok = cJSON_IsObject(schema) && cJSON_IsString(type) &&
				  strcmp(type->valuestring, "object") == 0 &&
				  cJSON_IsObject(
					  cJSON_GetObjectItemCaseSensitive(schema, "properties"));
			cJSON_Delete(schema);
			if (!ok)
				FAIL_AT("%s's %s schema is not an object schema with properties: %s",
					tools[i].name, output ? "output" : "input",
					text ? text : "NULL");
		}
	}
}

static void every_embedded_file_belongs_to_its_tool(void)
{
	size_t count, schemas = 0;
	const struct bridge_tool *tools = bridge_tools_catalog(&count);
	for (size_t i = 0; i < count; i++)
		schemas += 1 + (tools[i].output_schema != NULL);
	ASSERT_EQ(tools_schema_file_count, schemas);
	for (size_t i = 0; i < tools_schema_file_count; i++) {
		const struct tools_schema_file *file = &tools_schema_files[i];
		char name[128];
		snprintf(name, sizeof(name), "%s", file->name);
		char *kind = strchr(name, '.');
		ASSERT(kind);
		*kind++ = '\0';
		const struct bridge_tool *tool = tool_named(name);
		if (!tool)
			FAIL_AT("%s is embedded but no tool is named %s", file->name, name);
		const char *used = strncmp(kind, "input.", 6) == 0 ? tool->input_schema
								   : tool->output_schema;
		if (used != file->text)
			FAIL_AT("%s is embedded but %s does not use it", file->name, name);
	}
}

static void names_are_unique_and_follow_the_mcp_rule(void)
{
	size_t count;
	const struct bridge_tool *tools = bridge_tools_catalog(&count);
	for (size_t i = 0; i < count; i++) {
		/* 1 to 128 of A-Z a-z 0-9 _ - . (MCP 2025-11-25, tool names). */
		size_t len = strlen(tools[i].name);
		ASSERT(len >= 1 && len <= 128);
		if (strspn(tools[i].name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
					  "0123456789_-.") != len)
			FAIL_AT("tool name \"%s\" has a character MCP does not allow",
				tools[i].name);
		for (size_t j = 0; j < i; j++)
			if (strcmp(tools[i].name, tools[j].name) == 0)
				FAIL_AT("two tools are named %s", tools[i].name);
		ASSERT(tools[i].title && tools[i].title[0]);
		ASSERT(tools[i].description && tools[i].description[0]);
		ASSERT(tools[i].handler);
		if (tools[i].ordered && tools[i].quick)
			FAIL_AT("%s is both in the input lane and quick", tools[i].name);
	}
}

static void tools_that_act_on_a_session_declare_it(void)
{
	size_t count;
	const struct bridge_tool *tools = bridge_tools_catalog(&count);
	for (size_t i = 0; i < count; i++) {
		cJSON *schema = cJSON_Parse(tools[i].input_schema);
		const cJSON *session = property(schema, "session");
		const cJSON *type = cJSON_GetObjectItemCaseSensitive(session, "type");
		bool declared = cJSON_IsString(type) && strcmp(type->valuestring, "string") == 0;
		bool present = session != NULL;
		cJSON_Delete(schema);
		if (!tools[i].sessionless && !declared)
			FAIL_AT("%s acts on a session but its input schema has no string session",
				tools[i].name);
		if (tools[i].sessionless && present)
			FAIL_AT("%s is sessionless but takes a session argument", tools[i].name);
	}
}

/* Every tool's schema has the same piece as the first one listed. */
static void assert_same_piece(const char *const *names, size_t count, bool output,
			      const char *piece)
{
	cJSON *first = schema_of(names[0], output);
	const cJSON *expected = piece ? property(first, piece) : first;
	ASSERT(expected);
	for (size_t i = 1; i < count; i++) {
		cJSON *schema = schema_of(names[i], output);
		const cJSON *got = piece ? property(schema, piece) : schema;
		bool same = got && cJSON_Compare(expected, got, true);
		cJSON_Delete(schema);
		if (!same) {
			cJSON_Delete(first);
			FAIL_AT("%s's %s differs from %s's", names[i], piece ? piece : "schema",
				names[0]);
		}
	}
	cJSON_Delete(first);
}

static void repeated_pieces_agree(void)
{
	/* The optional session argument, and the required one. */
	size_t count;
	const struct bridge_tool *tools = bridge_tools_catalog(&count);
	const char *optional[64], *required[64];
	size_t optional_count = 0, required_count = 0;
	for (size_t i = 0; i < count && i < 64; i++) {
		cJSON *schema = cJSON_Parse(tools[i].input_schema);
		if (property(schema, "session")) {
			if (lists(cJSON_GetObjectItemCaseSensitive(schema, "required"), "session"))
				required[required_count++] = tools[i].name;
			else
				optional[optional_count++] = tools[i].name;
		}
		cJSON_Delete(schema);
	}
	ASSERT(optional_count > 1 && required_count > 1);
	assert_same_piece(optional, optional_count, false, "session");
	assert_same_piece(required, required_count, false, "session");

	static const char *const acting[] = { "click",    "move_mouse", "mouse_down", "mouse_up",
					      "drag",     "scroll",     "type",       "press",
					      "hold_key", "wait" };
	assert_same_piece(acting, sizeof(acting) / sizeof(acting[0]), false, "screenshot");
	static const char *const starting[] = { "open_url", "launch" };
	assert_same_piece(starting, 2, false, "screenshot");

	/* The session description, alone and as each item of list_sessions. */
	static const char *const described[] = { "session_info", "create_session", "set_timeout",
						 "pause_session", "resume_session" };
	assert_same_piece(described, sizeof(described) / sizeof(described[0]), true, NULL);
	cJSON *info = schema_of("session_info", true);
	cJSON *list = schema_of("list_sessions", true);
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(property(list, "sessions"), "items");
	bool same = info && item && cJSON_Compare(info, item, true);
	cJSON_Delete(info);
	cJSON_Delete(list);
	if (!same)
		FAIL_AT("list_sessions' items differ from session_info's output schema");
}

static void the_input_lane_and_quick_tools_are_unchanged(void)
{
	char names[1024];
	tools_with(is_ordered, names, sizeof(names));
	ASSERT_STR_EQ(names, "click move_mouse mouse_down mouse_up drag scroll type press hold_key "
			     "wait open_url launch clipboard_set computer");
	tools_with(is_quick, names, sizeof(names));
	ASSERT_STR_EQ(names,
		      "screenshot cursor_position screen_size list_sessions session_info "
		      "set_timeout pause_session resume_session start_stream stop_stream "
		      "kill_session list_code_contexts remove_code_context expose_port get_host "
		      "unexpose_port");
}

static void registering_lists_every_tool(void)
{
	forget_messages();
	struct bridge_tools_context context = { .registry = NULL };
	struct mcp_server *server = make_server();
	ASSERT(server);
	ASSERT(bridge_tools_register(server, &context));
	struct mcp_peer *peer = mcp_peer_create(server, capture, NULL);
	send_text(peer, "{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":\"initialize\",\"params\":"
			"{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
			"\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
	cJSON_Delete(wait_reply("init"));
	send_text(peer, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
	send_text(peer, "{\"jsonrpc\":\"2.0\",\"id\":\"list\",\"method\":\"tools/list\"}");
	cJSON *reply = wait_reply("list");
	const cJSON *listed = cJSON_GetObjectItemCaseSensitive(result_of(reply), "tools");
	size_t count;
	const struct bridge_tool *tools = bridge_tools_catalog(&count);
	int listed_count = cJSON_GetArraySize(listed);
	if (listed_count != (int)count) {
		cJSON_Delete(reply);
		mcp_peer_close(peer);
		mcp_server_destroy(server);
		FAIL_AT("tools/list has %d tools, the catalog %zu", listed_count, count);
	}
	for (size_t i = 0; i < count; i++) {
		const cJSON *entry = cJSON_GetArrayItem(listed, (int)i);
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(entry, "name");
		const cJSON *title = cJSON_GetObjectItemCaseSensitive(entry, "title");
		const cJSON *description = cJSON_GetObjectItemCaseSensitive(entry, "description");
		cJSON *input = cJSON_Parse(tools[i].input_schema);
		cJSON *output = tools[i].output_schema ? cJSON_Parse(tools[i].output_schema) : NULL;
		const cJSON *listed_output = cJSON_GetObjectItemCaseSensitive(entry,
									      "outputSchema");
		const cJSON *read_only = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(entry, "annotations"), "readOnlyHint");
		bool same = cJSON_IsString(name) && strcmp(name->valuestring, tools[i].name) == 0 &&
			    cJSON_IsString(title) &&
			    strcmp(title->valuestring, tools[i].title) == 0 &&
			    cJSON_IsString(description) &&
			    strcmp(description->valuestring, tools[i].description) == 0 &&
			    cJSON_Compare(cJSON_GetObjectItemCaseSensitive(entry, "inputSchema"),
					  input, true) &&
			    (output ? cJSON_Compare(listed_output, output, true)
				    : !listed_output) &&
			    cJSON_IsBool(read_only) &&
			    cJSON_IsTrue(read_only) == tools[i].read_only;
		cJSON_Delete(input);
		cJSON_Delete(output);
		if (!same) {
			char *text = cJSON_PrintUnformatted(entry);
			fprintf(stderr, "listed as %s\n", text ? text : "(null)");
			free(text);
			test_failures++;
			fprintf(stderr, "%s:%d: tools/list entry %zu is not catalog entry %s\n",
				__FILE__, __LINE__, i, tools[i].name);
			break;
		}
	}
	cJSON_Delete(reply);
	mcp_peer_close(peer);
	mcp_server_destroy(server);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static void wake_nobody(void *context)
{
	(void)context;
}

/* A session that was made and listed but never connected: real in the
 * registry, and no desktop for tools that need one. */
static bool add_unconnected_session(struct bridge_registry *registry, const char *id)
{
	struct vnc_target target;
	struct error err;
	if (!vnc_target_parse("unix:///nonexistent/lizard-catalog-test.sock", &target, &err))
		return false;
	struct bridge_session_spec spec = { .kind = BRIDGE_ATTACHED, .target = &target };
	struct bridge_session *s = bridge_session_create(id, &spec, &err);
	vnc_target_finish(&target);
	bool added = s && bridge_registry_add(registry, s, &err);
	bridge_session_unref(s);
	return added;
}

/* Runs each handler that needs no desktop through the catalog, so the
 * dispatcher checks its answer against its outputSchema. */
static void handlers_answer_as_their_schemas_say(void)
{
	forget_messages();
	char dir[] = "/tmp/lizard-catalog-test-XXXXXX";
	ASSERT(mkdtemp(dir));
	struct error err;
	struct bridge_viewer_links links = { .base_url = "http://127.0.0.1:7070",
					     .wake = wake_nobody };
	struct bridge_tools_context context = { .registry = bridge_registry_create(),
						.volumes = sandbox_volumes_open(dir, &err),
						.viewer_links = &links };
	struct mcp_server *server = make_server();
	struct mcp_peer *peer = server ? mcp_peer_create(server, capture, NULL) : NULL;
	bool ready = context.registry && context.volumes && peer &&
		     bridge_tools_register(server, &context) &&
		     add_unconnected_session(context.registry, "s-catalog");
	cJSON *r[12] = { 0 };
	if (ready) {
		r[0] = call_tool(peer, "list", "list_sessions", "{}");
		r[1] = call_tool(peer, "info", "session_info", "{\"session\":\"s-catalog\"}");
		r[2] = call_tool(peer, "timeout", "set_timeout",
				 "{\"session\":\"s-catalog\",\"timeout_ms\":60000}");
		r[3] = call_tool(peer, "stream", "start_stream", "{\"session\":\"s-catalog\"}");
		r[4] = call_tool(peer, "unstream", "stop_stream", "{\"session\":\"s-catalog\"}");
		r[5] = call_tool(peer, "pointer", "cursor_position", "{\"session\":\"s-catalog\"}");
		r[6] = call_tool(peer, "kill", "kill_session", "{\"session\":\"s-catalog\"}");
		r[7] = call_tool(peer, "none", "list_sessions", "{}");
		r[8] = call_tool(peer, "volume", "create_volume",
				 "{\"name\":\"catalog-test\",\"size\":\"unlimited\"}");
		r[9] = call_tool(peer, "volumes", "list_volumes", "{}");
		r[10] = call_tool(peer, "unvolume", "delete_volume", "{\"name\":\"catalog-test\"}");
		r[11] = call_tool(peer, "gone", "session_info", "{\"session\":\"s-catalog\"}");
	}
	mcp_peer_close(peer);
	mcp_server_destroy(server);
	bridge_registry_destroy(context.registry);
	sandbox_volumes_close(context.volumes);
	nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	if (!ready) {
		for (size_t i = 0; i < 12; i++)
			cJSON_Delete(r[i]);
		FAIL_AT("could not set up registry, volumes in %s and the server", dir);
	}

	const cJSON *sessions = cJSON_GetObjectItemCaseSensitive(structured(r[0]), "sessions");
	ASSERT(!is_error(r[0]) && cJSON_GetArraySize(sessions) == 1);
	ASSERT_STR_EQ(string_of(cJSON_GetArrayItem(sessions, 0), "session"), "s-catalog");
	ASSERT(!is_error(r[1]));
	ASSERT_STR_EQ(string_of(structured(r[1]), "state"), "starting");
	ASSERT(!is_error(r[2]));
	ASSERT_EQ(number_of(structured(r[2]), "timeout_ms"), 60000);
	ASSERT(!is_error(r[3]));
	ASSERT_CONTAINS(string_of(structured(r[3]), "url"),
			"http://127.0.0.1:7070/view/s-catalog#token=");
	/* Tools that declare no data answer with text only. */
	ASSERT(!is_error(r[4]) && !structured(r[4]));
	ASSERT_CONTAINS(first_text(r[4]), "no longer work");
	/* A session that never connected is no place to point: a plain error. */
	ASSERT(is_error(r[5]) && !structured(r[5]));
	ASSERT(!strstr(first_text(r[5]), "internal error"));
	ASSERT(!is_error(r[6]) && !structured(r[6]));
	ASSERT_CONTAINS(first_text(r[6]), "Session s-catalog is ended");
	ASSERT(!is_error(r[7]));
	ASSERT_EQ(
		cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(structured(r[7]), "sessions")),
		0);
	ASSERT(!is_error(r[8]));
	ASSERT_STR_EQ(string_of(structured(r[8]), "name"), "catalog-test");
	ASSERT(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(structured(r[8]), "limit_bytes")));
	const cJSON *volumes = cJSON_GetObjectItemCaseSensitive(structured(r[9]), "volumes");
	ASSERT(!is_error(r[9]) && cJSON_GetArraySize(volumes) == 1);
	ASSERT_STR_EQ(string_of(cJSON_GetArrayItem(volumes, 0), "name"), "catalog-test");
	ASSERT(!is_error(r[10]));
	ASSERT_STR_EQ(string_of(structured(r[10]), "name"), "catalog-test");
	ASSERT(is_error(r[11]) && !structured(r[11]));
	for (size_t i = 0; i < 12; i++)
		cJSON_Delete(r[i]);
}

static void answers_data(struct mcp_call *call, const cJSON *args,
			 struct bridge_tools_context *context)
{
	(void)args, (void)context;
	cJSON *data = cJSON_CreateObject();
	cJSON_AddNumberToObject(data, "answer", 42);
	tools_reply_data(call, data);
}

static void answers_text(struct mcp_call *call, const cJSON *args,
			 struct bridge_tools_context *context)
{
	(void)args, (void)context;
	mcp_call_text(call, "only words");
}

static void the_dispatcher_holds_tools_to_their_output_schema(void)
{
	forget_messages();
	static const struct bridge_tool table[] = {
		{ .name = "data_without_schema",
		  .title = "t",
		  .description = "d",
		  .input_schema = "{\"type\":\"object\",\"properties\":{}}",
		  .handler = answers_data,
		  .sessionless = true },
		{ .name = "schema_without_data",
		  .title = "t",
		  .description = "d",
		  .input_schema = "{\"type\":\"object\",\"properties\":{}}",
		  .output_schema = "{\"type\":\"object\",\"properties\":{}}",
		  .handler = answers_text,
		  .sessionless = true },
		{ .name = "data_with_schema",
		  .title = "t",
		  .description = "d",
		  .input_schema = "{\"type\":\"object\",\"properties\":{}}",
		  .output_schema = "{\"type\":\"object\",\"properties\":{}}",
		  .handler = answers_data,
		  .sessionless = true },
	};
	struct bridge_tools_context context = { .registry = NULL };
	struct mcp_server *server = make_server();
	ASSERT(server);
	ASSERT(bridge_tools_register_table(server, &context, table, 3));
	struct mcp_peer *peer = mcp_peer_create(server, capture, NULL);
	cJSON *undeclared = call_tool(peer, "a", "data_without_schema", "{}");
	cJSON *missing = call_tool(peer, "b", "schema_without_data", "{}");
	cJSON *kept = call_tool(peer, "c", "data_with_schema", "{}");
	mcp_peer_close(peer);
	mcp_server_destroy(server);

	ASSERT(is_error(undeclared) && !structured(undeclared));
	char expected[160];
	snprintf(expected, sizeof(expected),
		 "internal error: tool data_without_schema answered "
		 "with data but declares no outputSchema");
	const cJSON *content = cJSON_GetObjectItemCaseSensitive(result_of(undeclared), "content");
	const cJSON *last = cJSON_GetArrayItem(content, cJSON_GetArraySize(content) - 1);
	ASSERT_STR_EQ(string_of(last, "text"), expected);
	ASSERT(is_error(missing));
	content = cJSON_GetObjectItemCaseSensitive(result_of(missing), "content");
	last = cJSON_GetArrayItem(content, cJSON_GetArraySize(content) - 1);
	ASSERT_STR_EQ(string_of(last, "text"),
		      "internal error: tool schema_without_data declares an outputSchema but "
		      "answered without data");
	ASSERT(!is_error(kept));
	ASSERT_EQ(number_of(structured(kept), "answer"), 42);
	cJSON_Delete(undeclared);
	cJSON_Delete(missing);
	cJSON_Delete(kept);
}

static void sessionless_tools_join_no_session_group(void)
{
	struct bridge_tools_context context = { .registry = bridge_registry_create() };
	ASSERT(context.registry);
	if (!add_unconnected_session(context.registry, "s-group")) {
		bridge_registry_destroy(context.registry);
		FAIL_AT("could not add a session");
	}
	cJSON *args = cJSON_Parse("{\"session\":\"s-group\"}");
	char group[64] = "";
	bool click = bridge_tools_group("click", args, group, sizeof(group), &context);
	char click_group[64];
	snprintf(click_group, sizeof(click_group), "%s", group);
	size_t count;
	const struct bridge_tool *tools = bridge_tools_catalog(&count);
	char misgrouped[512] = "";
	for (size_t i = 0; i < count; i++) {
		group[0] = '\0';
		bool grouped = bridge_tools_group(tools[i].name, args, group, sizeof(group),
						  &context);
		if (grouped == tools[i].sessionless)
			snprintf(misgrouped + strlen(misgrouped),
				 sizeof(misgrouped) - strlen(misgrouped), " %s", tools[i].name);
	}
	cJSON_Delete(args);
	bridge_registry_destroy(context.registry);
	ASSERT(click);
	ASSERT_STR_EQ(click_group, "session:s-group");
	/* Sessionless tools are in no group even when named a session; every
	 * other tool is in its session's. */
	ASSERT_STR_EQ(misgrouped, "");
}

int main(void)
{
	RUN_TEST(every_schema_is_an_object_schema);
	RUN_TEST(every_embedded_file_belongs_to_its_tool);
	RUN_TEST(names_are_unique_and_follow_the_mcp_rule);
	RUN_TEST(tools_that_act_on_a_session_declare_it);
	RUN_TEST(repeated_pieces_agree);
	RUN_TEST(the_input_lane_and_quick_tools_are_unchanged);
	RUN_TEST(registering_lists_every_tool);
	RUN_TEST(handlers_answer_as_their_schemas_say);
	RUN_TEST(the_dispatcher_holds_tools_to_their_output_schema);
	RUN_TEST(sessionless_tools_join_no_session_group);
	forget_messages();
	TEST_EXIT();
}
