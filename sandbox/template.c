/* SPDX-License-Identifier: MIT */
#include "sandbox/template.h"

#include "sandbox/command.h"
#include "sandbox/files.h"
#include "sandbox/run.h"
#include "sandbox/sandbox.h"
#include "sandbox/snapshot.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The host's apt source files a build from its own release takes. */
#define SOURCE_FILES_MAX 16

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

/* The host's release name (VERSION_CODENAME of /etc/os-release) in out;
 * "" when it says none. */
static void host_codename(char *out, size_t size)
{
	out[0] = '\0';
	FILE *f = fopen("/etc/os-release", "re");
	if (!f)
		return;
	char line[256];
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "VERSION_CODENAME=", 17) != 0)
			continue;
		char *value = line + 17;
		value[strcspn(value, "\r\n")] = '\0';
		if (value[0] == '"' || value[0] == '\'')
			value++;
		value[strcspn(value, "\"'")] = '\0';
		snprintf(out, size, "%.63s", value);
	}
	fclose(f);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The host's apt source files (sources.list, then sources.list.d's .list
 * and .sources files by name) into paths, at most max; their count. */
static size_t host_sources(char paths[][300], size_t max)
{
	size_t n = 0;
	struct stat st;
	if (stat("/etc/apt/sources.list", &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
		snprintf(paths[n++], sizeof(paths[0]), "/etc/apt/sources.list");
	DIR *dir = opendir("/etc/apt/sources.list.d");
	if (!dir)
		return n;
	char *names[SOURCE_FILES_MAX];
	size_t found = 0;
	for (struct dirent *e; found < SOURCE_FILES_MAX && (e = readdir(dir));) {
		size_t len = strlen(e->d_name);
		bool list = len > 5 && strcmp(e->d_name + len - 5, ".list") == 0;
		bool deb822 = len > 8 && strcmp(e->d_name + len - 8, ".sources") == 0;
		if ((list || deb822) && (names[found] = strdup(e->d_name)))
			found++;
	}
	closedir(dir);
	qsort(names, found, sizeof(names[0]), by_name);
	for (size_t i = 0; i < found; i++) {
		char path[300];
		snprintf(path, sizeof(path), "/etc/apt/sources.list.d/%.250s", names[i]);
		if (n < max && stat(path, &st) == 0 && S_ISREG(st.st_mode))
			snprintf(paths[n++], sizeof(paths[0]), "%s", path);
		free(names[i]);
	}
	return n;
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
	const char *argv[16 + SOURCE_FILES_MAX] = { mmdebstrap, "--variant=apt",
						    geteuid() == 0 ? "--mode=root"
								   : "--mode=unshare",
						    "--format=directory", "--quiet" };
	size_t n = 5;
	if (packages && packages[0])
		argv[n++] = include;
	/* The packages the host's apt already has go in first (hard links:
	 * nothing is copied, and apt checks each against the index), and out
	 * again before the image is kept. */
	argv[n++] = "--setup-hook=mkdir -p \"$1/var/cache/apt/archives\" && "
		    "find /var/cache/apt/archives -maxdepth 1 -name '*.deb' -type f "
		    "-exec cp -l -t \"$1/var/cache/apt/archives/\" {} + 2>/dev/null; true";
	argv[n++] = "--customize-hook=rm -f \"$1\"/var/cache/apt/archives/*.deb";
	argv[n++] = release;
	argv[n++] = dir;
	/* The host's own release comes from the host's sources (its mirror,
	 * its proxy-free URIs, its security suite); another from Debian's. */
	char codename[64], sources[SOURCE_FILES_MAX][300];
	host_codename(codename, sizeof(codename));
	size_t count = strcmp(codename, release) == 0 ? host_sources(sources, SOURCE_FILES_MAX) : 0;
	for (size_t i = 0; i < count; i++)
		argv[n++] = sources[i];
	argv[n] = NULL;
	return sandbox_command_run(argv, -1, timeout_ms, "mmdebstrap", err);
}
