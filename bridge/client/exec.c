/* SPDX-License-Identifier: MIT */
/* `lizard-bridge call exec`: a minimal WebSocket client (RFC 6455) for the
 * daemon's /mcp. Streamable HTTP would stream progress too (as chunked
 * SSE); a WebSocket needs no chunk or event parser here and stays open. It
 * sends initialize and the call with a progressToken, writes each
 * "stdout: "/"stderr: " chunk to our stdout/stderr as it comes, and exits
 * with the command's exit code. */
#include "bridge/client/exec.h"

#include "bridge/client/endpoint.h"

#include "util/base64.h"
#include "util/blob.h"
#include "util/io.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#define MAX_MESSAGE (64u * 1024 * 1024)

struct ws {
	int fd;
	char *pending; /* bytes read past the handshake */
	size_t pending_len;
};

static bool read_exact(struct ws *ws, void *out, size_t len)
{
	size_t from_pending = len < ws->pending_len ? len : ws->pending_len;
	memcpy(out, ws->pending, from_pending);
	memmove(ws->pending, ws->pending + from_pending, ws->pending_len - from_pending);
	ws->pending_len -= from_pending;
	for (size_t done = from_pending; done < len;) {
		ssize_t got = read(ws->fd, (char *)out + done, len - done);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return false;
		done += (size_t)got;
	}
	return true;
}

/* Client frames are masked (RFC 6455 5.3). */
static bool send_frame(struct ws *ws, int opcode, const char *data, size_t len)
{
	unsigned char head[14];
	size_t n = 0;
	head[n++] = (unsigned char)(0x80 | opcode);
	if (len < 126) {
		head[n++] = (unsigned char)(0x80 | len);
	} else if (len < 65536) {
		head[n++] = 0x80 | 126;
		head[n++] = (unsigned char)(len >> 8);
		head[n++] = (unsigned char)len;
	} else {
		head[n++] = 0x80 | 127;
		for (int i = 7; i >= 0; i--)
			head[n++] = (unsigned char)((uint64_t)len >> (8 * i));
	}
	unsigned char mask[4];
	if (getrandom(mask, sizeof(mask), 0) != (ssize_t)sizeof(mask))
		return false;
	memcpy(head + n, mask, 4);
	n += 4;
	char *masked = malloc(len ? len : 1);
	if (!masked)
		return false;
	for (size_t i = 0; i < len; i++)
		masked[i] = (char)(data[i] ^ mask[i % 4]);
	bool ok = io_write_all(ws->fd, head, n) && io_write_all(ws->fd, masked, len);
	free(masked);
	return ok;
}

/* The next whole text message (NUL-terminated, caller frees), answering
 * pings on the way; NULL when the connection ends. */
static char *read_message(struct ws *ws)
{
	char *message = NULL;
	size_t len = 0;
	for (;;) {
		unsigned char head[2];
		if (!read_exact(ws, head, 2))
			break;
		int opcode = head[0] & 0x0f;
		bool fin = head[0] & 0x80;
		uint64_t size = head[1] & 0x7f;
		if (size == 126 || size == 127) {
			unsigned char ext[8];
			int bytes = size == 126 ? 2 : 8;
			if (!read_exact(ws, ext, (size_t)bytes))
				break;
			size = 0;
			for (int i = 0; i < bytes; i++)
				size = size << 8 | ext[i];
		}
		unsigned char mask[4] = { 0 };
		if ((head[1] & 0x80) && !read_exact(ws, mask, 4))
			break;
		if (size > MAX_MESSAGE || len + size > MAX_MESSAGE)
			break;
		char *grown = realloc(message, len + (size_t)size + 1);
		if (!grown)
			break;
		message = grown;
		if (!read_exact(ws, message + len, (size_t)size))
			break;
		for (uint64_t i = 0; i < size; i++)
			message[len + i] ^= (char)mask[i % 4];
		if (opcode == 0x8)
			break;       /* close */
		if (opcode == 0x9) { /* ping */
			send_frame(ws, 0xA, message + len, (size_t)size);
			continue;
		}
		if (opcode == 0xA)
			continue;
		len += (size_t)size;
		if (fin) {
			message[len] = '\0';
			return message;
		}
	}
	free(message);
	return NULL;
}

static bool handshake(struct ws *ws, const struct endpoint *e, const char *key, struct error *err)
{
	unsigned char nonce[16];
	if (getrandom(nonce, sizeof(nonce), 0) != (ssize_t)sizeof(nonce))
		return false;
	struct blob *nonce_text = base64_encode(nonce, sizeof(nonce));
	if (!nonce_text)
		return false;
	char request[2048];
	int n = snprintf(request, sizeof(request),
			 "GET %s HTTP/1.1\r\nHost: %s%s%s\r\nUpgrade: websocket\r\n"
			 "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
			 "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: mcp\r\n"
			 "Authorization: Bearer %s\r\n\r\n",
			 e->path, e->unix_socket ? "localhost" : e->host, e->unix_socket ? "" : ":",
			 e->unix_socket ? "" : e->port, nonce_text->data, key);
	blob_unref(nonce_text);
	if (n <= 0 || (size_t)n >= sizeof(request) || !io_write_all(ws->fd, request, (size_t)n)) {
		error_set(err, 0, "sending the upgrade failed");
		return false;
	}
	char reply[4096];
	size_t used = 0;
	char *end = NULL;
	while (!end && used < sizeof(reply) - 1) {
		ssize_t got = read(ws->fd, reply + used, sizeof(reply) - 1 - used);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		used += (size_t)got;
		reply[used] = '\0';
		end = strstr(reply, "\r\n\r\n");
	}
	if (!end || strncmp(reply, "HTTP/1.1 101", 12) != 0) {
		error_set(err, 0, "the WebSocket upgrade was refused: %.60s",
			  used ? reply : "no answer");
		return false;
	}
	size_t rest = used - (size_t)(end + 4 - reply);
	ws->pending = malloc(rest ? rest : 1);
	if (!ws->pending)
		return false;
	memcpy(ws->pending, end + 4, rest);
	ws->pending_len = rest;
	return true;
}

static bool send_json(struct ws *ws, cJSON *json)
{
	char *text = cJSON_PrintUnformatted(json);
	bool ok = text && send_frame(ws, 0x1, text, strlen(text));
	free(text);
	return ok;
}

/* Writes a progress chunk to the stream its prefix names. */
static void print_chunk(const char *message)
{
	if (strncmp(message, "stdout: ", 8) == 0) {
		fputs(message + 8, stdout);
		fflush(stdout);
	} else if (strncmp(message, "stderr: ", 8) == 0) {
		fputs(message + 8, stderr);
		fflush(stderr);
	}
}

static int signal_number(const char *name)
{
	for (int sig = 1; sig < NSIG; sig++) {
		const char *abbrev = sigabbrev_np(sig);
		if (abbrev && strcmp(abbrev, name) == 0)
			return sig;
	}
	return 0;
}

/* The exit status `call exec` ends with, from the tool's result. */
static int finish(const cJSON *result, bool streamed)
{
	const cJSON *content = cJSON_GetObjectItemCaseSensitive(result, "content");
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(result, "isError"))) {
		const cJSON *item;
		cJSON_ArrayForEach(item, content)
		{
			const char *text = cJSON_GetStringValue(
				cJSON_GetObjectItemCaseSensitive(item, "text"));
			fprintf(stderr, "%s\n", text ? text : "");
		}
		return 1;
	}
	const cJSON *data = cJSON_GetObjectItemCaseSensitive(result, "structuredContent");
	if (!streamed) {
		const char *out = cJSON_GetStringValue(
			cJSON_GetObjectItemCaseSensitive(data, "stdout"));
		const char *err = cJSON_GetStringValue(
			cJSON_GetObjectItemCaseSensitive(data, "stderr"));
		fputs(out ? out : "", stdout);
		fputs(err ? err : "", stderr);
	}
	const char *note = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(data, "note"));
	if (note)
		fprintf(stderr, "lizard-bridge call: %s\n", note);
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(data, "timed_out"))) {
		fprintf(stderr, "lizard-bridge call: the command timed out and was killed\n");
		return 124;
	}
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(data, "exit_code");
	if (cJSON_IsNumber(code))
		return code->valueint;
	const char *sig = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(data, "signal"));
	return 128 + (sig ? signal_number(sig) : 0);
}

int client_exec(const struct endpoint *e, const char *url, const char *key, cJSON *args)
{
	struct error err;
	struct ws ws = { .fd = client_connect(e, &err) };
	if (ws.fd < 0) {
		fprintf(stderr, "lizard-bridge call: cannot reach lizard-bridge at %s: %s\n", url,
			err.message);
		cJSON_Delete(args);
		return 2;
	}
	int status = 2;
	cJSON *init = cJSON_Parse(
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
		"\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
		"\"clientInfo\":{\"name\":\"lizard-bridge call\",\"version\":\"1\"}}}");
	cJSON *initialized = cJSON_Parse(
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
	cJSON *request = cJSON_CreateObject();
	cJSON_AddStringToObject(request, "jsonrpc", "2.0");
	cJSON_AddNumberToObject(request, "id", 2);
	cJSON_AddStringToObject(request, "method", "tools/call");
	cJSON *params = cJSON_AddObjectToObject(request, "params");
	cJSON_AddStringToObject(params, "name", "exec");
	cJSON_AddItemToObject(params, "arguments", args);
	cJSON *meta = cJSON_AddObjectToObject(params, "_meta");
	cJSON_AddStringToObject(meta, "progressToken", "exec");

	if (!handshake(&ws, e, key, &err)) {
		fprintf(stderr, "lizard-bridge call: %s: %s\n", url, err.message);
		goto done;
	}
	if (!send_json(&ws, init))
		goto lost;
	bool sent_call = false, streamed = false;
	char *text;
	while ((text = read_message(&ws))) {
		cJSON *message = cJSON_Parse(text);
		free(text);
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(message, "id");
		const char *method = cJSON_GetStringValue(
			cJSON_GetObjectItemCaseSensitive(message, "method"));
		const cJSON *error = cJSON_GetObjectItemCaseSensitive(message, "error");
		if (error) {
			fprintf(stderr, "lizard-bridge call: %s\n",
				cJSON_GetStringValue(
					cJSON_GetObjectItemCaseSensitive(error, "message")));
			cJSON_Delete(message);
			goto done;
		}
		if (cJSON_IsNumber(id) && id->valueint == 1 && !sent_call) {
			sent_call = true;
			if (!send_json(&ws, initialized) || !send_json(&ws, request)) {
				cJSON_Delete(message);
				goto lost;
			}
		} else if (method && strcmp(method, "notifications/progress") == 0) {
			const cJSON *p = cJSON_GetObjectItemCaseSensitive(message, "params");
			const char *chunk = cJSON_GetStringValue(
				cJSON_GetObjectItemCaseSensitive(p, "message"));
			if (chunk) {
				print_chunk(chunk);
				streamed = true;
			}
		} else if (cJSON_IsNumber(id) && id->valueint == 2) {
			status = finish(cJSON_GetObjectItemCaseSensitive(message, "result"),
					streamed);
			cJSON_Delete(message);
			send_frame(&ws, 0x8, "\x03\xe8", 2); /* close, 1000 */
			goto done;
		}
		cJSON_Delete(message);
	}
lost:
	fprintf(stderr, "lizard-bridge call: the connection to %s ended before the result\n", url);
done:
	cJSON_Delete(init);
	cJSON_Delete(initialized);
	cJSON_Delete(request);
	free(ws.pending);
	close(ws.fd);
	return status;
}
