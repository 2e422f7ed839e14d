/* SPDX-License-Identifier: MIT */
#include "sandbox/template.h"

#include "sandbox/command.h"
#include "sandbox/files.h"
#include "sandbox/run.h"
#include "sandbox/sandbox.h"
#include "sandbox/snapshot.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* What a command prints beyond this is in the log only. */
#define KEPT_OUTPUT 4096

static void say(const struct sandbox_template_build *b, const char *fmt, ...)
{
	if (!b->log)
		return;
	char line[1200];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n > 0)
		b->log(b->context, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

static void on_output(void *context, enum sandbox_stream stream, const char *data, size_t len)
{
	(void)stream;
	const struct sandbox_template_build *b = context;
	if (b->log)
		b->log(b->context, data, len);
}

static bool run_command(struct sandbox *s, const struct sandbox_template_build *b, size_t index,
			struct error *err)
{
	const char *command = b->commands[index];
	const char *argv[] = { "/bin/sh", "-c", command, NULL };
	struct sandbox_run run = {
		.command = { .name = "template command",
			     .argv = argv,
			     .envs = b->envs,
			     .cwd = "/",
			     .user = SANDBOX_AS_ROOT,
			     .own_process_tree = true,
			     .stdin_fd = -1,
			     .stdout_fd = -1,
			     .stderr_fd = -1,
			     .fd3 = -1 },
		.timeout_ms = b->command_timeout_ms,
		.max_output = KEPT_OUTPUT,
		.on_output = on_output,
		.context = (void *)b,
	};
	say(b, "$ %.1000s\n", command);
	struct sandbox_run_result r;
	if (!sandbox_run(s, &run, &r, err))
		return error_prefix(err, "command %zu", index + 1);
	bool ok = r.exited && r.exit_code == 0 && !r.timed_out;
	if (!ok) {
		const struct sandbox_output *tail = r.err.len ? &r.err : &r.out;
		size_t len = tail->len;
		while (len && (tail->data[len - 1] == '\n' || tail->data[len - 1] == ' '))
			len--;
		size_t start = len > 300 ? len - 300 : 0;
		char how[64];
		if (r.timed_out)
			snprintf(how, sizeof(how), "took over %d ms", b->command_timeout_ms);
		else if (r.exited)
			snprintf(how, sizeof(how), "exited with status %d", r.exit_code);
		else
			snprintf(how, sizeof(how), "died of signal %d", r.signal);
		error_set(err, 0, "command %zu (%.200s) %s%s%.*s", index + 1, command, how,
			  len ? ": " : "", (int)(len - start), tail->data + start);
	}
	sandbox_run_result_finish(&r);
	return ok;
}

bool sandbox_template_build(const struct sandbox_template_build *b, const char *dest,
			    struct error *err)
{
	struct sandbox_options options = {
		.network = true,
		.envs = b->envs,
		.uid_range = b->uid_range,
		.restore_dir = b->from_dir,
		.image_dir = b->image_dir,
	};
	say(b, "starting a sandbox from %s\n",
	    b->from_dir    ? "the base template"
	    : b->image_dir ? "the image"
			   : "the host");
	struct sandbox *s = sandbox_create(&options, err);
	if (!s)
		return false;
	bool ok = true;
	for (size_t i = 0; ok && i < b->file_count; i++) {
		const struct sandbox_template_file *f = &b->files[i];
		say(b, "writing %.1000s (%zu bytes)\n", f->path, f->len);
		ok = sandbox_write_file(s, SANDBOX_AS_ROOT, f->path, f->data, f->len, f->mode, err);
		if (!ok)
			error_prefix(err, "file %.200s", f->path);
	}
	for (size_t i = 0; ok && b->commands && b->commands[i]; i++)
		ok = run_command(s, b, i, err);
	if (ok) {
		say(b, "keeping its files\n");
		ok = sandbox_snapshot_save(s, dest, err);
	}
	struct error ended;
	sandbox_destroy(s, &ended);
	return ok;
}

bool sandbox_template_debootstrap(const char *release, const char *packages, const char *dir,
				  int timeout_ms, struct error *err)
{
	static const char *const candidates[] = { "/usr/bin/mmdebstrap",
						  "/usr/local/bin/mmdebstrap" };
	const char *mmdebstrap = NULL;
	for (size_t i = 0; i < 2 && !mmdebstrap; i++)
		if (access(candidates[i], X_OK) == 0)
			mmdebstrap = candidates[i];
	if (!mmdebstrap)
		return error_set(err, 0,
				 "a Debian release as base needs mmdebstrap: apt-get "
				 "install mmdebstrap");
	char include[4200];
	snprintf(include, sizeof(include), "--include=%s", packages);
	const char *argv[10] = { mmdebstrap, "--variant=apt",
				 geteuid() == 0 ? "--mode=root" : "--mode=unshare",
				 "--format=directory", "--quiet" };
	size_t n = 5;
	if (packages && packages[0])
		argv[n++] = include;
	argv[n++] = release;
	argv[n++] = dir;
	argv[n] = NULL;
	return sandbox_command_run(argv, -1, timeout_ms, "mmdebstrap", err);
}
