/* SPDX-License-Identifier: MIT */
/* start_stream's ice_servers (bridge/tools/ice.c): what the page is given
 * for good input, and the field each refusal names. */
#include "test.h"

#include "bridge/tools/ice.h"
#include "util/error.h"

#include <cjson/cJSON.h>

/* The servers as the page gets them, or NULL with err set. */
static char *checked(const char *json, struct error *err)
{
	cJSON *value = json ? cJSON_Parse(json) : NULL;
	char *out = NULL;
	error_clear(err);
	if (!tools_ice_servers(value, &out, err))
		out = NULL;
	cJSON_Delete(value);
	return out;
}

static void a_url_string_becomes_a_list_and_the_fields_stay(void)
{
	struct error err;
	char *out = checked("[{\"urls\":\"stun:a.example.org:3478\"},"
			    "{\"credential\":\"c\",\"urls\":[\"turn:t.example.org?transport=tcp\","
			    "\"turns:t.example.org:5349\"],\"username\":\"u\"}]",
			    &err);
	ASSERT_STR_EQ(out,
		      "[{\"urls\":[\"stun:a.example.org:3478\"]},"
		      "{\"urls\":[\"turn:t.example.org?transport=tcp\","
		      "\"turns:t.example.org:5349\"],\"username\":\"u\",\"credential\":\"c\"}]");
	free(out);
}

static void none_given_and_an_empty_list_mean_none(void)
{
	struct error err;
	char *out = (char *)1;
	ASSERT(tools_ice_servers(NULL, &out, &err));
	ASSERT(out == NULL);
	ASSERT(checked("[]", &err) == NULL);
	ASSERT_STR_EQ(err.message, "");
}

/* Each bad input is refused with a message naming the field, and none
 * quotes the credential ("hunter2"). */
static void refusals_name_the_field_and_never_the_credential(void)
{
	static const struct {
		const char *json, *message;
	} cases[] = {
		{ "[{\"urls\":\"http://s.example.org\",\"credential\":\"hunter2\"}]",
		  "ice_servers[0].urls must start with stun:, turn: or turns:" },
		{ "[{\"urls\":\"stun:a\"},{\"urls\":[\"stun:b\",7]}]",
		  "ice_servers[1].urls[1] must be a string" },
		{ "[{\"urls\":\"stun:\"}]", "ice_servers[0].urls needs a host after stun:" },
		{ "[{\"urls\":\"stun:a b\"}]", "ice_servers[0].urls needs a host after stun:" },
		{ "[{\"urls\":[]}]", "ice_servers[0].urls has 0 URLs; it takes 1 to 4" },
		{ "[{\"urls\":[\"stun:a\",\"stun:b\",\"stun:c\",\"stun:d\",\"stun:e\"]}]",
		  "ice_servers[0].urls has 5 URLs; it takes 1 to 4" },
		{ "[{\"username\":\"u\"}]", "ice_servers[0].urls is missing" },
		{ "[{\"urls\":\"turn:t\",\"credential\":\"hunter2\"}]",
		  "ice_servers[0] has a turn: or turns: URL, which needs both username and "
		  "credential" },
		{ "[{\"urls\":\"stun:a\",\"username\":5}]",
		  "ice_servers[0].username must be a string" },
		{ "[{\"urls\":\"stun:a\",\"password\":\"hunter2\"}]",
		  "ice_servers[0] has a field 'password' it does not take" },
		{ "[\"stun:a\"]", "ice_servers[0] must be an object" },
		{ "{\"urls\":\"stun:a\"}", "ice_servers must be an array" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct error err;
		char *out = checked(cases[i].json, &err);
		if (out)
			FAIL_AT("%s was taken as %s", cases[i].json, out);
		ASSERT_CONTAINS(err.message, cases[i].message);
		if (strstr(err.message, "hunter2"))
			FAIL_AT("the message quotes the credential: %s", err.message);
	}
}

static void lengths_and_counts_are_bounded(void)
{
	char url[ICE_MAX_URL + 16] = "stun:";
	memset(url + 5, 'x', ICE_MAX_URL - 5);
	char json[2 * ICE_MAX_URL];
	snprintf(json, sizeof(json), "[{\"urls\":\"%s\"}]", url); /* exactly the most */
	struct error err;
	char *out = checked(json, &err);
	ASSERT(out != NULL);
	free(out);
	snprintf(json, sizeof(json), "[{\"urls\":\"%sx\"}]", url);
	ASSERT(checked(json, &err) == NULL);
	ASSERT_CONTAINS(err.message, "ice_servers[0].urls is 257 bytes; at most 256");
	char many[1024];
	size_t used = 0;
	for (int i = 0; i <= ICE_MAX_SERVERS; i++)
		used += (size_t)snprintf(many + used, sizeof(many) - used,
					 "%s{\"urls\":\"stun:a\"}", i ? "," : "[");
	snprintf(many + used, sizeof(many) - used, "]");
	ASSERT(checked(many, &err) == NULL);
	ASSERT_CONTAINS(err.message, "ice_servers has 9 servers; it takes at most 8");
}

int main(void)
{
	RUN_TEST(a_url_string_becomes_a_list_and_the_fields_stay);
	RUN_TEST(none_given_and_an_empty_list_mean_none);
	RUN_TEST(refusals_name_the_field_and_never_the_credential);
	RUN_TEST(lengths_and_counts_are_bounded);
	TEST_EXIT();
}
