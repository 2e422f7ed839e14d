/* SPDX-License-Identifier: MIT */
#include "bridge/tools/volumes.h"

#include "bridge/tools/common.h"

#include "mcp/server.h"
#include "sandbox/disk.h"
#include "sandbox/size.h"
#include "sandbox/volume.h"
#include "util/utf8.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

/* A volume's limit when create_volume names none, where disks can be made. */
#define VOLUME_DEFAULT_BYTES ((uint64_t)10 << 30)

/* The daemon's volumes, or NULL with the call failed saying why not. */
static struct sandbox_volumes *volumes_of(struct bridge_tools_context *c, struct mcp_call *call)
{
	if (!c->volumes)
		mcp_call_fail(call, "volumes are unavailable in this daemon: %s", c->volumes_why);
	return c->volumes;
}

static void reply_name(struct mcp_call *call, const char *name)
{
	cJSON *reply = cJSON_CreateObject();
	if (!reply || !cJSON_AddStringToObject(reply, "name", name)) {
		cJSON_Delete(reply);
		mcp_call_fail(call, "out of memory");
		return;
	}
	tools_reply_data(call, reply);
}

/* The limit create_volume's size asks for: bytes, or 0 for "unlimited". */
static bool volume_limit(struct mcp_call *call, const cJSON *args, uint64_t *bytes)
{
	const char *size = tools_string(args, "size", NULL);
	struct error failed;
	bool disks = sandbox_disk_available(&failed);
	char shown[40];
	if (!size) {
		*bytes = disks ? VOLUME_DEFAULT_BYTES : 0;
		return true;
	}
	if (strcmp(size, "unlimited") == 0) {
		*bytes = 0;
		return true;
	}
	if (!sandbox_parse_bytes(size, bytes, &failed) || *bytes < SANDBOX_DISK_MIN ||
	    *bytes > SANDBOX_DISK_MAX) {
		mcp_call_fail(call,
			      "size \"%s\" is not a size from 64M to 16T (like 512M or 20G) "
			      "or \"unlimited\"",
			      utf8_excerpt(shown, sizeof(shown), size));
		return false;
	}
	if (!disks) {
		mcp_call_fail(call,
			      "size %s cannot be enforced: %s. Use size \"unlimited\" for "
			      "a volume without a limit.",
			      utf8_excerpt(shown, sizeof(shown), size), failed.message);
		return false;
	}
	return true;
}

void tools_create_volume(struct mcp_call *call, const cJSON *args,
			 struct bridge_tools_context *context)
{
	struct sandbox_volumes *volumes = volumes_of(context, call);
	const char *name = tools_string(args, "name", "");
	uint64_t limit;
	struct error failed;
	if (!volumes || !volume_limit(call, args, &limit))
		return;
	if (!sandbox_volume_create(volumes, name, limit, &failed)) {
		mcp_call_fail(call, "%s", failed.message);
		return;
	}
	cJSON *reply = cJSON_CreateObject();
	bool ok = reply && cJSON_AddStringToObject(reply, "name", name) &&
		  (limit ? cJSON_AddNumberToObject(reply, "limit_bytes", (double)limit) != NULL
			 : cJSON_AddNullToObject(reply, "limit_bytes") != NULL);
	if (!ok) {
		cJSON_Delete(reply);
		mcp_call_fail(call, "out of memory");
		return;
	}
	tools_reply_data(call, reply);
}

void tools_delete_volume(struct mcp_call *call, const cJSON *args,
			 struct bridge_tools_context *context)
{
	struct sandbox_volumes *volumes = volumes_of(context, call);
	const char *name = tools_string(args, "name", "");
	struct error failed;
	if (!volumes)
		return;
	if (!sandbox_volume_delete(volumes, name, &failed)) {
		mcp_call_fail(call, "%s", failed.message);
		return;
	}
	reply_name(call, name);
}

static cJSON *describe_volume(const struct sandbox_volume_info *v)
{
	cJSON *item = cJSON_CreateObject();
	bool ok = item && cJSON_AddStringToObject(item, "name", v->name) &&
		  cJSON_AddNumberToObject(item, "bytes", (double)v->bytes) &&
		  cJSON_AddBoolToObject(item, "bytes_complete", v->bytes_complete) &&
		  (v->limit_bytes ? cJSON_AddNumberToObject(item, "limit_bytes",
							    (double)v->limit_bytes) != NULL
				  : cJSON_AddNullToObject(item, "limit_bytes") != NULL) &&
		  (v->session[0] ? cJSON_AddStringToObject(item, "session", v->session) != NULL
				 : cJSON_AddNullToObject(item, "session") != NULL) &&
		  cJSON_AddBoolToObject(item, "other_daemon", v->other_daemon);
	if (!ok) {
		cJSON_Delete(item);
		return NULL;
	}
	return item;
}

void tools_list_volumes(struct mcp_call *call, const cJSON *args,
			struct bridge_tools_context *context)
{
	(void)args;
	struct sandbox_volumes *volumes = volumes_of(context, call);
	if (!volumes)
		return;
	struct sandbox_volume_info *list = NULL;
	size_t count = 0;
	struct error failed;
	if (!sandbox_volume_list(volumes, &list, &count, &failed)) {
		mcp_call_fail(call, "%s", failed.message);
		return;
	}
	cJSON *reply = cJSON_CreateObject();
	cJSON *array = reply ? cJSON_AddArrayToObject(reply, "volumes") : NULL;
	bool ok = array != NULL;
	for (size_t i = 0; ok && i < count; i++) {
		cJSON *item = describe_volume(&list[i]);
		ok = item && cJSON_AddItemToArray(array, item);
	}
	free(list);
	if (!ok) {
		cJSON_Delete(reply);
		mcp_call_fail(call, "out of memory");
		return;
	}
	tools_reply_data(call, reply);
}
