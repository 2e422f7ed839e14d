/* SPDX-License-Identifier: MIT */
#include "bridge/tools/snapshots.h"

#include "bridge/tools/common.h"

#include "bridge/session/info.h"
#include "bridge/session/session.h"
#include "bridge/session/snapshot.h"
#include "mcp/server.h"
#include "sandbox/sandbox.h"
#include "sandbox/tree.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <dirent.h>
#include <unistd.h>

/* Entries a size walk counts before it gives a lower bound. */
#define SIZE_MAX_ENTRIES 2000000

bool tools_is_snapshot_id(const char *name)
{
	if (!name || strncmp(name, "snap-", 5) != 0 || strlen(name) != 17)
		return false;
	for (const char *c = name + 5; *c; c++)
		if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f')))
			return false;
	return true;
}

bool tools_snapshot_store_ready(struct bridge_tools_context *c, struct mcp_call *call)
{
	if (c->snapshots_dir[0])
		return true;
	mcp_call_fail(call,
		      "snapshots need the data directory (--data-dir), which this daemon "
		      "could not open: %s",
		      c->volumes_why[0] ? c->volumes_why : "see its start log");
	return false;
}

cJSON *tools_kept_read_meta(const char *dir)
{
	char path[700];
	snprintf(path, sizeof(path), "%s/meta.json", dir);
	FILE *f = fopen(path, "re");
	if (!f)
		return NULL;
	char text[64 * 1024];
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	cJSON *meta = cJSON_ParseWithLength(text, n);
	if (meta && !cJSON_IsObject(meta)) {
		cJSON_Delete(meta);
		meta = NULL;
	}
	return meta;
}

void tools_kept_delete(struct mcp_call *call, const char *dir, const char *key, const char *name)
{
	struct error err;
	if (!sandbox_remove_files(dir, &err)) {
		mcp_call_fail(call, "could not delete %s %s: %s", key, name, err.message);
		return;
	}
	cJSON *reply = cJSON_CreateObject();
	cJSON_AddStringToObject(reply, key, name);
	cJSON_AddBoolToObject(reply, "deleted", true);
	tools_reply_data(call, reply);
}

cJSON *tools_snapshot_load(struct bridge_tools_context *c, struct mcp_call *call, const char *id,
			   char *dir, size_t size)
{
	if (!tools_snapshot_store_ready(c, call))
		return NULL;
	snprintf(dir, size, "%s/%s", c->snapshots_dir, id);
	cJSON *meta = tools_is_snapshot_id(id) ? tools_kept_read_meta(dir) : NULL;
	const cJSON *template = cJSON_GetObjectItemCaseSensitive(meta, "template");
	if (!cJSON_IsString(template)) {
		cJSON_Delete(meta);
		mcp_call_fail(call, "there is no snapshot %s (list_snapshots names them)", id);
		return NULL;
	}
	return meta;
}

/* What list_snapshots and snapshot_session say of one. */
static cJSON *describe(const char *dir, const char *id)
{
	cJSON *meta = tools_kept_read_meta(dir);
	cJSON *out = cJSON_CreateObject();
	if (!out) {
		cJSON_Delete(meta);
		return NULL;
	}
	cJSON_AddStringToObject(out, "snapshot", id);
	static const char *const copied[] = { "template", "session", "volume", "metadata" };
	for (size_t i = 0; i < sizeof(copied) / sizeof(copied[0]); i++) {
		cJSON *item = cJSON_GetObjectItemCaseSensitive(meta, copied[i]);
		if (item)
			cJSON_AddItemToObject(out, copied[i], cJSON_Duplicate(item, true));
	}
	cJSON_Delete(meta);
	struct stat st;
	if (stat(dir, &st) == 0) {
		struct tm tm;
		char when[32];
		gmtime_r(&st.st_mtime, &tm);
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
		cJSON_AddStringToObject(out, "created", when);
	}
	uint64_t bytes = 0;
	bool complete = false;
	sandbox_tree_size(dir, SIZE_MAX_ENTRIES, &bytes, &complete, NULL);
	cJSON_AddNumberToObject(out, "bytes", (double)bytes);
	return out;
}

bool tools_snapshot_take(struct bridge_tools_context *c, struct mcp_call *call,
			 struct bridge_session *s, char *id, size_t size)
{
	unsigned char random[6];
	if (getrandom(random, sizeof(random), 0) != (ssize_t)sizeof(random)) {
		mcp_call_fail(call, "cannot draw a snapshot id");
		return false;
	}
	snprintf(id, size, "snap-%02x%02x%02x%02x%02x%02x", random[0], random[1], random[2],
		 random[3], random[4], random[5]);
	char partial[600], final[600];
	snprintf(partial, sizeof(partial), "%s/.%s.partial", c->snapshots_dir, id);
	snprintf(final, sizeof(final), "%s/%s", c->snapshots_dir, id);
	struct error err;
	if (mkdir(partial, 0700) != 0) {
		mcp_call_fail(call, "cannot create %s: %s", partial, strerror(errno));
		return false;
	}
	if (!bridge_session_snapshot(s, partial, &err) || rename(partial, final) != 0) {
		if (!err.message[0])
			error_set(&err, errno, "cannot rename %s", partial);
		sandbox_remove_files(partial, NULL);
		mcp_call_fail(call, "could not snapshot session %s: %s", bridge_session_id(s),
			      err.message);
		return false;
	}
	return true;
}

void tools_snapshot_session(struct mcp_call *call, const cJSON *args,
			    struct bridge_tools_context *c)
{
	struct bridge_session *s = tools_session(c, call, args);
	char id[32], dir[600];
	if (!s || !tools_snapshot_store_ready(c, call) ||
	    !tools_snapshot_take(c, call, s, id, sizeof(id)))
		return;
	snprintf(dir, sizeof(dir), "%s/%s", c->snapshots_dir, id);
	tools_reply_data(call, describe(dir, id));
}

void tools_list_snapshots(struct mcp_call *call, const cJSON *args, struct bridge_tools_context *c)
{
	(void)args;
	if (!tools_snapshot_store_ready(c, call))
		return;
	cJSON *reply = cJSON_CreateObject();
	cJSON *list = reply ? cJSON_AddArrayToObject(reply, "snapshots") : NULL;
	DIR *d = list ? opendir(c->snapshots_dir) : NULL;
	double total = 0;
	struct dirent *entry;
	while (d && (entry = readdir(d))) {
		if (!tools_is_snapshot_id(entry->d_name))
			continue;
		char dir[800];
		snprintf(dir, sizeof(dir), "%s/%.200s", c->snapshots_dir, entry->d_name);
		cJSON *one = describe(dir, entry->d_name);
		if (one) {
			total += cJSON_GetNumberValue(
				cJSON_GetObjectItemCaseSensitive(one, "bytes"));
			cJSON_AddItemToArray(list, one);
		}
	}
	if (d)
		closedir(d);
	if (reply)
		cJSON_AddNumberToObject(reply, "bytes", total);
	tools_reply_data(call, reply);
}

void tools_delete_snapshot(struct mcp_call *call, const cJSON *args, struct bridge_tools_context *c)
{
	const char *id = tools_string(args, "snapshot", "");
	char dir[600];
	cJSON *meta = tools_snapshot_load(c, call, id, dir, sizeof(dir));
	if (!meta)
		return;
	cJSON_Delete(meta);
	/* Sessions restored from it hold copies: nothing else uses it. */
	tools_kept_delete(call, dir, "snapshot", id);
}
