/* SPDX-License-Identifier: MIT */
#include "sandbox/files.h"
#include "sandbox/run.h"
#include "sandbox/state.h"
#include "sandbox/process.h"
/* The daemon's side of the file operations: each runs as a built-in
 * program inside the sandbox (files_inside.c), its data through pipes. */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FILE_OP_TIMEOUT_MS 60000

static bool run_builtin(struct sandbox *s, enum sandbox_user user, const char *const *argv,
			const void *input, size_t input_len, size_t max_output,
			struct sandbox_run_result *r, struct error *err)
{
	struct sandbox_run run = {
		.command = { .name = argv[0] + 1,
			     .argv = argv,
			     .user = user,
			     .builtin = true,
			     .stdin_fd = -1,
			     .stdout_fd = -1,
			     .stderr_fd = -1,
			     .fd3 = -1 },
		.input = input,
		.input_len = input_len,
		.timeout_ms = FILE_OP_TIMEOUT_MS,
		.max_output = max_output,
	};
	if (!sandbox_run(s, &run, r, err))
		return false;
	if (r->timed_out) {
		error_set(err, 0, "the file operation did not finish within %d s",
			  FILE_OP_TIMEOUT_MS / 1000);
		sandbox_run_result_finish(r);
		return false;
	}
	if (!r->exited || r->exit_code != 0) {
		error_set(err, 0, "%s", r->err.len ? r->err.data : "the file operation failed");
		sandbox_run_result_finish(r);
		return false;
	}
	return true;
}

bool sandbox_read_file(struct sandbox *s, enum sandbox_user user, const char *path, uint64_t offset,
		       uint64_t length, struct sandbox_file_data *out, struct error *err)
{
	memset(out, 0, sizeof(*out));
	if (length > SANDBOX_FILE_MAX_BYTES)
		length = SANDBOX_FILE_MAX_BYTES;
	char offset_text[24], length_text[24];
	snprintf(offset_text, sizeof(offset_text), "%" PRIu64, offset);
	snprintf(length_text, sizeof(length_text), "%" PRIu64, length);
	const char *argv[] = { "@read", path, offset_text, length_text, NULL };
	struct sandbox_run_result r;
	if (!run_builtin(s, user, argv, NULL, 0, SANDBOX_FILE_MAX_BYTES + 64, &r, err))
		return false;
	char *newline = memchr(r.out.data, '\n', r.out.len < 24 ? r.out.len : 24);
	if (!newline) {
		error_set(err, 0, "the sandbox sent a malformed file");
		sandbox_run_result_finish(&r);
		return false;
	}
	size_t header = (size_t)(newline - r.out.data) + 1;
	out->len = r.out.len - header;
	out->sized = r.out.data[0] != '?';
	if (out->sized) {
		out->size = strtoull(r.out.data, NULL, 10);
	} else {
		/* The byte beyond length, if it came, says there is more. */
		out->more = out->len > length;
		if (out->more)
			out->len = (size_t)length;
		out->size = offset + out->len;
	}
	memmove(r.out.data, r.out.data + header, out->len);
	r.out.data[out->len] = '\0';
	out->data = r.out.data;
	r.out.data = NULL;
	sandbox_run_result_finish(&r);
	return true;
}

bool sandbox_write_file(struct sandbox *s, enum sandbox_user user, const char *path,
			const void *data, size_t len, unsigned mode, struct error *err)
{
	if (len > SANDBOX_FILE_MAX_BYTES) {
		error_set(err, 0, "%zu bytes is more than the %d MiB a call may write", len,
			  SANDBOX_FILE_MAX_BYTES / (1024 * 1024));
		return false;
	}
	char mode_text[16];
	snprintf(mode_text, sizeof(mode_text), "%o", mode & 07777);
	const char *argv[] = { "@write", path, mode_text, NULL };
	struct sandbox_run_result r;
	if (!run_builtin(s, user, argv, data, len, 4096, &r, err))
		return false;
	sandbox_run_result_finish(&r);
	return true;
}

void sandbox_free_entries(struct sandbox_dir_entry *entries, size_t count)
{
	for (size_t i = 0; entries && i < count; i++)
		free(entries[i].name);
	free(entries);
}

bool sandbox_list_files(struct sandbox *s, enum sandbox_user user, const char *path,
			struct sandbox_dir_entry **entries, size_t *count, bool *truncated,
			struct error *err)
{
	*entries = NULL;
	*count = 0;
	*truncated = false;
	const char *argv[] = { "@list", path, NULL };
	struct sandbox_run_result r;
	/* Names are at most 255 bytes; numbers and separators add < 50. */
	if (!run_builtin(s, user, argv, NULL, 0, (size_t)SANDBOX_LIST_MAX_ENTRIES * 310, &r, err))
		return false;
	size_t records = 0;
	for (size_t i = 0; i < r.out.len; i++)
		records += r.out.data[i] == '\0';
	struct sandbox_dir_entry *list = calloc(records ? records : 1, sizeof(*list));
	bool ok = list != NULL;
	size_t n = 0;
	for (char *p = r.out.data, *end = r.out.data + r.out.len; ok && p < end && n < records;) {
		size_t len = strlen(p);
		char type;
		uint64_t size;
		int64_t mtime;
		int name_at = 0;
		/* Exactly one space before the name, which may begin with spaces. */
		if (sscanf(p, "%c %" SCNu64 " %" SCNd64 "%n", &type, &size, &mtime, &name_at) ==
			    3 &&
		    name_at > 0 && p[name_at] == ' ') {
			name_at++;
			list[n] = (struct sandbox_dir_entry){ .type = type,
							      .size = size,
							      .mtime = mtime,
							      .name = strdup(p + name_at) };
			ok = list[n++].name != NULL;
		}
		p += len + 1;
	}
	*truncated = n >= SANDBOX_LIST_MAX_ENTRIES;
	sandbox_run_result_finish(&r);
	if (!ok) {
		sandbox_free_entries(list, n);
		error_set(err, 0, "out of memory");
		return false;
	}
	*entries = list;
	*count = n;
	return true;
}
