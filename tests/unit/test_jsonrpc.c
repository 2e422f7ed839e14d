/* SPDX-License-Identifier: MIT */
#include "test.h"

#include "mcp/jsonrpc.h"
#include "mcp/server.h"
#include "mcp/workers.h"

#include <cjson/cJSON.h>
#include <pthread.h>

static void classify(const char *text, struct jsonrpc_message *msg)
{
	jsonrpc_parse(text, strlen(text), msg);
}

static void requests_notifications_and_responses(void)
{
	struct jsonrpc_message m;
	classify("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}", &m);
	ASSERT_EQ(m.kind, JSONRPC_REQUEST);
	ASSERT_STR_EQ(m.method, "ping");
	jsonrpc_message_finish(&m);

	classify("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", &m);
	ASSERT_EQ(m.kind, JSONRPC_NOTIFICATION);
	jsonrpc_message_finish(&m);

	classify("{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{}}", &m);
	ASSERT_EQ(m.kind, JSONRPC_RESPONSE);
	jsonrpc_message_finish(&m);
}

static void invalid_messages_carry_the_right_code(void)
{
	static const struct {
		const char *text;
		int code;
	} cases[] = {
		{ "{\"jsonrpc\":\"2.0\",", JSONRPC_PARSE_ERROR },
		{ "{} trailing", JSONRPC_PARSE_ERROR },
		{ "[1,2]", JSONRPC_INVALID_REQUEST },
		{ "42", JSONRPC_INVALID_REQUEST },
		{ "{\"id\":1,\"method\":\"ping\"}", JSONRPC_INVALID_REQUEST },
		{ "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", JSONRPC_INVALID_REQUEST },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}", JSONRPC_INVALID_REQUEST },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":[1]}",
		  JSONRPC_INVALID_PARAMS },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct jsonrpc_message m;
		classify(cases[i].text, &m);
		ASSERT_EQ(m.kind, JSONRPC_INVALID);
		ASSERT_EQ(m.error_code, cases[i].code);
		jsonrpc_message_finish(&m);
	}
}

/* Collected replies of a peer. */
static pthread_mutex_t replies_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t replies_changed = PTHREAD_COND_INITIALIZER;
static char *replies[16];
static int reply_count;

static void capture(void *context, const struct iovec *parts, int count)
{
	(void)context;
	char *json = test_join_parts(parts, count);
	pthread_mutex_lock(&replies_lock);
	if (reply_count < 16)
		replies[reply_count++] = json;
	else
		free(json);
	pthread_cond_broadcast(&replies_changed);
	pthread_mutex_unlock(&replies_lock);
}

static cJSON *wait_reply(int n)
{
	pthread_mutex_lock(&replies_lock);
	while (reply_count < n)
		pthread_cond_wait(&replies_changed, &replies_lock);
	cJSON *reply = cJSON_Parse(replies[n - 1]);
	pthread_mutex_unlock(&replies_lock);
	return reply;
}

static void echo_tool(struct mcp_call *call, const cJSON *args, void *userdata)
{
	(void)userdata;
	const cJSON *word = cJSON_GetObjectItemCaseSensitive(args, "word");
	if (strcmp(word->valuestring, "fail") == 0)
		mcp_call_fail(call, "asked to fail");
	else
		mcp_call_text(call, "echo %s", word->valuestring);
}

static const struct mcp_tool echo = {
	.name = "echo",
	.description = "Echoes a word.",
	.input_schema = "{\"type\":\"object\",\"properties\":{\"word\":{\"type\":\"string\"}},"
			"\"required\":[\"word\"]}",
	.handler = echo_tool,
};

/* Text that looks like an image marker, then two images. */
static void pictures_tool(struct mcp_call *call, const cJSON *args, void *userdata)
{
	(void)args;
	(void)userdata;
	mcp_call_text(call, "lizard-image-data-0");
	mcp_call_image(call, (const uint8_t *)"ab", 2, "image/png");
	mcp_call_text(call, "\"data\":\"lizard-image-data-1\"");
	mcp_call_image(call, (const uint8_t *)"xyz!", 4, "image/jpeg");
}

static const struct mcp_tool pictures = {
	.name = "pictures",
	.description = "Returns two small images.",
	.input_schema = "{\"type\":\"object\"}",
	.handler = pictures_tool,
};

static void send_text(struct mcp_peer *peer, const char *text)
{
	mcp_peer_handle(peer, text, strlen(text));
}

static void peer_answers_lifecycle_and_tool_calls(void)
{
	struct mcp_server *server = mcp_server_create(
		"t", "1", NULL,
		&(struct mcp_workers_limits){ .threads = 2,
					      .long_per_owner = 2,
					      .long_per_group = 2,
					      .quick_per_owner = 2 });
	ASSERT(mcp_server_add_tool(server, &echo, NULL));
	ASSERT(mcp_server_add_tool(server, &pictures, NULL));
	struct mcp_peer *peer = mcp_peer_create(server, capture, NULL);

	send_text(peer, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
			"{\"protocolVersion\":\"2025-03-26\"}}");
	cJSON *r = wait_reply(1);
	ASSERT_STR_EQ(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "result"), "protocolVersion")
			      ->valuestring,
		      "2025-03-26");
	cJSON_Delete(r);

	send_text(peer, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
			"{\"name\":\"echo\",\"arguments\":{\"word\":\"hi\"}}}");
	r = wait_reply(2);
	cJSON *result = cJSON_GetObjectItem(r, "result");
	ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(result, "isError")));
	ASSERT_STR_EQ(cJSON_GetArrayItem(cJSON_GetObjectItem(result, "content"), 0)
			      ->child->next->valuestring,
		      "echo hi");
	cJSON_Delete(r);

	send_text(peer, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":"
			"{\"name\":\"echo\",\"arguments\":{}}}");
	r = wait_reply(3);
	result = cJSON_GetObjectItem(r, "result");
	ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(result, "isError")));
	cJSON_Delete(r);

	send_text(peer, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":"
			"{\"name\":\"nope\"}}");
	r = wait_reply(4);
	ASSERT_EQ(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "error"), "code")->valueint,
		  JSONRPC_INVALID_PARAMS);
	ASSERT_EQ(cJSON_GetObjectItem(r, "id")->valueint, 4);
	cJSON_Delete(r);

	/* Image data goes exactly where each image's marker was, and nowhere
	 * else, whatever text items say. */
	send_text(peer, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":"
			"{\"name\":\"pictures\"}}");
	r = wait_reply(5);
	cJSON *content = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "result"), "content");
	ASSERT_EQ(cJSON_GetArraySize(content), 4);
	ASSERT_STR_EQ(cJSON_GetObjectItem(cJSON_GetArrayItem(content, 0), "text")->valuestring,
		      "lizard-image-data-0");
	ASSERT_STR_EQ(cJSON_GetObjectItem(cJSON_GetArrayItem(content, 1), "data")->valuestring,
		      "YWI=");
	ASSERT_STR_EQ(cJSON_GetObjectItem(cJSON_GetArrayItem(content, 2), "text")->valuestring,
		      "\"data\":\"lizard-image-data-1\"");
	ASSERT_STR_EQ(cJSON_GetObjectItem(cJSON_GetArrayItem(content, 3), "data")->valuestring,
		      "eHl6IQ==");
	ASSERT_STR_EQ(cJSON_GetObjectItem(cJSON_GetArrayItem(content, 3), "mimeType")->valuestring,
		      "image/jpeg");
	cJSON_Delete(r);

	mcp_peer_close(peer);
	mcp_server_destroy(server);
	for (int i = 0; i < reply_count; i++)
		free(replies[i]);
}

int main(void)
{
	RUN_TEST(requests_notifications_and_responses);
	RUN_TEST(invalid_messages_carry_the_right_code);
	RUN_TEST(peer_answers_lifecycle_and_tool_calls);
	TEST_EXIT();
}
