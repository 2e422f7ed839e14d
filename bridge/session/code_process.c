/* SPDX-License-Identifier: MIT */
/* bash and javascript (see code_process.h). */
#include "bridge/session/code_process.h"

#include "kernel/execute.h"
#include "sandbox/process.h"
#include "sandbox/run.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What one argument to bash or node may hold (the kernel's MAX_ARG_STRLEN
 * is 128 KiB). */
#define PROCESS_CODE_MAX (120 * 1024)

void code_process_set_error(struct kernel_execution *e, const char *name, const char *value)
{
	free(e->error_name);
	free(e->error_value);
	free(e->traceback);
	e->has_error = true;
	e->error_name = strdup(name);
	e->error_value = strdup(value);
	e->traceback = strdup("");
}

struct process_stream {
	const struct bridge_code_request *request;
	const struct kernel_limits *limits;
	struct bridge_code_result *result;
	int cancel_fd;
};

static void process_output(void *opaque, enum sandbox_stream stream, const char *data, size_t len)
{
	struct process_stream *p = opaque;
	const char *name = stream == SANDBOX_STDOUT ? "stdout" : "stderr";
	struct kernel_log *log = stream == SANDBOX_STDOUT ? &p->result->execution.out
							  : &p->result->execution.err;
	kernel_log_append(log, p->limits, data, len);
	if (p->request->on_output)
		p->request->on_output(p->request->opaque, name, data, len);
}

static bool process_should_stop(void *opaque)
{
	struct process_stream *p = opaque;
	struct pollfd ended = { .fd = p->cancel_fd, .events = POLLIN };
	return poll(&ended, 1, 0) > 0 ||
	       (p->request->should_stop && p->request->should_stop(p->request->opaque));
}

/* bash and javascript: a fresh process each call, its output kept as it
 * came, its exit status reported. */
bool code_process_run(struct sandbox *sandbox, bool javascript, const char *cwd,
		      const struct bridge_code_request *request, const struct kernel_limits *limits,
		      int cancel_fd, struct bridge_code_result *result, struct error *err)
{
	if (strlen(request->code) > PROCESS_CODE_MAX)
		return error_set(err, E2BIG,
				 "%s code is passed as one argument, at most %d KiB; write a "
				 "longer program to a file and run that",
				 javascript ? "javascript" : "bash", PROCESS_CODE_MAX / 1024);
	const char *argv[] = { javascript ? "node" : "bash", javascript ? "-e" : "-c",
			       request->code, NULL };
	struct process_stream stream = { request, limits, result, cancel_fd };
	struct sandbox_run run = {
		.command = { .name = javascript ? "node" : "bash",
			     .argv = argv,
			     .envs = request->envs,
			     .cwd = cwd,
			     .user = SANDBOX_AS_USER,
			     .own_process_tree = true },
		.timeout_ms = request->timeout_ms > 0x7fffffff ? 0x7fffffff
							       : (int)request->timeout_ms,
		.max_output = 64 * 1024,
		.on_output = process_output,
		.should_stop = process_should_stop,
		.context = &stream,
	};
	struct sandbox_run_result r;
	if (!sandbox_run(sandbox, &run, &r, err))
		return false;
	result->execution.elapsed_ms = r.duration_ms;
	result->has_exit_code = r.exited;
	result->exit_code = r.exited ? r.exit_code : -1;
	result->timed_out = r.timed_out;
	char value[200];
	if (r.timed_out) {
		snprintf(value, sizeof(value),
			 "the program ran past timeout_ms (%lld ms) and was killed",
			 (long long)request->timeout_ms);
		code_process_set_error(&result->execution, "TimeoutError", value);
	} else if (!r.exited) {
		snprintf(value, sizeof(value), "killed by signal %d (%s)", r.signal,
			 strsignal(r.signal));
		code_process_set_error(&result->execution, "Killed", value);
	} else if (r.exit_code != 0) {
		snprintf(value, sizeof(value), "exited with status %d", r.exit_code);
		code_process_set_error(&result->execution, "ExitError", value);
	}
	sandbox_run_result_finish(&r);
	return true;
}
