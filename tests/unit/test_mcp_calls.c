/* The MCP engine's call features: structuredContent with an outputSchema,
 * notifications/progress for requests with a progressToken, and
 * notifications/cancelled, scoped to the client that made the call. */
#include "test.h"

#include "../../mcp/server.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#define MAX_MESSAGES 256

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static char *messages[MAX_MESSAGES];
static int message_count;

static void capture(void *context, const struct iovec *parts, int count)
{
	(void)context;
	size_t len = 0;
	for (int i = 0; i < count; i++)
		len += parts[i].iov_len;
	char *json = malloc(len + 1), *p = json;
	for (int i = 0; i < count; i++) {
		memcpy(p, parts[i].iov_base, parts[i].iov_len);
		p += parts[i].iov_len;
	}
	*p = '\0';
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
	struct mcp_server *server = mcp_server_create("t", "1", NULL, 2);
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
	const cJSON *text = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(result, "content"), 0), "text");
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
	ASSERT_STR_EQ(cJSON_GetObjectItem(progress, "method")->valuestring, "notifications/progress");
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

int main(void)
{
	RUN_TEST(structured_content_and_output_schema);
	RUN_TEST(progress_then_cancel_sends_no_reply);
	RUN_TEST(cancellation_reaches_only_the_same_client);
	forget_messages();
	TEST_EXIT();
}
