/* SPDX-License-Identifier: MIT */
/* A Python context's kernel (see code_kernel.h). */
#include "bridge/session/code_kernel.h"

#include "kernel/client.h"
#include "kernel/execute.h"
#include "sandbox/process.h"
#include "sandbox/sandbox.h"
#include "util/base64.h"
#include "util/blob.h"
#include "util/clock.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ipykernel takes about a second here; a loaded machine, more. */
#define KERNEL_START_TIMEOUT_MS 30000
/* For the bridge's own short executes (the envs of a call). */
#define SILENT_TIMEOUT_MS 10000
#define SILENT_GRACE_MS 2000

static const struct kernel_limits code_kernel_silent_limits = {
	.log_bytes = 64 * 1024,
	.log_chunks = 64,
	.result_bytes = 64 * 1024,
	.total_bytes = 64 * 1024,
};

void code_kernel_init(struct code_kernel *k)
{
	memset(k, 0, sizeof(*k));
	k->process.channel = -1;
	for (int i = 0; i < 5; i++)
		k->fds[i] = -1;
}

void code_kernel_stop(struct code_kernel *k, struct sandbox *sandbox)
{
	kernel_client_destroy(k->client);
	k->client = NULL;
	sandbox_process_stop(&k->process);
	for (int i = 0; i < 5; i++) {
		if (k->fds[i] >= 0)
			close(k->fds[i]);
		k->fds[i] = -1;
	}
	if (!sandbox || !k->prefix[0])
		return;
	static const char *const suffixes[] = { ".json", "-1", "-2", "-3", "-4", "-5" };
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		char name[96];
		snprintf(name, sizeof(name), "%s%s", k->prefix, suffixes[i]);
		sandbox_run_remove(sandbox, name, NULL);
	}
	k->prefix[0] = '\0';
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

static bool write_connection_file(struct sandbox *sandbox, const struct code_kernel *x,
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
static bool open_kernel_sockets(struct sandbox *sandbox, struct code_kernel *x,
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

bool code_kernel_start(struct code_kernel *x, struct sandbox *sandbox, const char *id,
		       const char *cwd, struct error *err)
{
	x->generation++;
	snprintf(x->prefix, sizeof(x->prefix), "kernel-%s-%u", id, x->generation);
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
		.cwd = cwd,
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
	code_kernel_stop(x, sandbox);
	return false;
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

static bool run_silent(struct code_kernel *k, const char *code, int cancel_fd, struct error *err)
{
	struct kernel_execute_options o = {
		.code = code,
		.timeout_ms = SILENT_TIMEOUT_MS,
		.grace_ms = SILENT_GRACE_MS,
		.limits = &code_kernel_silent_limits,
		.cancel_fd = cancel_fd,
		.silent = true,
	};
	struct kernel_execution e;
	if (!kernel_execute(k->client, &o, &e, err))
		return false;
	bool ok = e.outcome == KERNEL_OUTCOME_DONE && !e.has_error;
	if (!ok)
		error_set(err, 0, "setting the call's envs in the kernel failed%s%s",
			  e.error_value ? ": " : "", e.error_value ? e.error_value : "");
	kernel_execution_finish(&e);
	return ok;
}

bool code_kernel_set_envs(struct code_kernel *k, const char *const *envs, int cancel_fd,
			  struct error *err)
{
	char *setup = env_code(envs);
	if (!setup)
		return error_set(err, ENOMEM, "the call's envs");
	bool ok = run_silent(k, setup, cancel_fd, err);
	free(setup);
	return ok;
}

void code_kernel_restore_envs(struct code_kernel *k, int cancel_fd)
{
	struct error ignored;
	run_silent(k, restore_env_code, cancel_fd, &ignored);
}
