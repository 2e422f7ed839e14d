/* SPDX-License-Identifier: MIT */
/* One execute_request and everything the kernel says about it, collected
 * within bounds: stdout and stderr as the chunks the kernel sent, keeping
 * the end when there is too much (the end of a log is where the answer and
 * the error are); rich outputs as their MIME bundles, each and all of them
 * under a byte limit, what was left out counted by name; the error; the
 * execution count. The call's time limit is ours, not the kernel's: at the
 * limit the kernel is sent interrupt_request, and a kernel still busy a
 * grace later is reported stuck, for the caller to restart. An execution
 * is finished when both the execute_reply and iopub's idle status for it
 * have come, as in jupyter_client; a reply without the idle means iopub
 * lost messages, and says so. */
#ifndef LIZARD_KERNEL_EXECUTE_H
#define LIZARD_KERNEL_EXECUTE_H

#include "kernel/client.h"
#include "util/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cJSON;

struct kernel_limits {
	size_t log_bytes;    /* per stream, stdout and stderr each */
	size_t log_chunks;   /* per stream */
	size_t result_bytes; /* one rich output's data */
	size_t total_bytes;  /* all rich outputs together */
};

/* One stream's chunks, oldest first, after what was dropped from the front. */
struct kernel_log {
	char **chunks;
	size_t count, capacity;
	size_t bytes;         /* held */
	size_t dropped_bytes; /* let go of from the front */
	size_t dropped_chunks;
};

/* Appends a chunk, keeping the end: old chunks go first, and a chunk
 * larger than the whole bound keeps its tail, cut on a character boundary.
 * False when memory ran out. */
bool kernel_log_append(struct kernel_log *log, const struct kernel_limits *limits, const char *text,
		       size_t length);
void kernel_log_finish(struct kernel_log *log);

struct kernel_result {
	bool is_main;       /* execute_result: the last expression's value */
	struct cJSON *data; /* MIME type -> value */
	size_t bytes;
};

enum kernel_outcome {
	KERNEL_OUTCOME_DONE,        /* ran to the end, with or without an error */
	KERNEL_OUTCOME_INTERRUPTED, /* the time limit interrupted it; state survives */
	KERNEL_OUTCOME_STUCK,       /* still busy after the interrupt's grace */
	KERNEL_OUTCOME_DIED,        /* the kernel's sockets closed */
	KERNEL_OUTCOME_CANCELLED,   /* cancel_fd fired */
};

struct kernel_execution {
	enum kernel_outcome outcome;
	int execution_count; /* 0 when the reply had none */
	struct kernel_log out, err;
	struct kernel_result *results;
	size_t result_count, result_capacity;
	size_t omitted_results, omitted_bytes; /* over result_bytes or total_bytes */
	size_t result_total;
	bool has_error;
	char *error_name, *error_value, *traceback; /* plain text, no colour codes */
	bool output_lost;         /* iopub dropped a message (over 16 MiB), or no idle came */
	unsigned long long stray; /* messages for an earlier request, skipped */
	int64_t elapsed_ms;
};

struct kernel_execute_options {
	const char *code;
	int64_t timeout_ms;
	int64_t grace_ms; /* after the interrupt, before the kernel is called stuck */
	const struct kernel_limits *limits;
	int cancel_fd; /* -1: none */
	/* Polled a few times a second; true interrupts the code as the time
	 * limit does (a client that gave up). May be NULL. */
	bool (*should_stop)(void *opaque);
	bool silent; /* no history, no execute_input, no count: the bridge's own code */
	/* Called with each stream chunk as it arrives (name "stdout" or
	 * "stderr"), before it is kept. */
	void (*on_stream)(void *opaque, const char *name, const char *text, size_t length);
	void *opaque;
};

/* Runs code and fills *e (kernel_execution_finish releases it). False only
 * when the request could not be sent or the sockets failed; every outcome
 * of the code itself, including a timeout or a dead kernel, is true. */
bool kernel_execute(struct kernel_client *k, const struct kernel_execute_options *o,
		    struct kernel_execution *e, struct error *err);
void kernel_execution_finish(struct kernel_execution *e);

/* Removes ANSI escape sequences (a traceback's colours) in place. */
void kernel_strip_ansi(char *text);

#endif
