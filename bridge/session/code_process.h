/* SPDX-License-Identifier: MIT */
/* run_code's bash and javascript: a fresh process each call (bash -c, node
 * -e) in the session's sandbox as its user, its output kept as it came
 * within the code interpreter's bounds and streamed, its exit status
 * reported; no state survives a call. */
#ifndef LIZARD_BRIDGE_SESSION_CODE_PROCESS_H
#define LIZARD_BRIDGE_SESSION_CODE_PROCESS_H

#include "bridge/session/code_types.h"
#include "util/error.h"

#include <stdbool.h>

struct kernel_execution;
struct kernel_limits;
struct sandbox;

/* cwd NULL: HOME. cancel_fd becomes readable when the session ends. Output
 * kept within limits. */
bool code_process_run(struct sandbox *sandbox, bool javascript, const char *cwd,
		      const struct bridge_code_request *request, const struct kernel_limits *limits,
		      int cancel_fd, struct bridge_code_result *result, struct error *err);

/* Sets e's error (a result's, not the call's). */
void code_process_set_error(struct kernel_execution *e, const char *name, const char *value);

#endif
