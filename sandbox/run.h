/* SPDX-License-Identifier: MIT */
/* A command run to its end in a sandbox, its output kept (the last bytes of
 * each stream) and streamed as it comes: what exec is. */
#ifndef LIZARD_SANDBOX_RUN_H
#define LIZARD_SANDBOX_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sandbox/process.h"
#include "util/error.h"

struct sandbox;

/* Output of a stream, keeping the last max bytes of it. */
struct sandbox_output {
	char *data;
	size_t len;
	uint64_t total; /* bytes the program wrote */
};

enum sandbox_stream { SANDBOX_STDOUT = 1, SANDBOX_STDERR = 2 };

struct sandbox_run {
	struct sandbox_command command; /* its fds are ignored */
	const void *input;              /* stdin, then closed; may be NULL */
	size_t input_len;
	int timeout_ms;
	size_t max_output; /* per stream */
	/* Called as output arrives, and polled for a stop; both may be NULL. */
	void (*on_output)(void *context, enum sandbox_stream stream, const char *data, size_t len);
	bool (*should_stop)(void *context);
	void *context;
};

struct sandbox_run_result {
	struct sandbox_output out, err;
	bool exited; /* else killed by signal */
	int exit_code;
	int signal;
	bool timed_out;
	bool stopped; /* should_stop said so */
	int64_t duration_ms;
};

/* Runs a command to its end (or its timeout, after which it is killed with
 * everything it started). False with a message only when it could not run;
 * a non-zero exit is a result. */
bool sandbox_run(struct sandbox *sandbox, const struct sandbox_run *run,
		 struct sandbox_run_result *result, struct error *err);
void sandbox_run_result_finish(struct sandbox_run_result *result);

#endif
