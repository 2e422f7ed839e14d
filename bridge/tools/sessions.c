/* SPDX-License-Identifier: MIT */
#include "bridge/tools/sessions.h"

#include "bridge/tools/common.h"
#include "bridge/tools/ice.h"
#include "bridge/tools/snapshots.h"
#include "bridge/tools/templates.h"
#include "bridge/context.h"

#include "bridge/tools/geometry.h"
#include "bridge/session/registry.h"
#include "bridge/session/session.h"
#include "bridge/viewer/hub.h"
#include "bridge/session/resources.h"
#include "bridge/session/info.h"
#include "mcp/server.h"
#include "sandbox/size.h"
#include "vnc/target.h"
#include "util/utf8.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_TIMEOUT_MS 300000
#define DEFAULT_WIDTH 1280
#define DEFAULT_HEIGHT 800
#define MAX_METADATA_KEYS 32
#define MAX_METADATA_VALUE 1024

static bool check_metadata(struct mcp_call *call, const cJSON *metadata)
{
	int count = 0;
	const cJSON *item;
	cJSON_ArrayForEach(item, metadata)
	{
		if (++count > MAX_METADATA_KEYS) {
			mcp_call_fail(call, "metadata takes at most %d keys", MAX_METADATA_KEYS);
			return false;
		}
		if (!cJSON_IsString(item) || strlen(item->valuestring) > MAX_METADATA_VALUE) {
			char shown[65];
			mcp_call_fail(call,
				      "metadata value '%s' must be a string of at most %d bytes",
				      utf8_excerpt(shown, sizeof(shown), item->string),
				      MAX_METADATA_VALUE);
			return false;
		}
	}
	return true;
}

/* size is a preset (small, medium, large: the cgroup's limits) or, as
 * before presets existed, the screen's WxH; screen is always WxH. */
static bool size_and_screen(struct bridge_tools_context *c, struct mcp_call *call,
			    const cJSON *args, bool attached, struct bridge_session_spec *spec,
			    struct sandbox_limits *limits)
{
	const char *size = tools_string(args, "size", NULL);
	const char *screen = tools_string(args, "screen", NULL);
	const char *volume = tools_string(args, "volume", NULL);
	if (attached && (size || screen || volume)) {
		mcp_call_fail(call, "size, screen and volume apply to local desktops; an attached "
				    "one has its server's size and files");
		return false;
	}
	const char *preset = NULL;
	char shown[33];
	if (size && bridge_parse_size(size, &spec->width, &spec->height)) {
		if (screen) {
			mcp_call_fail(call,
				      "size '%s' is a screen size and screen is given too; "
				      "give size a preset (small, medium, large) instead",
				      utf8_excerpt(shown, sizeof(shown), size));
			return false;
		}
	} else if (size) {
		preset = size;
	}
	if (screen && !bridge_parse_size(screen, &spec->width, &spec->height)) {
		mcp_call_fail(call, "screen '%s' is not WxH with each side 64..8192, e.g. 1280x800",
			      utf8_excerpt(shown, sizeof(shown), screen));
		return false;
	}
	if (volume) {
		if (!c->volumes) {
			mcp_call_fail(call, "volumes are unavailable in this daemon: %s",
				      c->volumes_why);
			return false;
		}
		spec->volumes = c->volumes;
		spec->volume = volume;
	}
	if (attached)
		return true;
	struct error failed;
	if (preset && !sandbox_sizes_find(&c->sizes, preset, limits, &failed)) {
		mcp_call_fail(call, "size '%s': %s (or WxH for the screen, e.g. 1280x800)",
			      utf8_excerpt(shown, sizeof(shown), preset), failed.message);
		return false;
	}
	if (!c->cgroup_root) {
		if (preset) {
			mcp_call_fail(
				call,
				"size %s cannot be enforced: this daemon cannot create cgroups "
				"(%s). Leave size out for a session without limits.",
				preset, c->cgroup_why);
			return false;
		}
		return true;
	}
	if (!preset)
		sandbox_sizes_find(&c->sizes, NULL, limits, NULL);
	spec->cgroup_root = c->cgroup_root;
	spec->limits = limits;
	spec->size_name = preset ? preset : "medium";
	return true;
}

/* restore_dir: a snapshot's or built template's files to start with
 * (args then name its template kind), image its name; NULL: none. */
static void create_session(struct mcp_call *call, const cJSON *args,
			   struct bridge_tools_context *context, const char *restore_dir,
			   const char *image)
{
	const char *template = tools_string(args, "template", NULL);
	const char *url = tools_string(args, "vnc", NULL);
	if (template && url) {
		mcp_call_fail(call,
			      "give template (desktop, bare, base, interpreter) or vnc (a URL "
			      "to attach), not both");
		return;
	}
	enum bridge_session_kind kind = BRIDGE_DESKTOP;
	if (url)
		kind = BRIDGE_ATTACHED;
	else if (template && strcmp(template, "bare") == 0)
		kind = BRIDGE_BARE;
	else if (template && strcmp(template, "base") == 0)
		kind = BRIDGE_BASE;
	else if (template && strcmp(template, "interpreter") == 0)
		kind = BRIDGE_INTERPRETER;
	else if (template && strcmp(template, "desktop") != 0) {
		mcp_call_fail(
			call,
			"template %s is not desktop, bare, base, interpreter or a snapshot id "
			"(snap-...; list_snapshots names them)",
			template);
		return;
	}
	struct bridge_session_spec spec = {
		.kind = kind,
		.width = DEFAULT_WIDTH,
		.height = DEFAULT_HEIGHT,
		.timeout_ms = tools_int(args, "timeout_ms", DEFAULT_TIMEOUT_MS),
		.metadata = cJSON_GetObjectItemCaseSensitive(args, "metadata"),
		.uid_range = &context->uid_range,
		.restore_dir = restore_dir,
		.image = image,
	};
	struct sandbox_limits limits;
	if (!size_and_screen(context, call, args, url != NULL, &spec, &limits))
		return;
	if ((kind == BRIDGE_BASE || kind == BRIDGE_INTERPRETER) &&
	    cJSON_GetObjectItemCaseSensitive(args, "screen")) {
		mcp_call_fail(call, "template %s has no screen; screen applies to desktop and bare",
			      template);
		return;
	}
	if (spec.metadata && !check_metadata(call, spec.metadata))
		return;
	spec.network = tools_bool(args, "network", true);
	const cJSON *envs = cJSON_GetObjectItemCaseSensitive(args, "envs");
	if (url && (envs || cJSON_GetObjectItemCaseSensitive(args, "network"))) {
		mcp_call_fail(call, "network and envs apply to local sessions (sandboxes); an "
				    "attached VNC server runs elsewhere");
		return;
	}
	char **env_list = NULL;
	if (envs && !(env_list = tools_env_list(call, envs)))
		return;
	spec.envs = (const char *const *)env_list;

	struct error err;
	struct vnc_target target;
	if (url) {
		if (!vnc_target_parse(url, &target, &err)) {
			mcp_call_fail(call, "%s", err.message);
			tools_free_env_list(env_list);
			return;
		}
		const char *password = tools_string(args, "password", NULL);
		if (password && !vnc_target_set_password(&target, password)) {
			vnc_target_finish(&target);
			mcp_call_fail(call, "out of memory");
			tools_free_env_list(env_list);
			return;
		}
		spec.target = &target;
	}

	char id[32];
	bridge_registry_new_id(id, sizeof(id));
	struct bridge_session *s = bridge_session_create(id, &spec, &err);
	if (url)
		vnc_target_finish(&target);
	tools_free_env_list(env_list);
	if (!s) {
		mcp_call_fail(call, "%s", err.message);
		return;
	}
	/* Listed as starting while the desktop comes up. */
	if (!bridge_registry_add(context->registry, s, &err)) {
		bridge_session_unref(s);
		mcp_call_fail(call, "%s", err.message);
		return;
	}
	if (!bridge_session_start(s, &err)) {
		bridge_registry_kill(context->registry, id, "it failed to start", NULL);
		bridge_session_unref(s);
		mcp_call_fail(call, "could not create the session: %s", err.message);
		return;
	}
	tools_reply_data(call, bridge_session_describe(s));
	bridge_session_unref(s);
}

/* args for a session like the snapshot's: its template, and its screen,
 * envs and metadata where args do not give them. */
static cJSON *restored_args(const cJSON *args, const cJSON *meta)
{
	cJSON *merged = cJSON_Duplicate(args, true);
	if (!merged)
		return NULL;
	cJSON_ReplaceItemInObjectCaseSensitive(
		merged, "template",
		cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(meta, "template"), true));
	static const char *const kept[][2] = { { "envs", "envs" },
					       { "metadata", "metadata" },
					       { "size", "screen" } };
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
		const cJSON *item = cJSON_GetObjectItemCaseSensitive(meta, kept[i][0]);
		if (item && !cJSON_IsNull(item) &&
		    !cJSON_GetObjectItemCaseSensitive(merged, kept[i][1]))
			cJSON_AddItemToObject(merged, kept[i][1], cJSON_Duplicate(item, true));
	}
	return merged;
}

void tools_create_session(struct mcp_call *call, const cJSON *args,
			  struct bridge_tools_context *context)
{
	const char *template = tools_string(args, "template", NULL);
	static const char *const built_in[] = { "desktop", "bare", "base", "interpreter" };
	bool own = !template;
	for (size_t i = 0; !own && i < sizeof(built_in) / sizeof(built_in[0]); i++)
		own = strcmp(template, built_in[i]) == 0;
	if (own) {
		create_session(call, args, context, NULL, NULL);
		return;
	}
	/* A snapshot or a built template (templates.h). */
	char dir[600];
	cJSON *meta = tools_image_load(context, call, template, dir, sizeof(dir));
	if (!meta)
		return;
	cJSON *merged = restored_args(args, meta);
	if (merged)
		create_session(call, merged, context, dir, template);
	else
		mcp_call_fail(call, "out of memory");
	cJSON_Delete(merged);
	cJSON_Delete(meta);
}

/* A snapshot of the session, started at once (snapshots.h). */
void tools_fork_session(struct mcp_call *call, const cJSON *args, struct bridge_tools_context *c)
{
	struct bridge_session *s = tools_session(c, call, args);
	if (!s || !tools_snapshot_store_ready(c, call))
		return;
	cJSON *info = bridge_session_describe(s);
	const cJSON *volume = cJSON_GetObjectItemCaseSensitive(info, "volume");
	const cJSON *resources = cJSON_GetObjectItemCaseSensitive(info, "resources");
	const cJSON *size = cJSON_GetObjectItemCaseSensitive(resources, "size");
	if (cJSON_IsString(volume)) {
		mcp_call_fail(call,
			      "session %s has volume %s at /workspace, which one session uses at a "
			      "time: it cannot be forked (snapshot_session keeps its other files)",
			      bridge_session_id(s), volume->valuestring);
		cJSON_Delete(info);
		return;
	}
	char id[32];
	cJSON *create = cJSON_CreateObject();
	bool ok = create && tools_snapshot_take(c, call, s, id, sizeof(id));
	if (ok) {
		cJSON_AddStringToObject(create, "template", id);
		if (cJSON_IsString(size))
			cJSON_AddStringToObject(create, "size", size->valuestring);
		tools_create_session(call, create, c);
	} else if (!create) {
		mcp_call_fail(call, "out of memory");
	}
	cJSON_Delete(create);
	cJSON_Delete(info);
}

void tools_list_sessions(struct mcp_call *call, const cJSON *args,
			 struct bridge_tools_context *context)
{
	(void)args;
	/* structuredContent must be an object, so the list is wrapped. */
	cJSON *list = bridge_registry_describe(context->registry);
	cJSON *reply = list ? cJSON_CreateObject() : NULL;
	if (reply && !cJSON_AddItemToObject(reply, "sessions", list)) {
		cJSON_Delete(reply);
		reply = NULL;
	}
	if (!reply)
		cJSON_Delete(list);
	tools_reply_data(call, reply);
}

void tools_session_info(struct mcp_call *call, const cJSON *args,
			struct bridge_tools_context *context)
{
	struct bridge_session *s = tools_session(context, call, args);
	if (s)
		tools_reply_data(call, bridge_session_describe(s));
}

void tools_set_timeout(struct mcp_call *call, const cJSON *args,
		       struct bridge_tools_context *context)
{
	struct bridge_session *s = tools_session(context, call, args);
	if (!s)
		return;
	bridge_session_set_timeout(s, tools_int(args, "timeout_ms", DEFAULT_TIMEOUT_MS));
	tools_reply_data(call, bridge_session_describe(s));
}

static void pause_or_resume(struct mcp_call *call, const cJSON *args,
			    struct bridge_tools_context *context, bool pause)
{
	struct bridge_session *s = tools_session(context, call, args);
	if (!s)
		return;
	struct error err;
	if (!(pause ? bridge_session_pause(s, &err) : bridge_session_resume(s, &err))) {
		mcp_call_fail(call, "%s", err.message);
		return;
	}
	tools_reply_data(call, bridge_session_describe(s));
}

void tools_pause_session(struct mcp_call *call, const cJSON *args,
			 struct bridge_tools_context *context)
{
	pause_or_resume(call, args, context, true);
}

void tools_resume_session(struct mcp_call *call, const cJSON *args,
			  struct bridge_tools_context *context)
{
	pause_or_resume(call, args, context, false);
}

void tools_kill_session(struct mcp_call *call, const cJSON *args,
			struct bridge_tools_context *context)
{
	const char *id = tools_string(args, "session", NULL);
	struct error err;
	struct bridge_session *s = bridge_registry_acquire(context->registry, id, &err);
	if (!s) {
		mcp_call_fail(call, "%s", err.message);
		return;
	}
	char name[64];
	snprintf(name, sizeof(name), "%s", bridge_session_id(s));
	bridge_session_unref(s);
	if (!bridge_registry_kill(context->registry, name, "killed by kill_session", &err)) {
		mcp_call_fail(call, "%s", err.message);
		return;
	}
	mcp_call_text(call, "Session %s is ended; its desktop is going away.", name);
}

void tools_start_stream(struct mcp_call *call, const cJSON *args,
			struct bridge_tools_context *context)
{
	struct bridge_session *s = tools_session(context, call, args);
	if (!s)
		return;
	const struct bridge_viewer_links *links = context->viewer_links;
	if (!links || !links->base_url[0]) {
		mcp_call_fail(call, "viewer links need a server for the viewer page: the daemon "
				    "(lizard-bridge serve), or stdio --viewer ADDR:PORT");
		return;
	}
	struct error err;
	char *ice_servers = NULL;
	if (!tools_ice_servers(cJSON_GetObjectItemCaseSensitive(args, "ice_servers"), &ice_servers,
			       &err)) {
		mcp_call_fail(call, "%s", err.message);
		return;
	}
	struct bridge_viewers *viewers = bridge_session_viewers(s, links->headroom, links->wake,
								links->wake_context);
	char control[33], view[33];
	bool made = viewers && bridge_viewers_new_tokens(viewers, ice_servers, control, view);
	if (ice_servers) {
		explicit_bzero(ice_servers, strlen(ice_servers));
		free(ice_servers);
	}
	if (!made) {
		mcp_call_fail(call, "out of memory");
		return;
	}
	cJSON *reply = cJSON_CreateObject();
	char url[512];
	snprintf(url, sizeof(url), "%s/view/%s#token=%s", links->base_url, bridge_session_id(s),
		 control);
	cJSON_AddStringToObject(reply, "url", url);
	snprintf(url, sizeof(url), "%s/view/%s#token=%s", links->base_url, bridge_session_id(s),
		 view);
	cJSON_AddStringToObject(reply, "view_only_url", url);
	/* The same tokens in noVNC, the fallback viewer (raw RFB over WebSocket). */
	snprintf(url, sizeof(url), "%s/novnc/%s#token=%s", links->base_url, bridge_session_id(s),
		 control);
	cJSON_AddStringToObject(reply, "novnc_url", url);
	snprintf(url, sizeof(url), "%s/novnc/%s#token=%s&view_only=1", links->base_url,
		 bridge_session_id(s), view);
	cJSON_AddStringToObject(reply, "novnc_view_only_url", url);
	memset(url, 0, sizeof(url));
	cJSON_AddStringToObject(reply, "note",
				"A new start_stream replaces all links and "
				"disconnects their viewers; stop_stream revokes them. "
				"The novnc links open the same desktop in noVNC.");
	memset(control, 0, sizeof(control));
	memset(view, 0, sizeof(view));
	tools_reply_data(call, reply);
}

void tools_stop_stream(struct mcp_call *call, const cJSON *args,
		       struct bridge_tools_context *context)
{
	struct bridge_session *s = tools_session(context, call, args);
	if (!s)
		return;
	struct bridge_viewers *viewers = bridge_session_viewers(s, 0, NULL, NULL);
	if (viewers)
		bridge_viewers_revoke(viewers);
	mcp_call_text(call, "The viewer links of session %s no longer work.", bridge_session_id(s));
}
