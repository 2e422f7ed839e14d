/* SPDX-License-Identifier: MIT */
/* lizard-bridge call [--url URL] [--json] TOOL [KEY=VALUE ...] [-o FILE]
 *
 * Speaks MCP's Streamable HTTP to a running daemon: initialize, the call,
 * then DELETE of the MCP session. Values that parse as JSON are sent as
 * such (x=10, path='[[1,2],[3,4]]', flag=true); anything else as a string. */
#include "bridge/client/client.h"

#include "bridge/client/endpoint.h"
#include "bridge/client/exec.h"

#include "util/io.h"
#include "util/log.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_RESPONSE (64u * 1024 * 1024)

struct response {
	int status;
	char session[64];
	char *body;
	size_t body_len;
};

/* One HTTP/1.1 exchange on a fresh connection (Connection: close). */
static bool exchange(const struct endpoint *e, const char *method, const char *key,
		     const char *session, const char *body, struct response *r, struct error *err)
{
	memset(r, 0, sizeof(*r));
	int fd = client_connect(e, err);
	if (fd < 0)
		return false;
	char head[2048];
	int n = snprintf(head, sizeof(head),
			 "%s %s HTTP/1.1\r\nHost: %s%s%s\r\nAuthorization: Bearer %s\r\n"
			 "Accept: application/json, text/event-stream\r\n"
			 "Content-Type: application/json\r\nMCP-Protocol-Version: 2025-11-25\r\n"
			 "%s%s%sContent-Length: %zu\r\nConnection: close\r\n\r\n",
			 method, e->path, e->unix_socket ? "localhost" : e->host,
			 e->unix_socket ? "" : ":", e->unix_socket ? "" : e->port, key,
			 session ? "Mcp-Session-Id: " : "", session ? session : "",
			 session ? "\r\n" : "", body ? strlen(body) : 0);
	bool ok = n > 0 && (size_t)n < sizeof(head) && io_write_all(fd, head, (size_t)n) &&
		  (!body || io_write_all(fd, body, strlen(body)));
	if (!ok) {
		error_set(err, 0, "sending the request failed: %s", strerror(errno));
		close(fd);
		return false;
	}

	size_t cap = 65536, len = 0;
	char *data = malloc(cap + 1);
	for (;;) {
		if (!data) {
			error_set(err, 0, "out of memory");
			close(fd);
			return false;
		}
		if (len == cap) {
			if (cap >= MAX_RESPONSE) {
				error_set(err, 0, "the response is larger than %u bytes",
					  MAX_RESPONSE);
				free(data);
				close(fd);
				return false;
			}
			cap *= 2;
			char *grown = realloc(data, cap + 1);
			if (!grown)
				free(data);
			data = grown;
			continue;
		}
		ssize_t got = read(fd, data + len, cap - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			error_set(err, 0, "reading the response failed: %s", strerror(errno));
			free(data);
			close(fd);
			return false;
		}
		if (got == 0)
			break;
		len += (size_t)got;
	}
	close(fd);
	data[len] = '\0';

	char *end = strstr(data, "\r\n\r\n");
	if (strncmp(data, "HTTP/1.1 ", 9) != 0 || !end) {
		error_set(err, 0, "the server did not answer in HTTP");
		free(data);
		return false;
	}
	r->status = atoi(data + 9);
	*end = '\0';
	for (char *line = strstr(data, "\r\n"); line && line < end;
	     line = strstr(line + 2, "\r\n")) {
		if (strncasecmp(line + 2, "mcp-session-id:", 15) == 0) {
			const char *v = line + 2 + 15;
			while (*v == ' ')
				v++;
			snprintf(r->session, sizeof(r->session), "%.*s", (int)strcspn(v, "\r\n"),
				 v);
		}
	}
	size_t body_start = (size_t)(end + 4 - data);
	r->body_len = len - body_start;
	r->body = malloc(r->body_len + 1);
	if (r->body) {
		memcpy(r->body, end + 4, r->body_len);
		r->body[r->body_len] = '\0';
	}
	free(data);
	return r->body != NULL;
}

/* The JSON-RPC message of a reply body: JSON, or the data of an SSE event. */
static cJSON *reply_message(const struct response *r)
{
	const char *json = r->body;
	const char *data = strstr(r->body, "data: ");
	if (r->body[0] != '{' && data)
		json = data + 6;
	return cJSON_Parse(json);
}

static bool decode_base64(const char *in, unsigned char **out, size_t *out_len)
{
	size_t len = strlen(in);
	*out = malloc(len / 4 * 3 + 3);
	if (!*out)
		return false;
	unsigned value = 0;
	int bits = 0;
	*out_len = 0;
	for (size_t i = 0; i < len; i++) {
		const char c = in[i];
		int v = c >= 'A' && c <= 'Z'   ? c - 'A'
			: c >= 'a' && c <= 'z' ? c - 'a' + 26
			: c >= '0' && c <= '9' ? c - '0' + 52
			: c == '+'             ? 62
			: c == '/'             ? 63
					       : -1;
		if (c == '=')
			break;
		if (v < 0)
			return false;
		value = value << 6 | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			(*out)[(*out_len)++] = (unsigned char)(value >> bits);
		}
	}
	return true;
}

static cJSON *parse_arguments(int argc, char **argv, const char **output)
{
	cJSON *args = cJSON_CreateObject();
	for (int i = 0; args && i < argc; i++) {
		if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
			*output = argv[++i];
			continue;
		}
		char *eq = strchr(argv[i], '=');
		if (!eq || eq == argv[i]) {
			fprintf(stderr, "lizard-bridge call: '%s' is not KEY=VALUE\n", argv[i]);
			cJSON_Delete(args);
			return NULL;
		}
		char key[128];
		snprintf(key, sizeof(key), "%.*s", (int)(eq - argv[i]), argv[i]);
		/* The whole value must be JSON: "800x600" is a string, not 800. */
		cJSON *value = cJSON_ParseWithOpts(eq + 1, NULL, true);
		if (!value)
			value = cJSON_CreateString(eq + 1);
		cJSON_DeleteItemFromObjectCaseSensitive(args, key);
		cJSON_AddItemToObject(args, key, value);
	}
	return args;
}

static const char usage[] =
	"usage: lizard-bridge call [--url URL] [--json] TOOL [KEY=VALUE ...] [-o FILE]\n"
	"  URL defaults to LIZARD_API_URL, else http://127.0.0.1:7070 (unix:/path works too);\n"
	"  the key comes from LIZARD_API_KEY. Values that parse as JSON are sent as JSON.\n"
	"  Text results go to stdout; --json prints the tool's data (structuredContent) as\n"
	"  one line of JSON instead, {\"text\":...} for tools without data; -o FILE writes\n"
	"  the first image. Exit 0 on success, 1 on a tool error, 2 otherwise.\n"
	"  exec prints the command's stdout and stderr as they arrive and exits with\n"
	"  its exit code (124 when it timed out, 128+N when signal N ended it).\n";

/* --json for a tool without data: its text blocks joined by newlines, so
 * that every successful call prints one JSON object. */
static cJSON *text_as_json(const cJSON *content)
{
	size_t len = 0;
	const cJSON *item;
	cJSON_ArrayForEach(item, content)
	{
		const char *text = cJSON_GetStringValue(
			cJSON_GetObjectItemCaseSensitive(item, "text"));
		len += text ? strlen(text) + 1 : 0;
	}
	char *joined = malloc(len + 1);
	if (!joined)
		return NULL;
	joined[0] = '\0';
	size_t at = 0;
	cJSON_ArrayForEach(item, content)
	{
		const char *text = cJSON_GetStringValue(
			cJSON_GetObjectItemCaseSensitive(item, "text"));
		if (!text)
			continue;
		if (at > 0)
			joined[at++] = '\n';
		memcpy(joined + at, text, strlen(text) + 1);
		at += strlen(text);
	}
	cJSON *object = cJSON_CreateObject();
	if (object && !cJSON_AddStringToObject(object, "text", joined)) {
		cJSON_Delete(object);
		object = NULL;
	}
	free(joined);
	return object;
}

static bool print_json(const cJSON *result)
{
	const cJSON *data = cJSON_GetObjectItemCaseSensitive(result, "structuredContent");
	cJSON *own = NULL;
	if (!cJSON_IsObject(data))
		data = own = text_as_json(cJSON_GetObjectItemCaseSensitive(result, "content"));
	char *line = data ? cJSON_PrintUnformatted(data) : NULL;
	cJSON_Delete(own);
	if (!line) {
		fprintf(stderr, "lizard-bridge call: out of memory printing the result\n");
		return false;
	}
	bool ok = printf("%s\n", line) > 0;
	free(line);
	return ok;
}

static int print_result(const cJSON *result, const char *output, bool json)
{
	bool is_error = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(result, "isError"));
	if (json && !is_error && !print_json(result))
		return 2;
	bool image_written = false;
	const cJSON *item;
	cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(result, "content"))
	{
		const char *type = cJSON_GetStringValue(
			cJSON_GetObjectItemCaseSensitive(item, "type"));
		if (type && strcmp(type, "text") == 0) {
			/* Errors always go to stderr as text; --json keeps stdout
			 * to the one JSON line. */
			const char *text = cJSON_GetStringValue(
				cJSON_GetObjectItemCaseSensitive(item, "text"));
			if (is_error || !json)
				fprintf(is_error ? stderr : stdout, "%s\n", text ? text : "");
		} else if (type && strcmp(type, "image") == 0 && output && !image_written) {
			const char *data = cJSON_GetStringValue(
				cJSON_GetObjectItemCaseSensitive(item, "data"));
			unsigned char *bytes;
			size_t len;
			FILE *f = NULL;
			if (!data || !decode_base64(data, &bytes, &len) ||
			    !(f = fopen(output, "wb")) || fwrite(bytes, 1, len, f) != len) {
				fprintf(stderr, "lizard-bridge call: cannot write %s\n", output);
				if (f)
					fclose(f);
				return 2;
			}
			fclose(f);
			free(bytes);
			image_written = true;
		}
	}
	if (output && !image_written && !is_error)
		fprintf(stderr, "lizard-bridge call: the result had no image for -o %s\n", output);
	return is_error ? 1 : 0;
}

int bridge_client_run(int argc, char **argv)
{
	const char *url = getenv("LIZARD_API_URL");
	bool json = false;
	int first = 0;
	for (;;) {
		if (first + 1 < argc && strcmp(argv[first], "--url") == 0) {
			url = argv[first + 1];
			first += 2;
		} else if (first < argc && strcmp(argv[first], "--json") == 0) {
			json = true;
			first++;
		} else {
			break;
		}
	}
	if (first >= argc || argv[first][0] == '-') {
		fputs(usage, stderr);
		return 2;
	}
	const char *tool = argv[first];
	const char *key = getenv("LIZARD_API_KEY");
	if (!key || !*key) {
		fprintf(stderr, "lizard-bridge call: set LIZARD_API_KEY to the daemon's key\n");
		return 2;
	}
	struct endpoint e;
	if (!url || !*url)
		url = "http://127.0.0.1:7070";
	if (!client_endpoint_parse(url, &e)) {
		fprintf(stderr, "lizard-bridge call: '%s' is not http://HOST:PORT or unix:/path\n",
			url);
		return 2;
	}
	const char *output = NULL;
	cJSON *args = parse_arguments(argc - first - 1, argv + first + 1, &output);
	if (!args)
		return 2;
	if (strcmp(tool, "exec") == 0 && !output)
		return client_exec(&e, url, key, args);

	struct error err;
	struct response r;
	int status = 2;
	static const char initialize[] =
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
		"\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":"
		"\"lizard-bridge call\",\"version\":\"1\"}}}";
	if (!exchange(&e, "POST", key, NULL, initialize, &r, &err)) {
		fprintf(stderr, "lizard-bridge call: cannot reach lizard-bridge at %s: %s\n", url,
			err.message);
		cJSON_Delete(args);
		return 2;
	}
	if (r.status != 200 || !r.session[0]) {
		fprintf(stderr, "lizard-bridge call: %s answered %d: %s\n", url, r.status, r.body);
		free(r.body);
		cJSON_Delete(args);
		return 2;
	}
	char session[64];
	snprintf(session, sizeof(session), "%s", r.session);
	free(r.body);

	static const char initialized[] =
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
	if (exchange(&e, "POST", key, session, initialized, &r, &err))
		free(r.body);

	cJSON *request = cJSON_CreateObject();
	cJSON_AddStringToObject(request, "jsonrpc", "2.0");
	cJSON_AddNumberToObject(request, "id", 2);
	cJSON_AddStringToObject(request, "method", "tools/call");
	cJSON *params = cJSON_AddObjectToObject(request, "params");
	cJSON_AddStringToObject(params, "name", tool);
	cJSON_AddItemToObject(params, "arguments", args);
	char *text = cJSON_PrintUnformatted(request);
	cJSON_Delete(request);
	if (text && exchange(&e, "POST", key, session, text, &r, &err)) {
		cJSON *reply = reply_message(&r);
		const cJSON *result = cJSON_GetObjectItemCaseSensitive(reply, "result");
		const cJSON *error = cJSON_GetObjectItemCaseSensitive(reply, "error");
		if (result) {
			status = print_result(result, output, json);
		} else if (error) {
			fprintf(stderr, "lizard-bridge call: %s\n",
				cJSON_GetStringValue(
					cJSON_GetObjectItemCaseSensitive(error, "message")));
		} else {
			fprintf(stderr, "lizard-bridge call: unexpected answer (%d): %.200s\n",
				r.status, r.body);
		}
		cJSON_Delete(reply);
		free(r.body);
	} else {
		fprintf(stderr, "lizard-bridge call: the call failed: %s\n", err.message);
	}
	free(text);
	if (exchange(&e, "DELETE", key, session, NULL, &r, &err))
		free(r.body);
	return status;
}
