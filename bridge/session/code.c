/* SPDX-License-Identifier: MIT */
/* A session's code contexts (see code.h). */
#include "bridge/session/code.h"

#include "bridge/session/code_kernel.h"
#include "bridge/session/code_process.h"
#include "bridge/session/state.h"
#include "kernel/client.h"
#include "kernel/execute.h"
#include "sandbox/cgroup.h"
#include "sandbox/desktop.h"
#include "sandbox/process.h"
#include "sandbox/sandbox.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* After the interrupt at the time limit, before the kernel is restarted. */
#define INTERRUPT_GRACE_MS 2000

const struct kernel_limits bridge_code_limits = {
	.log_bytes = 1024 * 1024,
	.log_chunks = 20000,
	.result_bytes = 3 * 1024 * 1024,
	.total_bytes = 6 * 1024 * 1024,
};

enum code_language { CODE_PYTHON, CODE_BASH, CODE_JAVASCRIPT };
static const char *const language_names[] = { "python", "bash", "javascript" };

struct code_context {
	atomic_int refs;
	char id[BRIDGE_CODE_ID_MAX];
	enum code_language language;
	char cwd[512];
	bool is_default;

	pthread_mutex_t lock; /* the turn */
	pthread_cond_t turn;
	unsigned long next_ticket, serving;
	int waiting;
	bool removed;

	/* Python, touched only by whoever has the turn. */
	struct code_kernel kernel;
	/* What its kernels sent that was thrown away, over their lifetimes;
	 * under lock, for list_code_contexts. */
	struct kernel_client_counts dropped, dropped_before;
	/* Calls whose output did not all arrive (a message past iopub's
	 * bounds, or the idle status never came): under lock. */
	unsigned long long lost_output;
};

struct bridge_code_contexts {
	pthread_mutex_t lock;
	struct code_context *items[BRIDGE_CODE_CONTEXTS_MAX];
	size_t count;
	int cancel_fd; /* readable once the session ended */
	bool cancelled;
};

struct bridge_code_contexts *bridge_code_contexts_create(void)
{
	struct bridge_code_contexts *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	pthread_mutex_init(&c->lock, NULL);
	c->cancel_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->cancel_fd < 0) {
		pthread_mutex_destroy(&c->lock);
		free(c);
		return NULL;
	}
	return c;
}

/* What the kernel threw away, kept across its restarts. */
static void note_dropped(struct code_context *x, bool final)
{
	if (!x->kernel.client)
		return;
	struct kernel_client_counts c = kernel_client_counts(x->kernel.client);
	pthread_mutex_lock(&x->lock);
	x->dropped.forged = x->dropped_before.forged + c.forged;
	x->dropped.malformed = x->dropped_before.malformed + c.malformed;
	x->dropped.iopub_drops = x->dropped_before.iopub_drops + c.iopub_drops;
	if (final)
		x->dropped_before = x->dropped;
	pthread_mutex_unlock(&x->lock);
}

static void stop_kernel(struct code_context *x, struct sandbox *sandbox)
{
	note_dropped(x, true);
	code_kernel_stop(&x->kernel, sandbox);
}

static bool start_kernel(struct bridge_session *s, struct sandbox *sandbox, struct code_context *x,
			 struct error *err)
{
	if (code_kernel_start(&x->kernel, sandbox, x->id, x->cwd, err))
		return true;
	return error_prefix(err, "session %s, context %s", s->id, x->id);
}

static void context_unref(struct code_context *x)
{
	if (!x || atomic_fetch_sub(&x->refs, 1) != 1)
		return;
	/* The sandbox is gone or going: its kill took the kernel along. */
	stop_kernel(x, NULL);
	pthread_cond_destroy(&x->turn);
	pthread_mutex_destroy(&x->lock);
	free(x);
}

void bridge_code_contexts_cancel(struct bridge_code_contexts *c)
{
	if (!c)
		return;
	uint64_t one = 1;
	if (write(c->cancel_fd, &one, sizeof(one)) != sizeof(one))
		(void)0; /* already readable: the counter is full */
	pthread_mutex_lock(&c->lock);
	c->cancelled = true;
	for (size_t i = 0; i < c->count; i++) {
		pthread_mutex_lock(&c->items[i]->lock);
		pthread_cond_broadcast(&c->items[i]->turn);
		pthread_mutex_unlock(&c->items[i]->lock);
	}
	pthread_mutex_unlock(&c->lock);
}

void bridge_code_contexts_destroy(struct bridge_code_contexts *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->count; i++)
		context_unref(c->items[i]);
	close(c->cancel_fd);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static bool parse_language(const char *name, enum code_language *out, struct error *err)
{
	for (int i = 0; i < 3; i++)
		if (strcmp(name, language_names[i]) == 0) {
			*out = (enum code_language)i;
			return true;
		}
	return error_set(err, 0, "language '%.40s' is not one of python, bash, javascript", name);
}

/* What this file reads of its session, under the session's lock: code.c
 * sits below session.c (which makes, ends and frees the contexts), so it
 * uses the session's state, not its functions. */
static struct sandbox *session_sandbox(struct bridge_session *s)
{
	pthread_mutex_lock(&s->lock);
	struct sandbox *sandbox = s->desktop ? sandbox_desktop_sandbox(s->desktop) : NULL;
	pthread_mutex_unlock(&s->lock);
	return sandbox;
}

static enum bridge_session_state session_state(struct bridge_session *s, bool *paused, char *why,
					       size_t size)
{
	pthread_mutex_lock(&s->lock);
	enum bridge_session_state state = s->state;
	if (paused)
		*paused = s->paused;
	if (why)
		snprintf(why, size, "%s", s->failure);
	pthread_mutex_unlock(&s->lock);
	return state;
}

/* The sandbox, or why there is none to run code in. */
static struct sandbox *code_sandbox(struct bridge_session *s, struct error *err)
{
	struct sandbox *sandbox = session_sandbox(s);
	if (!sandbox)
		return error_null(err, 0,
				  "session %s is attached to a VNC server the bridge does not run: "
				  "run_code needs a sandbox (create_session with template "
				  "interpreter, base or desktop)",
				  s->id);
	bool paused;
	char why[sizeof(s->failure)];
	enum bridge_session_state state = session_state(s, &paused, why, sizeof(why));
	if (state == BRIDGE_ENDED || state == BRIDGE_FAILED)
		return error_null(err, 0, "session %s has %s (%s)", s->id,
				  state == BRIDGE_ENDED ? "ended" : "failed", why);
	if (paused)
		return error_null(err, 0,
				  "session %s is paused: its processes are frozen; resume_session "
				  "first",
				  s->id);
	return sandbox;
}

static void new_id(char out[BRIDGE_CODE_ID_MAX])
{
	unsigned char bytes[6] = { 0 };
	if (getrandom(bytes, sizeof(bytes), 0) != sizeof(bytes))
		memset(bytes, 0, sizeof(bytes));
	snprintf(out, BRIDGE_CODE_ID_MAX, "ctx-%02x%02x%02x%02x%02x%02x", bytes[0], bytes[1],
		 bytes[2], bytes[3], bytes[4], bytes[5]);
}

static void describe_into(const struct code_context *x, struct bridge_code_context_info *info)
{
	if (!info)
		return;
	snprintf(info->id, sizeof(info->id), "%s", x->id);
	snprintf(info->language, sizeof(info->language), "%s", language_names[x->language]);
	snprintf(info->cwd, sizeof(info->cwd), "%s", x->cwd);
	info->is_default = x->is_default;
}

bool bridge_code_context_create(struct bridge_session *s, const char *language, const char *cwd,
				bool is_default, struct bridge_code_context_info *info,
				struct error *err)
{
	struct bridge_code_contexts *c = s->code;
	enum code_language lang = CODE_PYTHON;
	if (language && !parse_language(language, &lang, err))
		return false;
	struct sandbox *sandbox = code_sandbox(s, err);
	if (!sandbox)
		return false;
	if (cwd && (cwd[0] != '/' || strlen(cwd) >= sizeof(((struct code_context *)0)->cwd)))
		return error_set(err, 0,
				 "cwd must be an absolute path inside the sandbox, under "
				 "512 bytes");
	struct code_context *x = calloc(1, sizeof(*x));
	if (!x)
		return error_set(err, ENOMEM, "a code context");
	atomic_init(&x->refs, 1);
	x->language = lang;
	x->is_default = is_default;
	snprintf(x->cwd, sizeof(x->cwd), "%s", cwd ? cwd : sandbox_inside_home(sandbox));
	code_kernel_init(&x->kernel);
	pthread_mutex_init(&x->lock, NULL);
	pthread_cond_init(&x->turn, NULL);
	/* Ticket 0 is the creator's while the kernel starts: calls that find
	 * the context meanwhile wait for it. */
	x->next_ticket = 1;
	new_id(x->id);

	/* Counted before the kernel starts, so that starting many at once
	 * stays within the bound. */
	pthread_mutex_lock(&c->lock);
	bool full = c->count >= BRIDGE_CODE_CONTEXTS_MAX;
	bool have_default = false;
	for (size_t i = 0; i < c->count; i++)
		have_default |= c->items[i]->is_default;
	if (!full && !(is_default && have_default)) {
		atomic_fetch_add(&x->refs, 1);
		c->items[c->count++] = x;
	}
	pthread_mutex_unlock(&c->lock);
	if (full || (is_default && have_default)) {
		context_unref(x);
		if (full)
			return error_set(err, 0,
					 "session %s has %d code contexts, the most it may; "
					 "remove_code_context one first",
					 s->id, BRIDGE_CODE_CONTEXTS_MAX);
		return true; /* another call made the default meanwhile */
	}
	bool ok = lang != CODE_PYTHON || start_kernel(s, sandbox, x, err);
	pthread_mutex_lock(&x->lock);
	x->serving = 1;
	if (!ok)
		x->removed = true;
	pthread_cond_broadcast(&x->turn);
	pthread_mutex_unlock(&x->lock);
	if (!ok) {
		pthread_mutex_lock(&c->lock);
		for (size_t i = 0; i < c->count; i++)
			if (c->items[i] == x) {
				c->items[i] = c->items[--c->count];
				context_unref(x);
				break;
			}
		pthread_mutex_unlock(&c->lock);
	} else {
		describe_into(x, info);
	}
	context_unref(x);
	return ok;
}

/* Finds a context by id, or the default one (id NULL), held. */
static struct code_context *find(struct bridge_code_contexts *c, const char *id)
{
	struct code_context *found = NULL;
	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->count && !found; i++)
		if (id ? strcmp(c->items[i]->id, id) == 0 : c->items[i]->is_default)
			found = c->items[i];
	if (found)
		atomic_fetch_add(&found->refs, 1);
	pthread_mutex_unlock(&c->lock);
	return found;
}

bool bridge_code_start_default(struct bridge_session *s, struct error *err)
{
	struct code_context *x = find(s->code, NULL);
	if (x) {
		context_unref(x);
		return true;
	}
	return bridge_code_context_create(s, "python", NULL, true, NULL, err);
}

/* Waits for x's turn, in the order calls came; false when the session
 * ends, the context is removed, or too many wait already. */
static bool take_turn(struct bridge_code_contexts *c, struct code_context *x, struct error *err)
{
	pthread_mutex_lock(&x->lock);
	if (x->waiting >= BRIDGE_CODE_WAITING_MAX) {
		pthread_mutex_unlock(&x->lock);
		return error_set(err, EBUSY,
				 "context %s already has %d calls waiting for their turn; wait for "
				 "them, or create_code_context another",
				 x->id, BRIDGE_CODE_WAITING_MAX);
	}
	unsigned long ticket = x->next_ticket++;
	x->waiting++;
	while (x->serving != ticket && !x->removed && !c->cancelled)
		pthread_cond_wait(&x->turn, &x->lock);
	x->waiting--;
	bool mine = x->serving == ticket && !x->removed && !c->cancelled;
	if (!mine && x->serving == ticket) {
		x->serving++;
		pthread_cond_broadcast(&x->turn);
	}
	pthread_mutex_unlock(&x->lock);
	if (!mine)
		return error_set(err, 0, "context %s %s while the call waited its turn", x->id,
				 x->removed ? "was removed" : "ended with its session");
	return true;
}

static void give_turn(struct code_context *x)
{
	pthread_mutex_lock(&x->lock);
	x->serving++;
	pthread_cond_broadcast(&x->turn);
	pthread_mutex_unlock(&x->lock);
}

static bool restart_kernel(struct bridge_session *s, struct sandbox *sandbox,
			   struct code_context *x, struct error *err)
{
	stop_kernel(x, sandbox);
	return start_kernel(s, sandbox, x, err);
}

static uint64_t oom_kills(struct bridge_session *s)
{
	struct sandbox_usage usage;
	if (!s->cgroup || !sandbox_cgroup_usage(s->cgroup, &usage, NULL) ||
	    usage.oom_kills == SANDBOX_USAGE_UNKNOWN)
		return 0;
	return usage.oom_kills;
}

static void describe_death(struct bridge_session *s, struct code_context *x, uint64_t ooms_before,
			   char *out, size_t size)
{
	sandbox_process_wait(&x->kernel.process, 1000);
	if (oom_kills(s) > ooms_before) {
		char limits[160];
		sandbox_limits_describe(&s->limits, limits, sizeof(limits));
		snprintf(out, size,
			 "the kernel was killed by the out-of-memory killer: the session's memory "
			 "limit (size %s: %s) was reached",
			 s->size_name, limits);
	} else if (x->kernel.process.exited && WIFSIGNALED(x->kernel.process.status)) {
		snprintf(out, size, "the kernel was killed by signal %d (%s)",
			 WTERMSIG(x->kernel.process.status),
			 strsignal(WTERMSIG(x->kernel.process.status)));
	} else if (x->kernel.process.exited) {
		snprintf(out, size, "the kernel exited with status %d",
			 WEXITSTATUS(x->kernel.process.status));
	} else {
		snprintf(out, size, "the kernel closed its sockets");
	}
}

static bool run_python(struct bridge_session *s, struct sandbox *sandbox, struct code_context *x,
		       const struct bridge_code_request *request, struct bridge_code_result *result,
		       struct error *err)
{
	struct bridge_code_contexts *c = s->code;
	if (!x->kernel.client && !start_kernel(s, sandbox, x, err))
		return false;
	bool envs = request->envs && request->envs[0];
	if (envs && !code_kernel_set_envs(&x->kernel, request->envs, c->cancel_fd, err))
		return false;
	uint64_t ooms = oom_kills(s);
	struct kernel_execute_options o = {
		.code = request->code,
		.timeout_ms = request->timeout_ms,
		.grace_ms = INTERRUPT_GRACE_MS,
		.limits = &bridge_code_limits,
		.cancel_fd = c->cancel_fd,
		.should_stop = request->should_stop,
		.on_stream = request->on_output,
		.opaque = request->opaque,
	};
	struct kernel_execution *e = &result->execution;
	if (!kernel_execute(x->kernel.client, &o, e, err))
		return false;
	char why[300];
	switch (e->outcome) {
	case KERNEL_OUTCOME_DONE:
		break;
	case KERNEL_OUTCOME_INTERRUPTED:
		result->timed_out = true;
		snprintf(result->note, sizeof(result->note),
			 "the code ran past timeout_ms (%lld ms) and was interrupted; the "
			 "context's state is kept",
			 (long long)request->timeout_ms);
		break;
	case KERNEL_OUTCOME_STUCK:
		result->timed_out = true;
		result->restarted = true;
		snprintf(result->note, sizeof(result->note),
			 "the code ran past timeout_ms (%lld ms) and did not stop when "
			 "interrupted, so the kernel was restarted: the context's state is gone",
			 (long long)request->timeout_ms);
		code_process_set_error(e, "TimeoutError", result->note);
		break;
	case KERNEL_OUTCOME_DIED:
		describe_death(s, x, ooms, why, sizeof(why));
		result->restarted = true;
		snprintf(result->note, sizeof(result->note),
			 "%s; it was restarted: the context's state is gone", why);
		code_process_set_error(e, "KernelDied", result->note);
		break;
	case KERNEL_OUTCOME_CANCELLED:
		return error_set(err, 0, "session %s ended while the code ran", s->id);
	}
	if (e->output_lost) {
		pthread_mutex_lock(&x->lock);
		x->lost_output++;
		pthread_mutex_unlock(&x->lock);
	}
	if (e->output_lost && !result->note[0])
		snprintf(result->note, sizeof(result->note),
			 "some output never arrived: the kernel sent more than 16 MiB at once "
			 "(its output within a fifth of a second goes as one message), which "
			 "the bridge does not take; print less at a time");
	if (result->restarted && !x->removed) {
		struct error failed;
		if (!restart_kernel(s, sandbox, x, &failed))
			snprintf(result->note + strlen(result->note),
				 sizeof(result->note) - strlen(result->note),
				 "; the restart failed (%s), the next call tries again",
				 failed.message);
	}
	if (envs && !result->restarted)
		code_kernel_restore_envs(&x->kernel, c->cancel_fd);
	return true;
}

/* A process run to its end in a session that ended meanwhile was killed
 * with it: the call says so rather than giving what was left. */
static bool still_running(struct bridge_session *s, struct error *err)
{
	if (session_state(s, NULL, NULL, 0) == BRIDGE_ENDED)
		return error_set(err, 0, "session %s ended while the code ran", s->id);
	return true;
}

static void finish_call(struct bridge_session *s, struct sandbox *sandbox, struct code_context *x)
{
	note_dropped(x, false);
	/* Removed while it ran: its kernel goes now that nothing uses it. */
	if (x->removed)
		stop_kernel(x, sandbox);
	give_turn(x);
	context_unref(x);
	(void)s;
}

bool bridge_code_run(struct bridge_session *s, const struct bridge_code_request *request,
		     struct bridge_code_result *result, struct error *err)
{
	memset(result, 0, sizeof(*result));
	result->exit_code = -1;
	if (!request->code || !request->code[0])
		return error_set(err, EINVAL, "code is empty: give the code to run");
	if (request->language && request->context)
		return error_set(err, EINVAL,
				 "give language or context, not both: a context has its language");
	enum code_language lang = CODE_PYTHON;
	if (request->language && !parse_language(request->language, &lang, err))
		return false;
	struct sandbox *sandbox = code_sandbox(s, err);
	if (!sandbox)
		return false;
	if (!request->context && lang != CODE_PYTHON) {
		snprintf(result->language, sizeof(result->language), "%s", language_names[lang]);
		return code_process_run(sandbox, lang == CODE_JAVASCRIPT, NULL, request,
					&bridge_code_limits, s->code->cancel_fd, result, err) &&
		       still_running(s, err);
	}
	if (!request->context && !bridge_code_start_default(s, err))
		return false;
	struct code_context *x = find(s->code, request->context);
	if (!x)
		return error_set(err, ENOENT,
				 "session %s has no code context %.60s (list_code_contexts lists "
				 "them)",
				 s->id, request->context ? request->context : "(default)");
	if (!take_turn(s->code, x, err)) {
		context_unref(x);
		return false;
	}
	snprintf(result->context, sizeof(result->context), "%s", x->id);
	snprintf(result->language, sizeof(result->language), "%s", language_names[x->language]);
	bool ok = x->language == CODE_PYTHON
			  ? run_python(s, sandbox, x, request, result, err)
			  : code_process_run(sandbox, x->language == CODE_JAVASCRIPT, x->cwd,
					     request, &bridge_code_limits, s->code->cancel_fd,
					     result, err) &&
				    still_running(s, err);
	finish_call(s, sandbox, x);
	if (!ok)
		kernel_execution_finish(&result->execution);
	return ok;
}

void bridge_code_result_finish(struct bridge_code_result *result)
{
	kernel_execution_finish(&result->execution);
}

cJSON *bridge_code_contexts_describe(struct bridge_session *s)
{
	struct bridge_code_contexts *c = s->code;
	cJSON *list = cJSON_CreateArray();
	if (!list)
		return NULL;
	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->count; i++) {
		struct code_context *x = c->items[i];
		cJSON *item = cJSON_CreateObject();
		if (!item)
			break;
		cJSON_AddStringToObject(item, "id", x->id);
		cJSON_AddStringToObject(item, "language", language_names[x->language]);
		cJSON_AddStringToObject(item, "cwd", x->cwd);
		cJSON_AddBoolToObject(item, "is_default", x->is_default);
		pthread_mutex_lock(&x->lock);
		cJSON_AddNumberToObject(item, "waiting", x->waiting);
		cJSON_AddBoolToObject(item, "busy", x->serving != x->next_ticket);
		cJSON *dropped = cJSON_AddObjectToObject(item, "dropped");
		cJSON_AddNumberToObject(dropped, "forged", (double)x->dropped.forged);
		cJSON_AddNumberToObject(dropped, "malformed", (double)x->dropped.malformed);
		cJSON_AddNumberToObject(dropped, "oversized", (double)x->dropped.iopub_drops);
		cJSON_AddNumberToObject(dropped, "calls_with_lost_output", (double)x->lost_output);
		pthread_mutex_unlock(&x->lock);
		cJSON_AddItemToArray(list, item);
	}
	pthread_mutex_unlock(&c->lock);
	return list;
}

bool bridge_code_context_restart(struct bridge_session *s, const char *id,
				 struct bridge_code_context_info *info, struct error *err)
{
	struct sandbox *sandbox = code_sandbox(s, err);
	if (!sandbox)
		return false;
	struct code_context *x = find(s->code, id);
	if (!x)
		return error_set(err, ENOENT, "session %s has no code context %.60s", s->id, id);
	if (!take_turn(s->code, x, err)) {
		context_unref(x);
		return false;
	}
	bool ok = x->language != CODE_PYTHON || restart_kernel(s, sandbox, x, err);
	describe_into(x, info);
	finish_call(s, sandbox, x);
	return ok;
}

bool bridge_code_context_remove(struct bridge_session *s, const char *id, struct error *err)
{
	struct bridge_code_contexts *c = s->code;
	struct code_context *x = NULL;
	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->count; i++)
		if (strcmp(c->items[i]->id, id) == 0) {
			x = c->items[i];
			c->items[i] = c->items[--c->count];
			break;
		}
	pthread_mutex_unlock(&c->lock);
	if (!x)
		return error_set(err, ENOENT, "session %s has no code context %.60s", s->id, id);
	pthread_mutex_lock(&x->lock);
	x->removed = true;
	bool idle = x->serving == x->next_ticket;
	if (idle)
		x->next_ticket++; /* ours: nobody else may start */
	pthread_cond_broadcast(&x->turn);
	pthread_mutex_unlock(&x->lock);
	if (idle)
		stop_kernel(x, session_sandbox(s));
	else
		/* A call runs: the kernel dies under it, and that call lets go
		 * of what is left (finish_call). */
		sandbox_process_signal(&x->kernel.process, SIGKILL);
	context_unref(x);
	return true;
}
