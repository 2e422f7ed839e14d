/* SPDX-License-Identifier: MIT */
/* What run_code asks and what it gives back, shared by the files of the
 * code interpreter (code.c, code_process.c) and its callers. Types only. */
#ifndef LIZARD_BRIDGE_SESSION_CODE_TYPES_H
#define LIZARD_BRIDGE_SESSION_CODE_TYPES_H

#include "kernel/execute.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BRIDGE_CODE_ID_MAX 40

struct bridge_code_request {
	const char *code;
	const char *language;    /* NULL with a context; else python, bash or javascript */
	const char *context;     /* NULL: the default (python) or a fresh process */
	const char *const *envs; /* NAME=value for this call only; may be NULL */
	int64_t timeout_ms;
	/* Each stdout or stderr chunk as it comes; may be NULL. */
	void (*on_output)(void *opaque, const char *stream, const char *text, size_t length);
	/* Polled while it runs; true stops it as the time limit would (a
	 * client that cancelled). May be NULL. */
	bool (*should_stop)(void *opaque);
	void *opaque;
};

struct bridge_code_result {
	struct kernel_execution execution; /* logs, results, error, count */
	char context[BRIDGE_CODE_ID_MAX];  /* "" for a fresh process */
	char language[16];
	bool has_exit_code; /* bash and javascript */
	int exit_code;
	bool timed_out;
	bool restarted; /* the context's state is gone */
	char note[400]; /* what happened to the context, for the reader */
};

#endif
