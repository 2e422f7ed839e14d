/* SPDX-License-Identifier: MIT */
#include "kernel/execute.h"

#include "util/clock.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* How long the idle status may trail the reply before iopub is called
 * lossy. Both are sent within a millisecond of each other. */
#define IDLE_AFTER_REPLY_MS 2000
/* For iopub to come back after it dropped an oversized message. */
#define RESYNC_TIMEOUT_MS 10000
/* How often should_stop is asked. */
#define STOP_POLL_MS 200

void kernel_strip_ansi(char *text)
{
	char *out = text;
	for (const char *p = text; *p;) {
		if (*p == '\x1b' && p[1] == '[') {
			/* CSI: parameters and intermediates, then one final byte. */
			p += 2;
			while (*p && !(*p >= 0x40 && *p <= 0x7e))
				p++;
			if (*p)
				p++;
			continue;
		}
		if (*p == '\x1b' && p[1]) {
			p += 2;
			continue;
		}
		*out++ = *p++;
	}
	*out = '\0';
}

static void log_drop_front(struct kernel_log *log)
{
	log->bytes -= strlen(log->chunks[0]);
	log->dropped_bytes += strlen(log->chunks[0]);
	log->dropped_chunks++;
	free(log->chunks[0]);
	memmove(log->chunks, log->chunks + 1, (log->count - 1) * sizeof(*log->chunks));
	log->count--;
}

bool kernel_log_append(struct kernel_log *log, const struct kernel_limits *l, const char *text,
		       size_t length)
{
	if (length > l->log_bytes) {
		size_t skip = length - l->log_bytes;
		while (skip < length && ((unsigned char)text[skip] & 0xc0) == 0x80)
			skip++;
		log->dropped_bytes += skip;
		text += skip;
		length -= skip;
	}
	while (log->count > 0 &&
	       (log->bytes + length > l->log_bytes || log->count >= l->log_chunks))
		log_drop_front(log);
	if (length == 0)
		return true;
	if (log->count == log->capacity) {
		size_t capacity = log->capacity ? log->capacity * 2 : 16;
		if (capacity > l->log_chunks)
			capacity = l->log_chunks;
		char **grown = realloc(log->chunks, capacity * sizeof(*grown));
		if (!grown)
			return false;
		log->chunks = grown;
		log->capacity = capacity;
	}
	char *copy = strndup(text, length);
	if (!copy)
		return false;
	log->chunks[log->count++] = copy;
	log->bytes += length;
	return true;
}

void kernel_log_finish(struct kernel_log *log)
{
	for (size_t i = 0; i < log->count; i++)
		free(log->chunks[i]);
	free(log->chunks);
	memset(log, 0, sizeof(*log));
}

/* The bytes of a MIME bundle's values: strings by length, the rest (JSON
 * values) as printed. */
static size_t bundle_bytes(const cJSON *data)
{
	size_t total = 0;
	const cJSON *item;
	cJSON_ArrayForEach(item, data)
	{
		if (cJSON_IsString(item)) {
			total += strlen(item->valuestring);
		} else {
			char *text = cJSON_PrintUnformatted(item);
			total += text ? strlen(text) : 0;
			free(text);
		}
	}
	return total;
}

static bool add_result(struct kernel_execution *e, const struct kernel_limits *l, cJSON *content,
		       bool is_main)
{
	cJSON *data = cJSON_GetObjectItemCaseSensitive(content, "data");
	if (!cJSON_IsObject(data))
		return true;
	size_t bytes = bundle_bytes(data);
	if (bytes > l->result_bytes || e->result_total + bytes > l->total_bytes) {
		e->omitted_results++;
		e->omitted_bytes += bytes;
		return true;
	}
	if (e->result_count == e->result_capacity) {
		size_t capacity = e->result_capacity ? e->result_capacity * 2 : 4;
		struct kernel_result *grown = realloc(e->results, capacity * sizeof(*grown));
		if (!grown)
			return false;
		e->results = grown;
		e->result_capacity = capacity;
	}
	cJSON_DetachItemViaPointer(content, data);
	e->results[e->result_count++] = (struct kernel_result){ .is_main = is_main,
								.data = data,
								.bytes = bytes };
	e->result_total += bytes;
	return true;
}

static char *string_copy(const cJSON *object, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(object, name);
	return strdup(cJSON_IsString(v) ? v->valuestring : "");
}

/* error on iopub, or the reply's own fields when iopub's never came. */
static bool set_error(struct kernel_execution *e, const cJSON *content)
{
	free(e->error_name);
	free(e->error_value);
	free(e->traceback);
	e->has_error = true;
	e->error_name = string_copy(content, "ename");
	e->error_value = string_copy(content, "evalue");
	size_t size = 1;
	const cJSON *line;
	const cJSON *lines = cJSON_GetObjectItemCaseSensitive(content, "traceback");
	cJSON_ArrayForEach(line, lines) if (cJSON_IsString(line))
		size += strlen(line->valuestring) + 1;
	e->traceback = malloc(size);
	if (!e->error_name || !e->error_value || !e->traceback)
		return false;
	size_t at = 0;
	cJSON_ArrayForEach(line, lines)
	{
		if (!cJSON_IsString(line))
			continue;
		size_t n = strlen(line->valuestring);
		if (at > 0)
			e->traceback[at++] = '\n';
		memcpy(e->traceback + at, line->valuestring, n);
		at += n;
	}
	e->traceback[at] = '\0';
	kernel_strip_ansi(e->traceback);
	kernel_strip_ansi(e->error_value);
	return true;
}

static bool on_iopub(struct kernel_execution *e, const struct kernel_execute_options *o,
		     const struct kernel_message *m, bool *idle)
{
	const char *type = m->msg_type;
	if (strcmp(type, "status") == 0) {
		const cJSON *state = cJSON_GetObjectItemCaseSensitive(m->content,
								      "execution_state");
		if (cJSON_IsString(state) && strcmp(state->valuestring, "idle") == 0)
			*idle = true;
		return true;
	}
	if (strcmp(type, "stream") == 0) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(m->content, "name");
		const cJSON *text = cJSON_GetObjectItemCaseSensitive(m->content, "text");
		if (!cJSON_IsString(name) || !cJSON_IsString(text))
			return true;
		bool is_err = strcmp(name->valuestring, "stderr") == 0;
		size_t length = strlen(text->valuestring);
		if (o->on_stream)
			o->on_stream(o->opaque, is_err ? "stderr" : "stdout", text->valuestring,
				     length);
		return kernel_log_append(is_err ? &e->err : &e->out, o->limits, text->valuestring,
					 length);
	}
	if (strcmp(type, "execute_result") == 0)
		return add_result(e, o->limits, m->content, true);
	if (strcmp(type, "display_data") == 0)
		return add_result(e, o->limits, m->content, false);
	if (strcmp(type, "error") == 0)
		return set_error(e, m->content);
	return true;
}

static void on_reply(struct kernel_execution *e, const struct kernel_message *m)
{
	const cJSON *count = cJSON_GetObjectItemCaseSensitive(m->content, "execution_count");
	if (cJSON_IsNumber(count))
		e->execution_count = count->valueint;
	const cJSON *status = cJSON_GetObjectItemCaseSensitive(m->content, "status");
	if (!e->has_error && cJSON_IsString(status) && strcmp(status->valuestring, "error") == 0)
		set_error(e, m->content);
	if (!e->has_error && cJSON_IsString(status) &&
	    strcmp(status->valuestring, "aborted") == 0) {
		e->has_error = true;
		e->error_name = strdup("ExecutionAborted");
		e->error_value = strdup("the kernel aborted this request after an earlier error");
		e->traceback = strdup("");
	}
}

static cJSON *execute_request(const char *code, bool silent)
{
	cJSON *c = cJSON_CreateObject();
	if (!c || !cJSON_AddStringToObject(c, "code", code) ||
	    !cJSON_AddBoolToObject(c, "silent", silent) ||
	    !cJSON_AddBoolToObject(c, "store_history", !silent) ||
	    !cJSON_AddObjectToObject(c, "user_expressions") ||
	    !cJSON_AddBoolToObject(c, "allow_stdin", false) ||
	    /* True makes ipykernel abort requests that arrive just after an
	     * error (its abort window), which would fail the next call. */
	    !cJSON_AddBoolToObject(c, "stop_on_error", false)) {
		cJSON_Delete(c);
		return NULL;
	}
	return c;
}

bool kernel_execute(struct kernel_client *k, const struct kernel_execute_options *o,
		    struct kernel_execution *e, struct error *err)
{
	memset(e, 0, sizeof(*e));
	int64_t start = clock_monotonic_ms();
	if (!kernel_client_resync(k, start + RESYNC_TIMEOUT_MS, err))
		return false;
	unsigned long long drops = kernel_client_counts(k).iopub_drops;
	char id[40];
	cJSON *request = execute_request(o->code, o->silent);
	if (!request)
		return error_set(err, ENOMEM, "building execute_request");
	if (!kernel_client_send(k, KERNEL_SHELL, "execute_request", request, id, err))
		return false;

	bool replied = false, idle = false, interrupted = false;
	int64_t limit = start + o->timeout_ms;
	int64_t idle_by = 0;
	while (!(replied && idle)) {
		/* iopub's connection is gone: its idle will not come. */
		if (replied && kernel_client_counts(k).iopub_drops != drops)
			break;
		int64_t deadline = interrupted ? limit + o->grace_ms : limit;
		if (replied)
			deadline = idle_by;
		/* A client that stops waiting counts as the time limit. */
		if (!interrupted && !replied && o->should_stop && o->should_stop(o->opaque)) {
			deadline = clock_monotonic_ms();
			limit = deadline;
		}
		int64_t wake = deadline;
		if (o->should_stop && !interrupted && wake > clock_monotonic_ms() + STOP_POLL_MS)
			wake = clock_monotonic_ms() + STOP_POLL_MS;
		enum kernel_channel channel;
		struct kernel_message m;
		enum kernel_receive_result r = kernel_client_receive(k, wake, o->cancel_fd,
								     &channel, &m, err);
		if (r == KERNEL_RECEIVE_TIMEOUT && wake < deadline)
			continue;
		if (r == KERNEL_RECEIVE_FAILED) {
			kernel_execution_finish(e);
			return false;
		}
		if (r == KERNEL_RECEIVE_GONE) {
			e->outcome = KERNEL_OUTCOME_DIED;
			break;
		}
		if (r == KERNEL_RECEIVE_CANCELLED) {
			e->outcome = KERNEL_OUTCOME_CANCELLED;
			break;
		}
		if (r == KERNEL_RECEIVE_TIMEOUT) {
			if (replied) {
				e->output_lost = true;
				break;
			}
			if (interrupted) {
				e->outcome = KERNEL_OUTCOME_STUCK;
				break;
			}
			/* The kernel turns SIGINT into KeyboardInterrupt; its
			 * reply then ends the call as usual. */
			interrupted = true;
			if (!kernel_client_send(k, KERNEL_CONTROL, "interrupt_request",
						cJSON_CreateObject(), NULL, err)) {
				kernel_execution_finish(e);
				return false;
			}
			continue;
		}
		bool ok = true;
		if (strcmp(m.parent_id, id) != 0) {
			e->stray++;
		} else if (channel == KERNEL_IOPUB) {
			ok = on_iopub(e, o, &m, &idle);
		} else if (channel == KERNEL_SHELL && strcmp(m.msg_type, "execute_reply") == 0) {
			on_reply(e, &m);
			replied = true;
			idle_by = clock_monotonic_ms() + IDLE_AFTER_REPLY_MS;
		}
		kernel_message_free(&m);
		if (!ok) {
			kernel_execution_finish(e);
			return error_set(err, ENOMEM, "keeping the kernel's output");
		}
	}
	if (replied && interrupted)
		e->outcome = KERNEL_OUTCOME_INTERRUPTED;
	if (kernel_client_counts(k).iopub_drops != drops)
		e->output_lost = true;
	e->elapsed_ms = clock_monotonic_ms() - start;
	return true;
}

void kernel_execution_finish(struct kernel_execution *e)
{
	kernel_log_finish(&e->out);
	kernel_log_finish(&e->err);
	for (size_t i = 0; i < e->result_count; i++)
		cJSON_Delete(e->results[i].data);
	free(e->results);
	free(e->error_name);
	free(e->error_value);
	free(e->traceback);
	memset(e, 0, sizeof(*e));
}
