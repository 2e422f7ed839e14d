/* SPDX-License-Identifier: MIT */
/* A session's code contexts (see code.h). */
#include "bridge/session/code.h"

#include "bridge/session/state.h"
#include "kernel/client.h"
#include "kernel/execute.h"
#include "sandbox/cgroup.h"
#include "sandbox/desktop.h"
#include "sandbox/process.h"
#include "sandbox/run.h"
#include "sandbox/sandbox.h"
#include "util/base64.h"
#include "util/blob.h"
#include "util/clock.h"

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

/* ipykernel takes about a second here; a loaded machine, more. */
#define KERNEL_START_TIMEOUT_MS 30000
/* After the interrupt at the time limit, before the kernel is restarted. */
#define INTERRUPT_GRACE_MS 2000
/* What one argument to bash or node may hold (the kernel's MAX_ARG_STRLEN
 * is 128 KiB). */
#define PROCESS_CODE_MAX (120 * 1024)

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
	unsigned generation;
	char prefix[80]; /* kernel-<id>-<generation>: its files in the run directory */
	struct sandbox_process process;
	int fds[5];
	struct kernel_client *client;
	/* What its kernels sent that was thrown away, over their lifetimes;
	 * under lock, for list_code_contexts. */
	struct kernel_client_counts dropped, dropped_before;
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

static void stop_kernel(struct code_context *x, struct sandbox *sandbox)
{
	if (x->client) {
		struct kernel_client_counts c = kernel_client_counts(x->client);
		pthread_mutex_lock(&x->lock);
		x->dropped_before.forged += c.forged;
		x->dropped_before.malformed += c.malformed;
		x->dropped_before.iopub_drops += c.iopub_drops;
		x->dropped = x->dropped_before;
		pthread_mutex_unlock(&x->lock);
	}
	kernel_client_destroy(x->client);
	x->client = NULL;
	sandbox_process_stop(&x->process);
	for (int i = 0; i < 5; i++) {
		if (x->fds[i] >= 0)
			close(x->fds[i]);
		x->fds[i] = -1;
	}
	if (!sandbox || !x->prefix[0])
		return;
	static const char *const suffixes[] = { ".json", "-1", "-2", "-3", "-4", "-5" };
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		char name[96];
		snprintf(name, sizeof(name), "%s%s", x->prefix, suffixes[i]);
		sandbox_run_remove(sandbox, name, NULL);
	}
	x->prefix[0] = '\0';
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

static bool write_all(int fd, const char *text, size_t length)
{
	while (length > 0) {
		ssize_t n = write(fd, text, length);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		text += n;
		length -= (size_t)n;
	}
	return true;
}

static bool write_connection_file(struct sandbox *sandbox, const struct code_context *x,
				  const struct kernel_key *key, char *inside, size_t size,
				  struct error *err)
{
	char name[96], ip[400];
	snprintf(name, sizeof(name), "%s.json", x->prefix);
	snprintf(inside, size, "%s/%s", sandbox_inside_run_dir(sandbox), name);
	snprintf(ip, sizeof(ip), "%s/%s", sandbox_inside_run_dir(sandbox), x->prefix);
	cJSON *c = cJSON_CreateObject();
	bool built = c && cJSON_AddStringToObject(c, "transport", "ipc") &&
		     cJSON_AddStringToObject(c, "ip", ip) &&
		     cJSON_AddNumberToObject(c, "shell_port", 1) &&
		     cJSON_AddNumberToObject(c, "iopub_port", 2) &&
		     cJSON_AddNumberToObject(c, "control_port", 3) &&
		     cJSON_AddNumberToObject(c, "stdin_port", 4) &&
		     cJSON_AddNumberToObject(c, "hb_port", 5) &&
		     cJSON_AddStringToObject(c, "key", key->text) &&
		     cJSON_AddStringToObject(c, "signature_scheme", "hmac-sha256") &&
		     cJSON_AddStringToObject(c, "kernel_name", "python3");
	char *text = built ? cJSON_PrintUnformatted(c) : NULL;
	cJSON_Delete(c);
	if (!text)
		return error_set(err, ENOMEM, "the kernel's connection file");
	int fd = sandbox_run_create_file(sandbox, name, err);
	bool ok = fd >= 0 && write_all(fd, text, strlen(text));
	if (fd >= 0 && !ok)
		error_set(err, errno, "writing %s/%s", sandbox_run_dir(sandbox), name);
	if (fd >= 0)
		close(fd);
	free(text);
	return ok;
}

/* The five sockets, each opened once by inode when the kernel has made
 * them all (sandbox_run_open_socket checks type and owner), while the
 * kernel is watched for an early exit. */
static bool open_kernel_sockets(struct sandbox *sandbox, struct code_context *x,
				struct kernel_endpoints *ep, int64_t deadline, struct error *err)
{
	char *targets[5] = { ep->shell, ep->iopub, ep->control, ep->stdin_, ep->heartbeat };
	char names[5][96];
	for (int i = 0; i < 5; i++)
		snprintf(names[i], sizeof(names[i]), "%s-%d", x->prefix, i + 1);
	for (;;) {
		int present = 0;
		for (int i = 0; i < 5; i++)
			present += sandbox_run_has(sandbox, names[i], S_IFSOCK);
		if (present == 5)
			break;
		if (!sandbox_process_running(&x->process)) {
			char tail[256];
			sandbox_last_log_line(sandbox, tail, sizeof(tail));
			return error_set(
				err, 0,
				"the Python kernel exited as it started (status %d)%s%s; is "
				"python3-ipykernel installed?",
				WIFEXITED(x->process.status) ? WEXITSTATUS(x->process.status) : -1,
				tail[0] ? ": " : "", tail);
		}
		if (clock_monotonic_ms() > deadline)
			return error_set(err, ETIMEDOUT,
					 "the Python kernel did not open its sockets");
		usleep(10000);
	}
	for (int i = 0; i < 5; i++) {
		if ((x->fds[i] = sandbox_run_open_socket(sandbox, names[i], err)) < 0)
			return false;
		snprintf(targets[i], 128, "ipc:///proc/self/fd/%d", x->fds[i]);
	}
	return true;
}

static bool start_kernel(struct bridge_session *s, struct sandbox *sandbox, struct code_context *x,
			 struct error *err)
{
	x->generation++;
	snprintf(x->prefix, sizeof(x->prefix), "kernel-%s-%u", x->id, x->generation);
	struct kernel_key key;
	char connection[512];
	if (!kernel_key_generate(&key, err) ||
	    !write_connection_file(sandbox, x, &key, connection, sizeof(connection), err))
		goto fail;
	const char *argv[] = { "/usr/bin/python3",
			       "-m",
			       "ipykernel_launcher",
			       "-f",
			       connection,
			       "--HistoryManager.enabled=False",
			       NULL };
	struct sandbox_command command = {
		.name = "ipykernel",
		.argv = argv,
		.cwd = x->cwd,
		.user = SANDBOX_AS_USER,
		.own_process_tree = true,
		.stdin_fd = -1,
		.stdout_fd = -1,
		.stderr_fd = -1,
		.fd3 = -1,
	};
	if (!sandbox_spawn(sandbox, &command, &x->process, err))
		goto fail;
	int64_t deadline = clock_monotonic_ms() + KERNEL_START_TIMEOUT_MS;
	struct kernel_endpoints ep;
	if (!open_kernel_sockets(sandbox, x, &ep, deadline, err))
		goto fail;
	if (!(x->client = kernel_client_create(&ep, &key, err)) ||
	    !kernel_client_wait_ready(x->client, deadline, err))
		goto fail;
	return true;
fail:
	error_prefix(err, "session %s, context %s", s->id, x->id);
	stop_kernel(x, sandbox);
	return false;
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
	for (int i = 0; i < 5; i++)
		x->fds[i] = -1;
	x->process.channel = -1;
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

/* Python code that sets envs in os.environ for one call and code that puts
 * back what was there, each run as the bridge's own silent execute. The
 * values travel as base64 of their JSON, so no byte of them is ever
 * Python syntax. */
static char *env_code(const char *const *envs)
{
	cJSON *object = cJSON_CreateObject();
	for (size_t i = 0; object && envs[i]; i++) {
		const char *eq = strchr(envs[i], '=');
		char name[256];
		if (!eq || (size_t)(eq - envs[i]) >= sizeof(name))
			continue;
		memcpy(name, envs[i], (size_t)(eq - envs[i]));
		name[eq - envs[i]] = '\0';
		cJSON_AddStringToObject(object, name, eq + 1);
	}
	char *json = object ? cJSON_PrintUnformatted(object) : NULL;
	cJSON_Delete(object);
	if (!json)
		return NULL;
	struct blob *inner = base64_encode((const unsigned char *)json, strlen(json));
	free(json);
	if (!inner)
		return NULL;
	char *source = NULL;
	int n = asprintf(&source,
			 "import os, sys, json, base64\n"
			 "new = json.loads(base64.b64decode('%s'))\n"
			 "sys._lizard_saved_env = {k: os.environ.get(k) for k in new}\n"
			 "os.environ.update(new)\n",
			 (const char *)inner->data);
	blob_unref(inner);
	if (n < 0)
		return NULL;
	struct blob *outer = base64_encode((const unsigned char *)source, strlen(source));
	free(source);
	char *code = NULL;
	if (outer && asprintf(&code, "exec(__import__('base64').b64decode('%s').decode(), {})",
			      (const char *)outer->data) < 0)
		code = NULL;
	blob_unref(outer);
	return code;
}

static const char restore_env_code[] =
	"exec('import os, sys\\n"
	"for k, v in getattr(sys, \"_lizard_saved_env\", {}).items():\\n"
	"    os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)\\n"
	"sys._lizard_saved_env = {}\\n', {})";

static bool run_silent(struct code_context *x, const char *code, int cancel_fd, struct error *err)
{
	struct kernel_execute_options o = {
		.code = code,
		.timeout_ms = 10000,
		.grace_ms = INTERRUPT_GRACE_MS,
		.limits = &bridge_code_limits,
		.cancel_fd = cancel_fd,
		.silent = true,
	};
	struct kernel_execution e;
	if (!kernel_execute(x->client, &o, &e, err))
		return false;
	bool ok = e.outcome == KERNEL_OUTCOME_DONE && !e.has_error;
	if (!ok)
		error_set(err, 0, "setting the call's envs in the kernel failed%s%s",
			  e.error_value ? ": " : "", e.error_value ? e.error_value : "");
	kernel_execution_finish(&e);
	return ok;
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
	sandbox_process_wait(&x->process, 1000);
	if (oom_kills(s) > ooms_before) {
		char limits[160];
		sandbox_limits_describe(&s->limits, limits, sizeof(limits));
		snprintf(out, size,
			 "the kernel was killed by the out-of-memory killer: the session's memory "
			 "limit (size %s: %s) was reached",
			 s->size_name, limits);
	} else if (x->process.exited && WIFSIGNALED(x->process.status)) {
		snprintf(out, size, "the kernel was killed by signal %d (%s)",
			 WTERMSIG(x->process.status), strsignal(WTERMSIG(x->process.status)));
	} else if (x->process.exited) {
		snprintf(out, size, "the kernel exited with status %d",
			 WEXITSTATUS(x->process.status));
	} else {
		snprintf(out, size, "the kernel closed its sockets");
	}
}

static void set_error(struct kernel_execution *e, const char *name, const char *value)
{
	free(e->error_name);
	free(e->error_value);
	free(e->traceback);
	e->has_error = true;
	e->error_name = strdup(name);
	e->error_value = strdup(value);
	e->traceback = strdup("");
}

static bool run_python(struct bridge_session *s, struct sandbox *sandbox, struct code_context *x,
		       const struct bridge_code_request *request, struct bridge_code_result *result,
		       struct error *err)
{
	struct bridge_code_contexts *c = s->code;
	if (!x->client && !start_kernel(s, sandbox, x, err))
		return false;
	char *setup = NULL;
	if (request->envs && request->envs[0]) {
		if (!(setup = env_code(request->envs)))
			return error_set(err, ENOMEM, "the call's envs");
		bool ok = run_silent(x, setup, c->cancel_fd, err);
		free(setup);
		if (!ok)
			return false;
	}
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
	if (!kernel_execute(x->client, &o, e, err))
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
		set_error(e, "TimeoutError", result->note);
		break;
	case KERNEL_OUTCOME_DIED:
		describe_death(s, x, ooms, why, sizeof(why));
		result->restarted = true;
		snprintf(result->note, sizeof(result->note),
			 "%s; it was restarted: the context's state is gone", why);
		set_error(e, "KernelDied", result->note);
		break;
	case KERNEL_OUTCOME_CANCELLED:
		return error_set(err, 0, "session %s ended while the code ran", s->id);
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
	if (request->envs && request->envs[0] && !result->restarted) {
		struct error ignored;
		run_silent(x, restore_env_code, c->cancel_fd, &ignored);
	}
	return true;
}

struct process_stream {
	const struct bridge_code_request *request;
	struct bridge_code_result *result;
	struct bridge_session *session;
};

static void process_output(void *opaque, enum sandbox_stream stream, const char *data, size_t len)
{
	struct process_stream *p = opaque;
	const char *name = stream == SANDBOX_STDOUT ? "stdout" : "stderr";
	struct kernel_log *log = stream == SANDBOX_STDOUT ? &p->result->execution.out
							  : &p->result->execution.err;
	kernel_log_append(log, &bridge_code_limits, data, len);
	if (p->request->on_output)
		p->request->on_output(p->request->opaque, name, data, len);
}

static bool process_should_stop(void *opaque)
{
	struct process_stream *p = opaque;
	return session_state(p->session, NULL, NULL, 0) == BRIDGE_ENDED ||
	       (p->request->should_stop && p->request->should_stop(p->request->opaque));
}

/* bash and javascript: a fresh process each call, its output kept as it
 * came, its exit status reported. */
static bool run_process(struct bridge_session *s, struct sandbox *sandbox, enum code_language lang,
			const char *cwd, const struct bridge_code_request *request,
			struct bridge_code_result *result, struct error *err)
{
	if (strlen(request->code) > PROCESS_CODE_MAX)
		return error_set(err, E2BIG,
				 "%s code is passed as one argument, at most %d KiB; write a "
				 "longer program to a file and run that",
				 language_names[lang], PROCESS_CODE_MAX / 1024);
	const char *argv[] = { lang == CODE_BASH ? "bash" : "node", lang == CODE_BASH ? "-c" : "-e",
			       request->code, NULL };
	struct process_stream stream = { request, result, s };
	struct sandbox_run run = {
		.command = { .name = language_names[lang],
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
		set_error(&result->execution, "TimeoutError", value);
	} else if (!r.exited) {
		snprintf(value, sizeof(value), "killed by signal %d (%s)", r.signal,
			 strsignal(r.signal));
		set_error(&result->execution, "Killed", value);
	} else if (r.exit_code != 0) {
		snprintf(value, sizeof(value), "exited with status %d", r.exit_code);
		set_error(&result->execution, "ExitError", value);
	}
	sandbox_run_result_finish(&r);
	if (session_state(s, NULL, NULL, 0) == BRIDGE_ENDED)
		return error_set(err, 0, "session %s ended while the code ran", s->id);
	return true;
}

static void finish_call(struct bridge_session *s, struct sandbox *sandbox, struct code_context *x)
{
	if (x->client) {
		struct kernel_client_counts c = kernel_client_counts(x->client);
		pthread_mutex_lock(&x->lock);
		x->dropped.forged = x->dropped_before.forged + c.forged;
		x->dropped.malformed = x->dropped_before.malformed + c.malformed;
		x->dropped.iopub_drops = x->dropped_before.iopub_drops + c.iopub_drops;
		pthread_mutex_unlock(&x->lock);
	}
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
		return run_process(s, sandbox, lang, NULL, request, result, err);
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
			  : run_process(s, sandbox, x->language, x->cwd, request, result, err);
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
		sandbox_process_signal(&x->process, SIGKILL);
	context_unref(x);
	return true;
}
