/* SPDX-License-Identifier: MIT */
#include "bridge/tools/templates.h"

#include "bridge/tools/common.h"
#include "bridge/tools/snapshots.h"

#include "bridge/session/registry.h"
#include "mcp/server.h"
#include "sandbox/name.h"
#include "sandbox/snapshot.h"
#include "sandbox/template.h"
#include "sandbox/sandbox.h"
#include "sandbox/tree.h"
#include "sandbox/uid.h"
#include "sandbox/volume.h"
#include "util/base64.h"
#include "util/blob.h"
#include "util/clock.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define COMMAND_TIMEOUT_MS 1800000 /* an apt-get install of a desktop takes minutes */
#define MAX_FILES 256
#define MAX_COMMANDS 256
#define SIZE_MAX_ENTRIES 2000000

static const char *const built_in[] = { "desktop", "bare", "base", "interpreter", "host" };

static bool is_built_in(const char *name)
{
	for (size_t i = 0; i < sizeof(built_in) / sizeof(built_in[0]); i++)
		if (strcmp(name, built_in[i]) == 0)
			return true;
	return false;
}

static bool templates_dir(struct bridge_tools_context *c, struct mcp_call *call, char *out,
			  size_t size)
{
	if (!c->snapshots_dir[0]) {
		mcp_call_fail(call, "templates need the data directory (--data-dir), which this "
				    "daemon could not open");
		return false;
	}
	/* Beside snapshots/ in the data directory. */
	snprintf(out, size, "%.*s/templates", (int)(strlen(c->snapshots_dir) - 10),
		 c->snapshots_dir);
	return true;
}

cJSON *tools_image_load(struct bridge_tools_context *c, struct mcp_call *call, const char *name,
			char *dir, size_t size)
{
	if (tools_is_snapshot_id(name))
		return tools_snapshot_load(c, call, name, dir, size);
	char templates[600];
	if (!templates_dir(c, call, templates, sizeof(templates)))
		return NULL;
	struct error err;
	if (!sandbox_name_check("template", name, &err)) {
		mcp_call_fail(call,
			      "template %s is not desktop, bare, base, interpreter, a built "
			      "template or a snapshot id: %s",
			      name, err.message);
		return NULL;
	}
	snprintf(dir, size, "%s/%s", templates, name);
	cJSON *meta = tools_kept_read_meta(dir);
	if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(meta, "template"))) {
		cJSON_Delete(meta);
		mcp_call_fail(call,
			      "template %s is not desktop, bare, base, interpreter, a built "
			      "template (list_templates names them) or a snapshot id",
			      name);
		return NULL;
	}
	return meta;
}

/* The files of spec ([{path, text | data (base64), mode}]) for the build;
 * the decoded bytes are kept in buffers, freed by the caller. */
static bool parse_files(const cJSON *list, struct sandbox_template_file *files, void **buffers,
			size_t *count, struct error *err)
{
	*count = 0;
	const cJSON *item;
	cJSON_ArrayForEach(item, list)
	{
		if (*count >= MAX_FILES)
			return error_set(err, 0, "at most %d files", MAX_FILES);
		const cJSON *path = cJSON_GetObjectItemCaseSensitive(item, "path");
		const cJSON *text = cJSON_GetObjectItemCaseSensitive(item, "text");
		const cJSON *data = cJSON_GetObjectItemCaseSensitive(item, "data");
		const cJSON *mode = cJSON_GetObjectItemCaseSensitive(item, "mode");
		if (!cJSON_IsString(path) || path->valuestring[0] != '/')
			return error_set(err, 0, "every file needs an absolute path inside");
		if (cJSON_IsString(text) == cJSON_IsString(data))
			return error_set(err, 0,
					 "file %.200s needs text or data (base64), one of them",
					 path->valuestring);
		struct sandbox_template_file *f = &files[*count];
		f->path = path->valuestring;
		f->mode = cJSON_IsNumber(mode) ? (unsigned)mode->valueint & 07777 : 0644;
		if (cJSON_IsString(text)) {
			f->data = text->valuestring;
			f->len = strlen(text->valuestring);
		} else {
			size_t len = strlen(data->valuestring), out_len = 0;
			unsigned char *bytes = malloc(len / 4 * 3 + 3);
			buffers[*count] = bytes;
			if (!bytes || !base64_decode(data->valuestring, len, bytes, &out_len))
				return error_set(err, 0, "file %.200s: data is not base64",
						 path->valuestring);
			f->data = bytes;
			f->len = out_len;
		}
		(*count)++;
	}
	return true;
}

/* NULL-terminated copies of an array of strings' pointers ("NAME=value"
 * for an object), or NULL with err. */
static const char **string_list(const cJSON *from, bool pairs, struct error *err)
{
	int n = cJSON_GetArraySize(from);
	if (n > MAX_COMMANDS)
		return error_null(err, 0, "at most %d commands or envs", MAX_COMMANDS);
	const char **list = calloc((size_t)n + 1, sizeof(char *));
	const cJSON *item;
	int i = 0;
	cJSON_ArrayForEach(item, from)
	{
		if (!list || !cJSON_IsString(item)) {
			free(list);
			return error_null(err, 0, "commands and envs are strings");
		}
		if (pairs) {
			char *pair = NULL;
			if (asprintf(&pair, "%s=%s", item->string, item->valuestring) < 0)
				pair = NULL;
			list[i++] = pair;
		} else {
			list[i++] = item->valuestring;
		}
	}
	return list;
}

struct build_log {
	struct mcp_call *call; /* NULL: to stderr (the command line) */
	double bytes;
};

static void build_log(void *context, const char *text, size_t len)
{
	struct build_log *log = context;
	log->bytes += (double)len;
	if (!log->call) {
		fwrite(text, 1, len, stderr);
		return;
	}
	char *message = strndup(text, len);
	if (message)
		mcp_call_progress(log->call, log->bytes, -1, message);
	free(message);
}

/* Debian releases mmdebstrap can make a base of. */
#define RELEASES "bullseye, bookworm, trixie, sid, oldstable, stable, testing, unstable"

static bool is_release(const char *name)
{
	static const char *const releases[] = { "bullseye",  "bookworm", "trixie",  "sid",
						"oldstable", "stable",   "testing", "unstable" };
	for (size_t i = 0; i < sizeof(releases) / sizeof(releases[0]); i++)
		if (strcmp(name, releases[i]) == 0)
			return true;
	return false;
}

/* packages ([names]) as "a,b,c", each a Debian package name. */
static bool package_list(const cJSON *list, char *out, size_t size, struct error *err)
{
	size_t used = 0;
	out[0] = '\0';
	const cJSON *item;
	cJSON_ArrayForEach(item, list)
	{
		const char *name = cJSON_GetStringValue(item);
		size_t len = name ? strlen(name) : 0;
		bool valid = len >= 2 && len <= 100 &&
			     strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789.+-") == len &&
			     name[0] != '-' && name[0] != '.';
		if (!valid)
			return error_set(err, 0, "package %.100s is not a Debian package name",
					 name ? name : "(not a string)");
		if (used + len + 2 > size)
			return error_set(err, 0, "too many packages");
		used += (size_t)snprintf(out + used, size - used, "%s%s", used ? "," : "", name);
	}
	return true;
}

/* commands with first in front, as a new list (the old one is freed). */
static const char **prepend(const char **commands, const char *first, struct error *err)
{
	size_t n = 0;
	while (commands && commands[n])
		n++;
	const char **list = calloc(n + 2, sizeof(char *));
	if (!list) {
		free(commands);
		return error_null(err, ENOMEM, "out of memory");
	}
	list[0] = first;
	for (size_t i = 0; i < n; i++)
		list[i + 1] = commands[i];
	free(commands);
	return list;
}

/* A Debian release's root at dir (sandbox/template.h), said in the log. */
static bool debootstrap(const char *release, const char *packages, const char *dir,
			struct build_log *log, struct error *err)
{
	char said[200];
	int n = snprintf(said, sizeof(said), "mmdebstrap %s (a minute or more)\n", release);
	build_log(log, said, (size_t)n);
	return sandbox_template_debootstrap(release, packages, dir, COMMAND_TIMEOUT_MS, err);
}

/* Builds the template spec names ({name, base, start, files, commands,
 * envs}) into templates/<name>, under a .partial name renamed at the end,
 * so that a failed build leaves nothing. */
static bool build(const char *templates, const cJSON *spec, const struct sandbox_uid_range *range,
		  struct build_log *log, struct error *err)
{
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(spec, "name"));
	const char *base = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(spec, "base"));
	const char *start = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(spec, "start"));
	base = base ? base : "host";
	start = start ? start : "base";
	if (!name || !sandbox_name_check("template", name, err))
		return false;
	if (is_built_in(name) || tools_is_snapshot_id(name))
		return error_set(err, 0, "%s is a built-in template's name or a snapshot's", name);
	if (strcmp(start, "base") != 0 && strcmp(start, "bare") != 0 &&
	    strcmp(start, "desktop") != 0)
		return error_set(err, 0, "start %s is not base, bare or desktop", start);
	char from[800] = "", final[800], partial[800];
	snprintf(final, sizeof(final), "%s/%s", templates, name);
	snprintf(partial, sizeof(partial), "%s/.%s.partial", templates, name);
	struct stat st;
	if (lstat(final, &st) == 0)
		return error_set(err, EEXIST, "template %s exists; delete_template it first", name);
	bool release = false;
	if (strcmp(base, "host") != 0) {
		if (!sandbox_name_check("template", base, err))
			return false;
		snprintf(from, sizeof(from), "%s/%s", templates, base);
		cJSON *meta = tools_kept_read_meta(from);
		cJSON_Delete(meta);
		release = !meta && is_release(base);
		if (release)
			from[0] = '\0';
		else if (!meta)
			return error_set(err, 0,
					 "base %s is not host, a Debian release (%s) or a built "
					 "template",
					 base, RELEASES);
	}
	char packages[4096] = "";
	if (!package_list(cJSON_GetObjectItemCaseSensitive(spec, "packages"), packages,
			  sizeof(packages), err))
		return false;
	struct sandbox_template_file files[MAX_FILES];
	void *buffers[MAX_FILES] = { 0 };
	size_t file_count = 0;
	const cJSON *commands_json = cJSON_GetObjectItemCaseSensitive(spec, "commands");
	const cJSON *envs_json = cJSON_GetObjectItemCaseSensitive(spec, "envs");
	const char **commands = NULL, **envs = NULL;
	bool ok = parse_files(cJSON_GetObjectItemCaseSensitive(spec, "files"), files, buffers,
			      &file_count, err) &&
		  (commands = string_list(commands_json, false, err)) &&
		  (envs = string_list(envs_json, true, err));
	sandbox_remove_files(partial, NULL); /* what a killed build left */
	if (ok && mkdir(partial, 0700) != 0)
		ok = error_set(err, errno, "cannot create %s", partial);
	int64_t started = clock_monotonic_ms();
	char image[900];
	snprintf(image, sizeof(image), "%s/image", partial);
	if (ok && release)
		ok = debootstrap(base, packages, image, log, err);
	/* On another base, the packages come with apt-get, as a first command. */
	char *install = NULL;
	if (ok && !release && packages[0]) {
		for (char *c = packages; *c; c++)
			if (*c == ',')
				*c = ' ';
		if (asprintf(
			    &install,
			    "apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -q -y "
			    "--no-install-recommends %s",
			    packages) < 0)
			install = NULL;
		ok = install && (commands = prepend(commands, install, err));
	}
	if (ok) {
		struct sandbox_template_build b = {
			.image_dir = release ? image : NULL,
			.from_dir = from[0] ? from : NULL,
			.files = files,
			.file_count = file_count,
			.commands = commands,
			.envs = envs,
			.command_timeout_ms = COMMAND_TIMEOUT_MS,
			.uid_range = range,
			.log = build_log,
			.context = log,
		};
		ok = sandbox_template_build(&b, partial, err);
	}
	if (ok) {
		cJSON *meta = cJSON_CreateObject();
		cJSON_AddStringToObject(meta, "name", name);
		cJSON_AddStringToObject(meta, "template", start);
		cJSON_AddStringToObject(meta, "base", base);
		if (envs_json)
			cJSON_AddItemToObject(meta, "envs", cJSON_Duplicate(envs_json, true));
		if (commands_json)
			cJSON_AddItemToObject(meta, "commands",
					      cJSON_Duplicate(commands_json, true));
		cJSON_AddNumberToObject(meta, "build_ms", (double)(clock_monotonic_ms() - started));
		char *text = cJSON_PrintUnformatted(meta);
		cJSON_Delete(meta);
		char path[900];
		snprintf(path, sizeof(path), "%s/meta.json", partial);
		FILE *f = text ? fopen(path, "wxe") : NULL;
		ok = f && fputs(text, f) >= 0;
		ok = f && fclose(f) == 0 && ok;
		free(text);
		if (!ok)
			error_set(err, errno, "cannot write %s", path);
	}
	if (ok && rename(partial, final) != 0)
		ok = error_set(err, errno, "cannot rename %s", partial);
	if (!ok)
		sandbox_remove_files(partial, NULL);
	for (size_t i = 0; i < MAX_FILES; i++)
		free(buffers[i]);
	for (size_t i = 0; envs && envs[i]; i++)
		free((char *)envs[i]);
	free(envs);
	free(commands);
	free(install);
	return ok;
}

static cJSON *describe(const char *templates, const char *name)
{
	char dir[800];
	snprintf(dir, sizeof(dir), "%s/%s", templates, name);
	cJSON *meta = tools_kept_read_meta(dir);
	if (!meta)
		return NULL;
	cJSON *out = cJSON_CreateObject();
	cJSON_AddStringToObject(out, "name", name);
	cJSON_AddBoolToObject(out, "built_in", false);
	static const char *const copied[] = { "template", "base", "build_ms", "commands" };
	for (size_t i = 0; i < sizeof(copied) / sizeof(copied[0]); i++) {
		cJSON *item = cJSON_GetObjectItemCaseSensitive(meta, copied[i]);
		if (item)
			cJSON_AddItemToObject(out, i == 0 ? "start" : copied[i],
					      cJSON_Duplicate(item, true));
	}
	cJSON_Delete(meta);
	uint64_t bytes = 0;
	bool complete = false;
	sandbox_tree_size(dir, SIZE_MAX_ENTRIES, &bytes, &complete, NULL);
	cJSON_AddNumberToObject(out, "bytes", (double)bytes);
	return out;
}

void tools_build_template(struct mcp_call *call, const cJSON *args, struct bridge_tools_context *c)
{
	char templates[600];
	if (!templates_dir(c, call, templates, sizeof(templates)))
		return;
	mkdir(templates, 0700);
	struct build_log log = { .call = call };
	struct error err;
	if (!build(templates, args, &c->uid_range, &log, &err)) {
		mcp_call_fail(call, "could not build the template: %s", err.message);
		return;
	}
	tools_reply_data(
		call,
		describe(templates, cJSON_GetObjectItemCaseSensitive(args, "name")->valuestring));
}

void tools_list_templates(struct mcp_call *call, const cJSON *args, struct bridge_tools_context *c)
{
	(void)args;
	char templates[600];
	if (!templates_dir(c, call, templates, sizeof(templates)))
		return;
	static const char *const starts[] = { "desktop", "bare", "base", "base" };
	cJSON *reply = cJSON_CreateObject();
	cJSON *list = cJSON_AddArrayToObject(reply, "templates");
	for (size_t i = 0; i < 4; i++) {
		cJSON *one = cJSON_CreateObject();
		cJSON_AddStringToObject(one, "name", built_in[i]);
		cJSON_AddBoolToObject(one, "built_in", true);
		cJSON_AddStringToObject(one, "start", starts[i]);
		cJSON_AddStringToObject(one, "base", "host");
		cJSON_AddNumberToObject(one, "bytes", 0);
		cJSON_AddItemToArray(list, one);
	}
	DIR *d = opendir(templates);
	struct dirent *entry;
	while (d && (entry = readdir(d))) {
		cJSON *one = entry->d_name[0] != '.' ? describe(templates, entry->d_name) : NULL;
		if (one)
			cJSON_AddItemToArray(list, one);
	}
	if (d)
		closedir(d);
	tools_reply_data(call, reply);
}

/* Who uses the template name: a session started from it or a snapshot of
 * one; "" when nobody. */
static void user_of(struct bridge_tools_context *c, const char *templates, const char *name,
		    char *who, size_t size)
{
	who[0] = '\0';
	cJSON *sessions = bridge_registry_describe(c->registry);
	const cJSON *item;
	cJSON_ArrayForEach(item, sessions)
	{
		const char *image = cJSON_GetStringValue(
			cJSON_GetObjectItemCaseSensitive(item, "image"));
		if (image && strcmp(image, name) == 0 && !who[0])
			snprintf(who, size, "session %s",
				 cJSON_GetStringValue(
					 cJSON_GetObjectItemCaseSensitive(item, "session")));
	}
	cJSON_Delete(sessions);
	DIR *d = who[0] ? NULL : opendir(c->snapshots_dir);
	struct dirent *entry;
	while (d && (entry = readdir(d)) && !who[0]) {
		if (!tools_is_snapshot_id(entry->d_name))
			continue;
		char dir[800];
		snprintf(dir, sizeof(dir), "%s/%s", c->snapshots_dir, entry->d_name);
		cJSON *meta = tools_kept_read_meta(dir);
		const char *image = cJSON_GetStringValue(
			cJSON_GetObjectItemCaseSensitive(meta, "image"));
		/* Or rests on its image (a snapshot of a session restored from
		 * a snapshot of one). */
		char lower[700], own[700];
		sandbox_snapshot_image(dir, lower, sizeof(lower));
		snprintf(own, sizeof(own), "%s/%s/image", templates, name);
		if ((image && strcmp(image, name) == 0) || (lower[0] && strcmp(lower, own) == 0))
			snprintf(who, size, "snapshot %.150s", entry->d_name);
		cJSON_Delete(meta);
	}
	if (d)
		closedir(d);
}

void tools_delete_template(struct mcp_call *call, const cJSON *args, struct bridge_tools_context *c)
{
	const char *name = tools_string(args, "name", "");
	char dir[600];
	if (tools_is_snapshot_id(name)) {
		mcp_call_fail(call, "%s is a snapshot: delete_snapshot removes it", name);
		return;
	}
	if (is_built_in(name)) {
		mcp_call_fail(call,
			      "%s is built in; only templates built with build_template can "
			      "be deleted",
			      name);
		return;
	}
	cJSON *meta = tools_image_load(c, call, name, dir, sizeof(dir));
	if (!meta)
		return;
	cJSON_Delete(meta);
	char who[200];
	char templates[600];
	if (!templates_dir(c, call, templates, sizeof(templates)))
		return;
	user_of(c, templates, name, who, sizeof(who));
	if (who[0]) {
		mcp_call_fail(call, "template %s is in use by %s; end or delete that first", name,
			      who);
		return;
	}
	tools_kept_delete(call, dir, "name", name);
}

/* The command line's data directory: --data-dir, or the default. */
static bool cli_templates_dir(const char *data_dir, char *out, size_t size)
{
	char fallback[512];
	struct error err;
	if (!data_dir) {
		if (!sandbox_data_dir_default(fallback, sizeof(fallback), &err)) {
			fprintf(stderr, "lizard-bridge: %s\n", err.message);
			return false;
		}
		data_dir = fallback;
	}
	snprintf(out, size, "%.480s/templates", data_dir);
	mkdir(data_dir, 0700);
	if (mkdir(out, 0700) != 0 && errno != EEXIST) {
		fprintf(stderr, "lizard-bridge: cannot create %s: %s\n", out, strerror(errno));
		return false;
	}
	return true;
}

/* A host file as {path, data (base64), mode} for the build. */
static cJSON *cli_file(const char *spec)
{
	const char *colon = strchr(spec, ':');
	if (!colon || colon == spec || colon[1] != '/')
		return NULL;
	char host[600];
	snprintf(host, sizeof(host), "%.*s", (int)(colon - spec), spec);
	FILE *f = fopen(host, "re");
	struct stat st;
	if (!f || fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (64 << 20)) {
		if (f)
			fclose(f);
		return NULL;
	}
	unsigned char *bytes = malloc((size_t)st.st_size + 1);
	size_t n = bytes ? fread(bytes, 1, (size_t)st.st_size, f) : 0;
	fclose(f);
	struct blob *encoded = bytes ? base64_encode(bytes, n) : NULL;
	free(bytes);
	cJSON *file = encoded ? cJSON_CreateObject() : NULL;
	if (file) {
		cJSON_AddStringToObject(file, "path", colon + 1);
		cJSON_AddStringToObject(file, "data", encoded->data);
		cJSON_AddNumberToObject(file, "mode", st.st_mode & 0777);
	}
	blob_unref(encoded);
	return file;
}

static const char cli_usage[] =
	"usage: lizard-bridge template build NAME [--base host|RELEASE|TEMPLATE]\n"
	"                                   [--start base|bare|desktop] [--package NAME]...\n"
	"                                   [--file HOST_PATH:/INSIDE/PATH]... [--run COMMAND]...\n"
	"                                   [--env NAME=VALUE]... [--data-dir DIR]\n"
	"       lizard-bridge template list [--data-dir DIR]\n"
	"       lizard-bridge template delete NAME [--data-dir DIR]\n";

int tools_template_command(int argc, char **argv)
{
	if (argc < 2) {
		fputs(cli_usage, stderr);
		return 2;
	}
	const char *action = argv[1], *data_dir = NULL;
	cJSON *spec = cJSON_CreateObject();
	cJSON *files = cJSON_AddArrayToObject(spec, "files");
	cJSON *commands = cJSON_AddArrayToObject(spec, "commands");
	cJSON *envs = cJSON_AddObjectToObject(spec, "envs");
	cJSON *packages = cJSON_AddArrayToObject(spec, "packages");
	int status = 2;
	for (int i = 2; i < argc; i++) {
		const char *arg = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
		bool takes = arg[0] == '-' && arg[1] == '-';
		if (takes && !value) {
			fprintf(stderr, "lizard-bridge: %s needs a value\n%s", arg, cli_usage);
			goto out;
		}
		if (strcmp(arg, "--data-dir") == 0) {
			data_dir = value;
		} else if (strcmp(arg, "--base") == 0 || strcmp(arg, "--start") == 0) {
			cJSON_AddStringToObject(spec, arg + 2, value);
		} else if (strcmp(arg, "--package") == 0) {
			cJSON_AddItemToArray(packages, cJSON_CreateString(value));
		} else if (strcmp(arg, "--run") == 0) {
			cJSON_AddItemToArray(commands, cJSON_CreateString(value));
		} else if (strcmp(arg, "--env") == 0) {
			const char *equals = strchr(value, '=');
			char name[256];
			if (!equals || equals == value) {
				fprintf(stderr, "lizard-bridge: --env %s is not NAME=VALUE\n",
					value);
				goto out;
			}
			snprintf(name, sizeof(name), "%.*s", (int)(equals - value), value);
			cJSON_AddStringToObject(envs, name, equals + 1);
		} else if (strcmp(arg, "--file") == 0) {
			cJSON *file = cli_file(value);
			if (!file) {
				fprintf(stderr,
					"lizard-bridge: --file %s is not HOST_PATH:/INSIDE/PATH of a "
					"readable regular file (64 MiB at most)\n",
					value);
				goto out;
			}
			cJSON_AddItemToArray(files, file);
		} else if (!takes && !cJSON_GetObjectItemCaseSensitive(spec, "name")) {
			cJSON_AddStringToObject(spec, "name", arg);
			continue;
		} else {
			fprintf(stderr, "lizard-bridge: unknown argument %s\n%s", arg, cli_usage);
			goto out;
		}
		i++;
	}
	char templates[600];
	if (!cli_templates_dir(data_dir, templates, sizeof(templates))) {
		status = 1;
		goto out;
	}
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(spec, "name"));
	if (strcmp(action, "list") == 0) {
		DIR *d = opendir(templates);
		struct dirent *entry;
		while (d && (entry = readdir(d))) {
			cJSON *one = entry->d_name[0] != '.' ? describe(templates, entry->d_name)
							     : NULL;
			char *text = one ? cJSON_PrintUnformatted(one) : NULL;
			if (text)
				printf("%s\n", text);
			free(text);
			cJSON_Delete(one);
		}
		if (d)
			closedir(d);
		status = 0;
	} else if (strcmp(action, "build") == 0 && name) {
		struct build_log log = { .call = NULL };
		struct sandbox_uid_range range = SANDBOX_UID_RANGE_DEFAULT;
		struct error err;
		int64_t started = clock_monotonic_ms();
		status = build(templates, spec, &range, &log, &err) ? 0 : 1;
		if (status == 0) {
			cJSON *one = describe(templates, name);
			double bytes = cJSON_GetNumberValue(
				cJSON_GetObjectItemCaseSensitive(one, "bytes"));
			printf("built template %s in %.1f s, %.1f MiB on disk\n", name,
			       (double)(clock_monotonic_ms() - started) / 1000.0,
			       bytes / 1048576.0);
			cJSON_Delete(one);
		} else {
			fprintf(stderr, "lizard-bridge: could not build template %s: %s\n", name,
				err.message);
		}
	} else if (strcmp(action, "delete") == 0 && name) {
		char dir[800];
		struct error err;
		snprintf(dir, sizeof(dir), "%s/%s", templates, name);
		cJSON *meta = sandbox_name_check("template", name, &err) ? tools_kept_read_meta(dir)
									 : NULL;
		status = meta && sandbox_remove_files(dir, &err) ? 0 : 1;
		cJSON_Delete(meta);
		if (status)
			fprintf(stderr, "lizard-bridge: no template %s to delete\n", name);
		else
			printf("deleted template %s (a running daemon refuses while a session uses "
			       "it; this command does not know its sessions)\n",
			       name);
	} else {
		fputs(cli_usage, stderr);
	}
out:
	cJSON_Delete(spec);
	return status;
}
