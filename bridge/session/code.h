/* SPDX-License-Identifier: MIT */
/* A session's code contexts: where run_code runs. A Python context is a
 * real ipykernel started inside the session's sandbox, as its user and in
 * its cgroup, on ipc sockets in the sandbox's run directory that the
 * daemon opens once by inode (kernel/ speaks the Jupyter protocol through
 * them); its variables live as long as it does. bash and javascript
 * contexts run each call as a fresh process. One call runs in a context at
 * a time, the others wait their turn in order, up to a bound. The time
 * limit is the bridge's: the kernel is interrupted at it, restarted when it
 * does not stop, and restarted when it dies; the result says which, and
 * that a restart lost the context's state. */
#ifndef LIZARD_BRIDGE_SESSION_CODE_H
#define LIZARD_BRIDGE_SESSION_CODE_H

#include "bridge/session/code_types.h"
#include "kernel/execute.h"
#include "util/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bridge_session;
struct cJSON;

#define BRIDGE_CODE_CONTEXTS_MAX 8 /* per session */
/* Calls waiting per context: one runs, two wait their turn, a fourth is
 * refused at once rather than holding one of the session's workers. */
#define BRIDGE_CODE_WAITING_MAX 2

/* The session's contexts; created with the session, destroyed with it. */
struct bridge_code_contexts;
struct bridge_code_contexts *bridge_code_contexts_create(void);
/* Every call waiting or running returns now (the session ended). */
void bridge_code_contexts_cancel(struct bridge_code_contexts *contexts);
void bridge_code_contexts_destroy(struct bridge_code_contexts *contexts);

struct bridge_code_context_info {
	char id[BRIDGE_CODE_ID_MAX];
	char language[16];
	char cwd[512];
	bool is_default;
};

/* A context of language ("python", "bash", "javascript") with cwd (NULL:
 * HOME); a Python one is running and ready when this returns. */
bool bridge_code_context_create(struct bridge_session *session, const char *language,
				const char *cwd, bool is_default,
				struct bridge_code_context_info *info, struct error *err);
/* An array of {id, language, cwd, is_default}. */
struct cJSON *bridge_code_contexts_describe(struct bridge_session *session);
/* Fresh state, same id: waits for a running call's turn. */
bool bridge_code_context_restart(struct bridge_session *session, const char *id,
				 struct bridge_code_context_info *info, struct error *err);
bool bridge_code_context_remove(struct bridge_session *session, const char *id, struct error *err);

/* The Python context run_code uses without one, started on first use:
 * templates with a warm kernel call this at start. */
bool bridge_code_start_default(struct bridge_session *session, struct error *err);

/* Runs code; false with err only when it could not run at all (bad input,
 * no sandbox, a kernel that would not start). */
bool bridge_code_run(struct bridge_session *session, const struct bridge_code_request *request,
		     struct bridge_code_result *result, struct error *err);
void bridge_code_result_finish(struct bridge_code_result *result);

/* The bounds of one call's output. */
extern const struct kernel_limits bridge_code_limits;

#endif
