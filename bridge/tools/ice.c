/* SPDX-License-Identifier: MIT */
#include "bridge/tools/ice.h"

#include "util/utf8.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Appends a copy of text to array; false when out of memory. */
static bool add_string(cJSON *array, const char *text, struct error *err)
{
	cJSON *item = cJSON_CreateString(text);
	if (!item || !cJSON_AddItemToArray(array, item)) {
		cJSON_Delete(item);
		return error_set(err, 0, "out of memory for ice_servers");
	}
	return true;
}

static bool starts_with(const char *text, const char *prefix)
{
	return strncmp(text, prefix, strlen(prefix)) == 0;
}

/* Whether a URL's bytes are printable ASCII without spaces: what STUN and
 * TURN URLs are made of (RFC 7064, 7065), and nothing a page could take
 * for more than one URL. */
static bool printable(const char *text)
{
	for (const unsigned char *c = (const unsigned char *)text; *c; c++)
		if (*c <= ' ' || *c >= 0x7f)
			return false;
	return true;
}

/* One URL of server index, the url_index'th (-1 when urls was a string). */
static bool check_url(const cJSON *url, int index, int url_index, bool *turn, struct error *err)
{
	char field[64];
	if (url_index < 0)
		snprintf(field, sizeof(field), "ice_servers[%d].urls", index);
	else
		snprintf(field, sizeof(field), "ice_servers[%d].urls[%d]", index, url_index);
	if (!cJSON_IsString(url))
		return error_set(err, 0, "%s must be a string (a stun:, turn: or turns: URL)",
				 field);
	const char *text = url->valuestring;
	size_t len = strlen(text);
	if (len > ICE_MAX_URL)
		return error_set(err, 0, "%s is %zu bytes; at most %d are taken", field, len,
				 ICE_MAX_URL);
	const char *scheme = starts_with(text, "stun:")    ? "stun:"
			     : starts_with(text, "turn:")  ? "turn:"
			     : starts_with(text, "turns:") ? "turns:"
							   : NULL;
	if (!scheme)
		return error_set(err, 0,
				 "%s must start with stun:, turn: or turns: (as in "
				 "stun:stun.example.org:3478)",
				 field);
	if (len == strlen(scheme) || !printable(text))
		return error_set(err, 0,
				 "%s needs a host after %s, and no spaces or characters "
				 "outside printable ASCII",
				 field, scheme);
	if (scheme[0] == 't')
		*turn = true;
	return true;
}

/* username or credential of server index: absent, or a bounded string. */
static bool check_name(const cJSON *server, const char *name, int index, struct error *err)
{
	const cJSON *value = cJSON_GetObjectItemCaseSensitive(server, name);
	if (!value)
		return true;
	if (!cJSON_IsString(value))
		return error_set(err, 0, "ice_servers[%d].%s must be a string", index, name);
	size_t len = strlen(value->valuestring);
	if (len > ICE_MAX_NAME)
		return error_set(err, 0, "ice_servers[%d].%s is %zu bytes; at most %d are taken",
				 index, name, len, ICE_MAX_NAME);
	return true;
}

/* One server object, copied into out with only the fields it knows. */
static bool check_server(const cJSON *server, int index, cJSON *out, struct error *err)
{
	if (!cJSON_IsObject(server))
		return error_set(err, 0, "ice_servers[%d] must be an object with \"urls\"", index);
	const cJSON *field;
	cJSON_ArrayForEach(field, server)
	{
		if (strcmp(field->string, "urls") != 0 && strcmp(field->string, "username") != 0 &&
		    strcmp(field->string, "credential") != 0) {
			char shown[33];
			return error_set(err, 0,
					 "ice_servers[%d] has a field '%s' it does not take (it "
					 "takes urls, username and credential)",
					 index, utf8_excerpt(shown, sizeof(shown), field->string));
		}
	}
	const cJSON *urls = cJSON_GetObjectItemCaseSensitive(server, "urls");
	bool turn = false;
	cJSON *copied = cJSON_AddArrayToObject(out, "urls");
	if (!copied)
		return error_set(err, 0, "out of memory for ice_servers");
	if (cJSON_IsString(urls)) {
		if (!check_url(urls, index, -1, &turn, err) ||
		    !add_string(copied, urls->valuestring, err))
			return false;
	} else if (cJSON_IsArray(urls)) {
		int count = cJSON_GetArraySize(urls);
		if (count < 1 || count > ICE_MAX_URLS)
			return error_set(err, 0,
					 "ice_servers[%d].urls has %d URLs; it takes 1 to %d",
					 index, count, ICE_MAX_URLS);
		int url_index = 0;
		const cJSON *url;
		cJSON_ArrayForEach(url, urls)
		{
			if (!check_url(url, index, url_index++, &turn, err) ||
			    !add_string(copied, url->valuestring, err))
				return false;
		}
	} else {
		return error_set(err, 0,
				 "ice_servers[%d].urls is missing or not a string or an array of "
				 "strings",
				 index);
	}
	if (!check_name(server, "username", index, err) ||
	    !check_name(server, "credential", index, err))
		return false;
	const char *username = cJSON_GetStringValue(
		cJSON_GetObjectItemCaseSensitive(server, "username"));
	const char *credential = cJSON_GetStringValue(
		cJSON_GetObjectItemCaseSensitive(server, "credential"));
	/* Browsers refuse a TURN server without both, and would only say so
	 * in the page's console. */
	if (turn && (!username || !credential))
		return error_set(err, 0,
				 "ice_servers[%d] has a turn: or turns: URL, which needs both "
				 "username and credential",
				 index);
	if ((username && !cJSON_AddStringToObject(out, "username", username)) ||
	    (credential && !cJSON_AddStringToObject(out, "credential", credential)))
		return error_set(err, 0, "out of memory for ice_servers");
	return true;
}

bool tools_ice_servers(const cJSON *value, char **json, struct error *err)
{
	*json = NULL;
	if (!value)
		return true;
	if (!cJSON_IsArray(value))
		return error_set(err, 0, "ice_servers must be an array of objects with \"urls\"");
	int count = cJSON_GetArraySize(value);
	if (count > ICE_MAX_SERVERS)
		return error_set(err, 0, "ice_servers has %d servers; it takes at most %d", count,
				 ICE_MAX_SERVERS);
	if (count == 0)
		return true;
	cJSON *servers = cJSON_CreateArray();
	bool ok = servers != NULL;
	int index = 0;
	const cJSON *server;
	cJSON_ArrayForEach(server, value)
	{
		cJSON *out = ok ? cJSON_CreateObject() : NULL;
		if (ok && !out)
			ok = error_set(err, 0, "out of memory for ice_servers");
		if (ok)
			cJSON_AddItemToArray(servers, out);
		if (ok && !check_server(server, index, out, err))
			ok = false;
		index++;
	}
	if (ok) {
		*json = cJSON_PrintUnformatted(servers);
		if (!*json)
			ok = error_set(err, 0, "out of memory for ice_servers");
	}
	cJSON_Delete(servers);
	return ok;
}
