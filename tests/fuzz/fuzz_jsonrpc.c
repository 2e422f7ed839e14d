/* SPDX-License-Identifier: MIT */
/* JSON-RPC parsing and MCP peer handling: any bytes as one message. Every
 * reply must be one JSON object in valid UTF-8, whatever came in, and no
 * call may be left running. */
#include "fuzz.h"

#include "mcp/jsonrpc.h"
#include "mcp/server.h"
#include "mcp/workers.h"
#include "util/log.h"
#include "util/utf8.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <string.h>

static void check_reply(void *context, const struct iovec *parts, int count)
{
	(void)context;
	size_t len = 0;
	for (int i = 0; i < count; i++)
		len += parts[i].iov_len;
	char *text = malloc(len + 1), *p = text;
	FUZZ_CHECK(text, "out of memory");
	for (int i = 0; i < count; i++) {
		memcpy(p, parts[i].iov_base, parts[i].iov_len);
		p += parts[i].iov_len;
	}
	*p = '\0';
	size_t bad = 0;
	FUZZ_CHECK(utf8_valid(text, len, &bad), "byte %zu of %s", bad, text);
	cJSON *reply = cJSON_ParseWithLength(text, len);
	FUZZ_CHECK(cJSON_IsObject(reply), "not a JSON object: %s", text);
	const cJSON *version = cJSON_GetObjectItemCaseSensitive(reply, "jsonrpc");
	FUZZ_CHECK(cJSON_IsString(version) && strcmp(version->valuestring, "2.0") == 0, "%s", text);
	cJSON_Delete(reply);
	free(text);
}

/* Echoes its text argument back, so arguments reach a reply. */
static void echo_tool(struct mcp_call *call, const cJSON *args, void *userdata)
{
	(void)userdata;
	const cJSON *text = cJSON_GetObjectItemCaseSensitive(args, "text");
	mcp_call_text(call, "%s", cJSON_IsString(text) ? text->valuestring : "");
	cJSON *data = cJSON_CreateObject();
	cJSON_AddItemToObject(data, "args", cJSON_Duplicate(args, true));
	mcp_call_structured(call, data);
	mcp_call_progress(call, 1, 2, cJSON_IsString(text) ? text->valuestring : NULL);
}

static const struct mcp_tool echo = {
	.name = "echo",
	.description = "Echoes text.",
	.input_schema = "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\","
			"\"maxLength\":100},\"mode\":{\"type\":\"string\",\"enum\":[\"a\",\"b\"]},"
			"\"n\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":9},\"list\":{"
			"\"type\":\"array\",\"items\":{\"type\":\"integer\"},\"maxItems\":4}},"
			"\"additionalProperties\":false}",
	.output_schema = "{\"type\":\"object\"}",
	.handler = echo_tool,
};

static struct mcp_server *server;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	log_set_level(LOG_ERROR);
	server = mcp_server_create("fuzz", "1", "instructions",
				   &(struct mcp_workers_limits){ .threads = 1,
								 .long_per_owner = 1,
								 .long_per_group = 1,
								 .quick_per_owner = 1 });
	if (!server || !mcp_server_add_tool(server, &echo, NULL))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mcp_peer *peer = mcp_peer_create(server, check_reply, NULL);
	FUZZ_CHECK(peer, "out of memory");
	/* Lines as stdio splits them: several messages per input. */
	const char *text = (const char *)data;
	size_t start = 0;
	for (size_t i = 0; i <= size; i++) {
		if (i == size || text[i] == '\n') {
			if (i > start)
				mcp_peer_handle(peer, text + start, i - start);
			start = i + 1;
		}
	}
	FUZZ_CHECK(mcp_peer_wait_idle(peer, 5000), "a call did not finish");
	mcp_server_log(server, MCP_LOG_ERROR, "fuzz", "after the input");
	mcp_peer_close(peer);
	return 0;
}
