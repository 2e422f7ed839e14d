/* SPDX-License-Identifier: MIT */
#include "test.h"

#include "mcp/schema.h"

#include <cjson/cJSON.h>

static const char schema_text[] =
	"{\"type\":\"object\",\"properties\":{"
	"\"x\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":10},"
	"\"mode\":{\"type\":\"string\",\"enum\":[\"fast\",\"slow\"]},"
	"\"path\":{\"type\":\"array\",\"minItems\":2,\"items\":{\"type\":\"array\","
	"\"items\":{\"type\":\"integer\"},\"minItems\":2,\"maxItems\":2}},"
	"\"name\":{\"type\":\"string\",\"minLength\":1}},"
	"\"required\":[\"x\"]}";

static void check(const char *args_text, bool expect_ok, const char *expect_message)
{
	cJSON *schema = cJSON_Parse(schema_text);
	cJSON *args = cJSON_Parse(args_text);
	struct error err = { 0 };
	bool ok = mcp_schema_check_arguments(schema, args, "tool", &err);
	cJSON_Delete(schema);
	cJSON_Delete(args);
	if (ok != expect_ok)
		FAIL_AT("%s: expected %s, got %s (%s)", args_text, expect_ok ? "ok" : "error",
			ok ? "ok" : "error", err.message);
	if (expect_message && !strstr(err.message, expect_message))
		FAIL_AT("%s: \"%s\" does not contain \"%s\"", args_text, err.message,
			expect_message);
}

static void accepts_valid_arguments(void)
{
	check("{\"x\":3}", true, NULL);
	check("{\"x\":10,\"mode\":\"slow\",\"path\":[[1,2],[3,4]],\"name\":\"n\"}", true, NULL);
}

static void names_the_problem(void)
{
	check("{}", false, "missing required argument 'x' for tool");
	check("{\"x\":1.5}", false, "'x' must be an integer, got a number");
	check("{\"x\":\"3\"}", false, "'x' must be an integer, got a string");
	check("{\"x\":11}", false, "'x' is 11; it must be from 0 to 10");
	check("{\"x\":1,\"mode\":\"warp\"}", false, "it must be one of: fast, slow");
	check("{\"x\":1,\"path\":[[1,2]]}", false, "'path' needs at least 2 items");
	check("{\"x\":1,\"path\":[[1,2],[3]]}", false, "'path[1]' needs at least 2 items");
	check("{\"x\":1,\"path\":[[1,2],[3,\"a\"]]}", false, "'path[1][1]' must be an integer");
	check("{\"x\":1,\"name\":\"\"}", false, "'name' must not be empty");
	check("{\"x\":1,\"speed\":2}", false,
	      "unknown argument 'speed' for tool; it takes: x, mode");
	check("[]", false, "must be a JSON object");
}

int main(void)
{
	RUN_TEST(accepts_valid_arguments);
	RUN_TEST(names_the_problem);
	TEST_EXIT();
}
