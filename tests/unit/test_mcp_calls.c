/* SPDX-License-Identifier: MIT */
/* The MCP engine's call features: structuredContent with an outputSchema,
 * notifications/progress for requests with a progressToken,
 * notifications/cancelled scoped to the client that made the call, ids
 * echoed exactly, UTF-8 only, logging, and the bounds on queued calls. */
#include "test.h"

#include "mcp/jsonrpc.h"
#include "mcp/server.h"
#include "mcp/workers.h"
#include "util/utf8.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#define MAX_MESSAGES 1024

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
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
	pthread_cond_broadcast(&changed);
	pthread_mutex_unlock(&lock);
}

static void forget_messages(void)
{
	pthread_mutex_lock(&lock);
	for (int i = 0; i < message_count; i++)
		free(messages[i]);
	message_count = 0;
	pthread_mutex_unlock(&lock);
}

/* The first message containing needle, parsed; NULL after 5 s. */
static cJSON *wait_message(const char *needle)
{
	struct timespec deadline;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 5;
	cJSON *found = NULL;
	pthread_mutex_lock(&lock);
	while (!found) {
		for (int i = 0; i < message_count && !found; i++)
			if (strstr(messages[i], needle))
				found = cJSON_Parse(messages[i]);
		if (!found && pthread_cond_timedwait(&changed, &lock, &deadline) != 0)
			break;
	}
	pthread_mutex_unlock(&lock);
	return found;
}

static bool any_message_contains(const char *needle)
{
	bool found = false;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < message_count; i++)
		found = found || strstr(messages[i], needle);
	pthread_mutex_unlock(&lock);
	return found;
}

static void send_text(struct mcp_peer *peer, const char *text)
{
	mcp_peer_handle(peer, text, strlen(text));
}

static void info_tool(struct mcp_call *call, const cJSON *args, void *userdata)
{
	(void)userdata;
	const cJSON *fail = cJSON_GetObjectItemCaseSensitive(args, "fail");
	cJSON *data = cJSON_CreateObject();
	cJSON_AddNumberToObject(data, "width", 1280);
	mcp_call_structured(call, data);
	if (cJSON_IsTrue(fail))
		mcp_call_fail(call, "asked to fail");
}

static const struct mcp_tool info = {
	.name = "info",
	.description = "Returns a width.",
	.input_schema = "{\"type\":\"object\",\"properties\":{\"fail\":{\"type\":\"boolean\"}}}",
	.output_schema = "{\"type\":\"object\",\"properties\":{\"width\":{\"type\":\"integer\"}},"
			 "\"required\":[\"width\"]}",
	.handler = info_tool,
};

static atomic_int steps_after_cancel = -1;

/* Counts for up to 10 s, reporting each step, until cancelled. */
static void count_tool(struct mcp_call *call, const cJSON *args, void *userdata)
{
	(void)args;
	(void)userdata;
	for (int step = 1; step <= 1000; step++) {
		if (mcp_call_cancelled(call)) {
			atomic_store(&steps_after_cancel, step);
			return;
		}
		mcp_call_progress(call, step, 1000, "counting");
		usleep(10000);
	}
	mcp_call_text(call, "counted to 1000");
}

static const struct mcp_tool count = {
	.name = "count",
	.description = "Counts slowly.",
	.input_schema = "{\"type\":\"object\"}",
	.handler = count_tool,
};

static struct mcp_server *make_server(void)
{
	struct mcp_server *server = mcp_server_create(
		"t", "1", NULL,
		&(struct mcp_workers_limits){ .threads = 2,
					      .long_per_owner = 2,
					      .long_per_group = 2,
					      .quick_per_owner = 2 });
	if (server && (!mcp_server_add_tool(server, &info, NULL) ||
		       !mcp_server_add_tool(server, &count, NULL))) {
		mcp_server_destroy(server);
		return NULL;
	}
	return server;
}

static void structured_content_and_output_schema(void)
{
	forget_messages();
	struct mcp_server *server = make_server();
	ASSERT(server);
	struct mcp_peer *peer = mcp_peer_create(server, capture, NULL);
	send_text(peer, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
	cJSON *list = wait_message("\"id\":1");
	ASSERT(list);
	const cJSON *tools = cJSON_GetObjectItem(cJSON_GetObjectItem(list, "result"), "tools");
	ASSERT(cJSON_GetObjectItem(cJSON_GetArrayItem(tools, 0), "outputSchema"));
	ASSERT(!cJSON_GetObjectItem(cJSON_GetArrayItem(tools, 1), "outputSchema"));
	cJSON_Delete(list);

	send_text(peer, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
			"\"params\":{\"name\":\"info\"}}");
	cJSON *reply = wait_message("\"id\":2");
	ASSERT(reply);
	const cJSON *result = cJSON_GetObjectItem(reply, "result");
	const cJSON *structured = cJSON_GetObjectItem(result, "structuredContent");
	ASSERT_EQ(cJSON_GetObjectItem(structured, "width")->valueint, 1280);
	const cJSON *text = cJSON_GetObjectItem(
		cJSON_GetArrayItem(cJSON_GetObjectItem(result, "content"), 0), "text");
	ASSERT_STR_EQ(text->valuestring, "{\"width\":1280}");
	cJSON_Delete(reply);

	/* An error result carries the message and no structuredContent. */
	send_text(peer, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
			"\"params\":{\"name\":\"info\",\"arguments\":{\"fail\":true}}}");
	reply = wait_message("\"id\":3");
	ASSERT(reply);
	result = cJSON_GetObjectItem(reply, "result");
	ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(result, "isError")));
	ASSERT(!cJSON_GetObjectItem(result, "structuredContent"));
	cJSON_Delete(reply);

	mcp_peer_close(peer);
	mcp_server_destroy(server);
}

static void progress_then_cancel_sends_no_reply(void)
{
	forget_messages();
	atomic_store(&steps_after_cancel, -1);
	struct mcp_server *server = make_server();
	ASSERT(server);
	struct mcp_peer *peer = mcp_peer_create(server, capture, NULL);
	send_text(peer, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":"
			"{\"name\":\"count\",\"_meta\":{\"progressToken\":\"tok-7\"}}}");
	cJSON *progress = wait_message("\"tok-7\"");
	ASSERT(progress);
	ASSERT_STR_EQ(cJSON_GetObjectItem(progress, "method")->valuestring,
		      "notifications/progress");
	const cJSON *params = cJSON_GetObjectItem(progress, "params");
	ASSERT_EQ(cJSON_GetObjectItem(params, "total")->valueint, 1000);
	ASSERT_STR_EQ(cJSON_GetObjectItem(params, "message")->valuestring, "counting");
	cJSON_Delete(progress);

	send_text(peer, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
			"\"params\":{\"requestId\":7,\"reason\":\"test\"}}");
	mcp_server_destroy(server); /* waits for the call to finish */
	ASSERT(atomic_load(&steps_after_cancel) > 0);
	ASSERT(!any_message_contains("\"id\":7"));
	mcp_peer_close(peer);
}

static void cancellation_reaches_only_the_same_client(void)
{
	forget_messages();
	atomic_store(&steps_after_cancel, -1);
	struct mcp_server *server = make_server();
	ASSERT(server);
	/* Streamable HTTP: each POST its own peer, one MCP session. */
	struct mcp_peer *caller = mcp_peer_create(server, capture, NULL);
	struct mcp_peer *stranger = mcp_peer_create(server, capture, NULL);
	struct mcp_peer *same_client = mcp_peer_create(server, capture, NULL);
	mcp_peer_set_scope(caller, "session-a");
	mcp_peer_set_scope(stranger, "session-b");
	mcp_peer_set_scope(same_client, "session-a");
	send_text(caller, "{\"jsonrpc\":\"2.0\",\"id\":\"c\",\"method\":\"tools/call\",\"params\":"
			  "{\"name\":\"count\",\"_meta\":{\"progressToken\":1}}}");
	cJSON *first = wait_message("notifications/progress");
	ASSERT(first);
	cJSON_Delete(first);
	const char *cancel = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
			     "\"params\":{\"requestId\":\"c\"}}";
	send_text(stranger, cancel);
	usleep(100000);
	ASSERT_EQ(atomic_load(&steps_after_cancel), -1);
	send_text(same_client, cancel);
	mcp_server_destroy(server);
	ASSERT(atomic_load(&steps_after_cancel) > 0);
	ASSERT(!any_message_contains("\"id\":\"c\""));
	mcp_peer_close(caller);
	mcp_peer_close(stranger);
	mcp_peer_close(same_client);
}


/* Held until released: fills a lane while the queue is probed. */
static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hold_released = PTHREAD_COND_INITIALIZER;
static bool released;

static void hold_tool(struct mcp_call *call, const cJSON *args, void *userdata)
{
	(void)args;
	(void)userdata;
	pthread_mutex_lock(&hold_lock);
	while (!released)
		pthread_cond_wait(&hold_released, &hold_lock);
	pthread_mutex_unlock(&hold_lock);
	mcp_call_text(call, "held");
}

static const struct mcp_tool hold = {
	.name = "hold",
	.description = "Waits until the test releases it.",
	.input_schema = "{\"type\":\"object\"}",
	.handler = hold_tool,
	.ordered = true,
};

static void release_holds(bool value)
{
	pthread_mutex_lock(&hold_lock);
	released = value;
	pthread_cond_broadcast(&hold_released);
	pthread_mutex_unlock(&hold_lock);
}

/* Every hold runs in one lane, so one worker stays free for others. */
static bool hold_lane(const char *tool, const cJSON *args, char *lane, size_t size, void *userdata)
{
	(void)args;
	(void)userdata;
	if (strcmp(tool, "hold") != 0)
		return false;
	snprintf(lane, size, "holds");
	return true;
}

static void numeric_ids_and_tokens_echo_exactly(void)
{
	forget_messages();
	atomic_store(&steps_after_cancel, -1);
	struct mcp_server *server = make_server();
	ASSERT(server);
	struct mcp_peer *peer = mcp_peer_create(server, capture, NULL);
	/* 2^53 + 1: a double would make it ...992. */
	send_text(peer, "{\"jsonrpc\":\"2.0\",\"id\":9007199254740993,\"method\":\"ping\"}");
	cJSON *reply = wait_message("\"result\"");
	cJSON_Delete(reply);
	ASSERT(any_message_contains("\"id\":9007199254740993,"));
	forget_messages();
	send_text(peer, "{\"jsonrpc\":\"2.0\",\"id\":-1.50e+400,\"method\":\"nope\"}");
	reply = wait_message("\"error\"");
	cJSON_Delete(reply);
	ASSERT(any_message_contains("\"id\":-1.50e+400,"));

	/* The progress token too; and a cancel names the exact id, so the
	 * neighbouring id a double would confuse it with cancels nothing. */
	forget_messages();
	send_text(peer, "{\"jsonrpc\":\"2.0\",\"id\":9007199254740993,\"method\":\"tools/call\","
			"\"params\":{\"name\":\"count\",\"_meta\":{\"progressToken\":"
			"12345678901234567890}}}");
	cJSON *progress = wait_message("notifications/progress");
	cJSON_Delete(progress);
	ASSERT(any_message_contains("\"progressToken\":12345678901234567890,"));
	send_text(peer, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
			"\"params\":{\"requestId\":9007199254740992}}");
	usleep(100000);
	ASSERT_EQ(atomic_load(&steps_after_cancel), -1);
	send_text(peer, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
			"\"params\":{\"requestId\":9007199254740993}}");
	mcp_server_destroy(server);
	ASSERT(atomic_load(&steps_after_cancel) > 0);
	ASSERT(!any_message_contains("\"result\""));
	mcp_peer_close(peer);
	atomic_store(&steps_after_cancel, -1);
}

/* Every message captured so far is valid UTF-8. */
static bool all_messages_are_utf8(void)
{
	bool ok = true;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < message_count; i++)
		ok = ok && utf8_valid(messages[i], strlen(messages[i]), NULL);
	pthread_mutex_unlock(&lock);
	return ok;
}

static void text_that_is_not_utf8_never_comes_back(void)
{
	forget_messages();
	struct mcp_server *server = make_server();
	ASSERT(server);
	struct mcp_peer *peer = mcp_peer_create(server, capture, NULL);
	/* Raw bytes in an id and a method name are a parse error. */
	send_text(peer, "{\"jsonrpc\":\"2.0\",\"id\":\"\xff\xfe\",\"method\":\"ping\"}");
	cJSON *reply = wait_message("-32700");
	ASSERT(reply);
	ASSERT(cJSON_IsNull(cJSON_GetObjectItem(reply, "id")));
	ASSERT_CONTAINS(
		cJSON_GetObjectItem(cJSON_GetObjectItem(reply, "error"), "message")->valuestring,
		"not valid UTF-8 (byte 23)");
	cJSON_Delete(reply);
	forget_messages();
	send_text(peer, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"x\xc3\"}");
	reply = wait_message("-32700");
	ASSERT(reply);
	cJSON_Delete(reply);

	/* A long method name is cut between characters: 63 bytes of ASCII
	 * and then a 2-byte character that does not fit in 64. */
	char message[200];
	snprintf(message, sizeof(message),
		 "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"%s\xc3\xa9tail\"}",
		 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	send_text(peer, message);
	reply = wait_message("\"id\":3");
	ASSERT(reply);
	const char *text =
		cJSON_GetObjectItem(cJSON_GetObjectItem(reply, "error"), "message")->valuestring;
	ASSERT(!strstr(text, "\xc3"));
	ASSERT_CONTAINS(text, "aaa");
	cJSON_Delete(reply);
	ASSERT(all_messages_are_utf8());
	mcp_peer_close(peer);
	mcp_server_destroy(server);
}

static void log_messages_follow_each_clients_level(void)
{
	forget_messages();
	struct mcp_server *server = make_server();
	ASSERT(server);
	struct mcp_peer *quiet = mcp_peer_create(server, capture, NULL);
	struct mcp_peer *chatty = mcp_peer_create(server, capture, NULL);
	struct mcp_peer *stranger = mcp_peer_create(server, capture, NULL);
	const char *init = "{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":\"initialize\","
			   "\"params\":{\"protocolVersion\":\"2025-11-25\"}}";
	send_text(quiet, init);
	send_text(chatty, init);
	cJSON *reply = wait_message("\"logging\":{}");
	ASSERT(reply);
	cJSON_Delete(reply);
	send_text(chatty, "{\"jsonrpc\":\"2.0\",\"id\":\"lvl\",\"method\":\"logging/setLevel\","
			  "\"params\":{\"level\":\"info\"}}");
	reply = wait_message("\"id\":\"lvl\"");
	ASSERT(reply && cJSON_GetObjectItem(reply, "result"));
	cJSON_Delete(reply);
	send_text(chatty, "{\"jsonrpc\":\"2.0\",\"id\":\"bad\",\"method\":\"logging/setLevel\","
			  "\"params\":{\"level\":\"loud\"}}");
	reply = wait_message("\"id\":\"bad\"");
	ASSERT_EQ(cJSON_GetObjectItem(cJSON_GetObjectItem(reply, "error"), "code")->valueint,
		  JSONRPC_INVALID_PARAMS);
	cJSON_Delete(reply);

	forget_messages();
	/* info reaches the peer that asked for info only; warning both
	 * initialized peers (the default level); the uninitialized none. */
	mcp_server_log(server, MCP_LOG_INFO, "session", "session s-1 started");
	mcp_server_log(server, MCP_LOG_WARNING, "session", "session s-1 reconnecting: gone");
	pthread_mutex_lock(&lock);
	int infos = 0, warnings = 0;
	for (int i = 0; i < message_count; i++) {
		ASSERT_CONTAINS(messages[i], "\"method\":\"notifications/message\"");
		infos += strstr(messages[i], "\"level\":\"info\"") != NULL;
		warnings += strstr(messages[i], "\"level\":\"warning\"") != NULL;
	}
	pthread_mutex_unlock(&lock);
	ASSERT_EQ(infos, 1);
	ASSERT_EQ(warnings, 2);
	reply = wait_message("started");
	ASSERT_STR_EQ(
		cJSON_GetObjectItem(cJSON_GetObjectItem(reply, "params"), "logger")->valuestring,
		"session");
	ASSERT_STR_EQ(
		cJSON_GetObjectItem(cJSON_GetObjectItem(reply, "params"), "data")->valuestring,
		"session s-1 started");
	cJSON_Delete(reply);
	/* A closed peer gets nothing, and a repaired message stays text. */
	mcp_peer_close(chatty);
	forget_messages();
	mcp_server_log(server, MCP_LOG_ERROR, NULL, "bad \xff byte");
	reply = wait_message("bad ");
	ASSERT(reply);
	cJSON_Delete(reply);
	pthread_mutex_lock(&lock);
	ASSERT_EQ(message_count, 1);
	pthread_mutex_unlock(&lock);
	ASSERT(all_messages_are_utf8());
	mcp_peer_close(quiet);
	mcp_peer_close(stranger);
	mcp_server_destroy(server);
}

static void a_full_queue_answers_at_once_and_others_go_on(void)
{
	forget_messages();
	release_holds(false);
	struct mcp_server *server = make_server();
	ASSERT(server);
	ASSERT(mcp_server_add_tool(server, &hold, NULL));
	mcp_server_set_group_function(server, hold_lane, NULL);
	struct mcp_peer *greedy = mcp_peer_create(server, capture, NULL);
	struct mcp_peer *other = mcp_peer_create(server, capture, NULL);
	char text[160];
	for (int i = 0; i < MCP_MAX_CALLS_PER_CLIENT; i++) {
		snprintf(text, sizeof(text),
			 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":"
			 "{\"name\":\"hold\"}}",
			 i);
		send_text(greedy, text);
	}
	ASSERT(!mcp_peer_wait_idle(greedy, 10));
	send_text(greedy, "{\"jsonrpc\":\"2.0\",\"id\":\"over\",\"method\":\"tools/call\","
			  "\"params\":{\"name\":\"hold\"}}");
	cJSON *reply = wait_message("\"id\":\"over\"");
	ASSERT(reply);
	const cJSON *error = cJSON_GetObjectItem(reply, "error");
	ASSERT_EQ(cJSON_GetObjectItem(error, "code")->valueint, JSONRPC_SERVER_BUSY);
	ASSERT_CONTAINS(cJSON_GetObjectItem(error, "message")->valuestring, "256");
	cJSON_Delete(reply);
	/* Another client is served while the greedy one waits. */
	send_text(other, "{\"jsonrpc\":\"2.0\",\"id\":\"other\",\"method\":\"tools/call\","
			 "\"params\":{\"name\":\"info\"}}");
	reply = wait_message("\"id\":\"other\"");
	ASSERT(reply && cJSON_GetObjectItem(reply, "result"));
	cJSON_Delete(reply);
	release_holds(true);
	ASSERT(mcp_peer_wait_idle(greedy, 5000));
	pthread_mutex_lock(&lock);
	ASSERT_EQ(message_count, MCP_MAX_CALLS_PER_CLIENT + 2);
	pthread_mutex_unlock(&lock);
	mcp_peer_close(greedy);
	mcp_peer_close(other);
	mcp_server_destroy(server);
}

/* A transport closing: calls stop at their next step and still answer. */
static void a_call_given_up_answers_with_the_reason(void)
{
	forget_messages();
	atomic_store(&steps_after_cancel, -1);
	struct mcp_server *server = make_server();
	ASSERT(server);
	struct mcp_peer *peer = mcp_peer_create(server, capture, NULL);
	send_text(peer, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":"
			"{\"name\":\"count\",\"_meta\":{\"progressToken\":\"t9\"}}}");
	cJSON *progress = wait_message("\"t9\"");
	ASSERT(progress);
	cJSON_Delete(progress);
	mcp_peer_give_up(peer, "the transport is closing");
	ASSERT(mcp_peer_wait_idle(peer, 5000));
	ASSERT(atomic_load(&steps_after_cancel) > 0);
	cJSON *reply = wait_message("\"id\":9");
	ASSERT(reply);
	const cJSON *result = cJSON_GetObjectItem(reply, "result");
	ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(result, "isError")));
	const cJSON *text = cJSON_GetObjectItem(
		cJSON_GetArrayItem(cJSON_GetObjectItem(result, "content"), 0), "text");
	ASSERT_STR_EQ(text->valuestring, "the transport is closing");
	cJSON_Delete(reply);
	mcp_peer_close(peer);
	mcp_server_destroy(server);
}

int main(void)
{
	RUN_TEST(structured_content_and_output_schema);
	RUN_TEST(progress_then_cancel_sends_no_reply);
	RUN_TEST(cancellation_reaches_only_the_same_client);
	RUN_TEST(numeric_ids_and_tokens_echo_exactly);
	RUN_TEST(text_that_is_not_utf8_never_comes_back);
	RUN_TEST(log_messages_follow_each_clients_level);
	RUN_TEST(a_full_queue_answers_at_once_and_others_go_on);
	RUN_TEST(a_call_given_up_answers_with_the_reason);
	forget_messages();
	TEST_EXIT();
}
