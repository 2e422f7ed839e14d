/* Session management: create_session, list_sessions, session_info,
 * set_timeout, kill_session. */
#include "bridge/tools/common.h"
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

/* Data goes out as structuredContent and as the same JSON in text. */
static void reply_json(struct mcp_call *call, cJSON *json)
{
	if (json)
		mcp_call_structured(call, json);
	else
		mcp_call_fail(call, "out of memory");
}

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
			mcp_call_fail(call, "metadata value '%s' must be a string of at most %d bytes",
				      utf8_excerpt(shown, sizeof(shown), item->string),
				      MAX_METADATA_VALUE);
			return false;
		}
	}
	return true;
}

/* size is a preset (small, medium, large: the cgroup's limits) or, as
 * before presets existed, the screen's WxH; screen is always WxH. */
static bool size_and_screen(struct bridge_tools_context *c, struct mcp_call *call, const cJSON *args,
			    bool attached, struct bridge_session_spec *spec,
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
			mcp_call_fail(call, "size '%s' is a screen size and screen is given too; "
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
			mcp_call_fail(call, "volumes are unavailable in this daemon: %s", c->volumes_why);
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
			mcp_call_fail(call,
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

static void create_session(struct mcp_call *call, const cJSON *args, void *userdata)
{
	struct bridge_tools_context *c = userdata;
	const char *template = tools_string(args, "template", NULL);
	const char *url = tools_string(args, "vnc", NULL);
	if (template && url) {
		mcp_call_fail(call, "give template (desktop, bare) or vnc (a URL to attach), not both");
		return;
	}
	struct bridge_session_spec spec = {
		.kind = url ? BRIDGE_ATTACHED
			    : (template && strcmp(template, "bare") == 0 ? BRIDGE_BARE : BRIDGE_DESKTOP),
		.width = DEFAULT_WIDTH,
		.height = DEFAULT_HEIGHT,
		.timeout_ms = tools_int(args, "timeout_ms", DEFAULT_TIMEOUT_MS),
		.metadata = cJSON_GetObjectItemCaseSensitive(args, "metadata"),
		.uid_range = &c->uid_range,
	};
	struct sandbox_limits limits;
	if (!size_and_screen(c, call, args, url != NULL, &spec, &limits))
		return;
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
	if (!bridge_registry_add(c->registry, s, &err)) {
		bridge_session_unref(s);
		mcp_call_fail(call, "%s", err.message);
		return;
	}
	if (!bridge_session_start(s, &err)) {
		bridge_registry_kill(c->registry, id, "it failed to start", NULL);
		bridge_session_unref(s);
		mcp_call_fail(call, "could not create the session: %s", err.message);
		return;
	}
	reply_json(call, bridge_session_describe(s));
	bridge_session_unref(s);
}

static void list_sessions(struct mcp_call *call, const cJSON *args, void *userdata)
{
	(void)args;
	struct bridge_tools_context *c = userdata;
	/* structuredContent must be an object, so the list is wrapped. */
	cJSON *list = bridge_registry_describe(c->registry);
	cJSON *reply = list ? cJSON_CreateObject() : NULL;
	if (reply && !cJSON_AddItemToObject(reply, "sessions", list)) {
		cJSON_Delete(reply);
		reply = NULL;
	}
	if (!reply)
		cJSON_Delete(list);
	reply_json(call, reply);
}

static void session_info(struct mcp_call *call, const cJSON *args, void *userdata)
{
	struct bridge_session *s = tools_session(userdata, call, args);
	if (s)
		reply_json(call, bridge_session_describe(s));
}

static void set_timeout(struct mcp_call *call, const cJSON *args, void *userdata)
{
	struct bridge_session *s = tools_session(userdata, call, args);
	if (!s)
		return;
	bridge_session_set_timeout(s, tools_int(args, "timeout_ms", DEFAULT_TIMEOUT_MS));
	reply_json(call, bridge_session_describe(s));
}

static void pause_or_resume(struct mcp_call *call, const cJSON *args, void *userdata, bool pause)
{
	struct bridge_session *s = tools_session(userdata, call, args);
	if (!s)
		return;
	struct error err;
	if (!(pause ? bridge_session_pause(s, &err)
		    : bridge_session_resume(s, &err))) {
		mcp_call_fail(call, "%s", err.message);
		return;
	}
	reply_json(call, bridge_session_describe(s));
}

static void pause_session(struct mcp_call *call, const cJSON *args, void *userdata)
{
	pause_or_resume(call, args, userdata, true);
}

static void resume_session(struct mcp_call *call, const cJSON *args, void *userdata)
{
	pause_or_resume(call, args, userdata, false);
}

static void kill_session(struct mcp_call *call, const cJSON *args, void *userdata)
{
	struct bridge_tools_context *c = userdata;
	const char *id = tools_string(args, "session", NULL);
	struct error err;
	struct bridge_session *s = bridge_registry_acquire(c->registry, id, &err);
	if (!s) {
		mcp_call_fail(call, "%s", err.message);
		return;
	}
	char name[64];
	snprintf(name, sizeof(name), "%s", bridge_session_id(s));
	bridge_session_unref(s);
	if (!bridge_registry_kill(c->registry, name, "killed by kill_session", &err)) {
		mcp_call_fail(call, "%s", err.message);
		return;
	}
	mcp_call_text(call, "Session %s is ended; its desktop is going away.", name);
}

static void start_stream(struct mcp_call *call, const cJSON *args, void *userdata)
{
	struct bridge_tools_context *c = userdata;
	struct bridge_session *s = tools_session(c, call, args);
	if (!s)
		return;
	const struct bridge_viewer_links *links = c->viewer_links;
	if (!links || !links->base_url[0]) {
		mcp_call_fail(call, "viewer links need the daemon (lizard-bridge serve): it serves "
				    "the viewer page");
		return;
	}
	struct bridge_viewers *viewers =
		bridge_session_viewers(s, links->headroom, links->wake, links->wake_context);
	if (!viewers) {
		mcp_call_fail(call, "out of memory");
		return;
	}
	char control[33], view[33];
	bridge_viewers_new_tokens(viewers, control, view);
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
	cJSON_AddStringToObject(reply, "note", "A new start_stream replaces all links and "
					       "disconnects their viewers; stop_stream revokes them. "
					       "The novnc links open the same desktop in noVNC.");
	memset(control, 0, sizeof(control));
	memset(view, 0, sizeof(view));
	reply_json(call, reply);
}

static void stop_stream(struct mcp_call *call, const cJSON *args, void *userdata)
{
	struct bridge_tools_context *c = userdata;
	struct bridge_session *s = tools_session(c, call, args);
	if (!s)
		return;
	struct bridge_viewers *viewers = bridge_session_viewers(s, 0, NULL, NULL);
	if (viewers)
		bridge_viewers_revoke(viewers);
	mcp_call_text(call, "The viewer links of session %s no longer work.", bridge_session_id(s));
}

/* What bridge_session_describe returns. Other parts of the bridge add
 * fields (and states) over time, so unknown properties stay allowed and
 * state and template are not enums: a client holding this schema keeps
 * accepting newer replies. */
#define SESSION_INFO_SCHEMA                                                                \
	"{\"type\":\"object\",\"properties\":{"                                            \
	"\"session\":{\"type\":\"string\",\"description\":\"The id other tools take.\"},"  \
	"\"template\":{\"type\":\"string\",\"description\":\"desktop, bare, or vnc for an " \
	"attached server.\"},"                                                             \
	"\"vnc\":{\"type\":\"string\",\"description\":\"host:port or socket path of an "    \
	"attached server (never its password).\"},"                                        \
	"\"size\":{\"type\":\"string\",\"pattern\":\"^[0-9]+x[0-9]+$\"},"                     \
	"\"created\":{\"type\":\"string\",\"format\":\"date-time\"},"                        \
	"\"state\":{\"type\":\"string\",\"description\":\"starting, ready, paused, "        \
	"reconnecting, failed or ended.\"},"                                               \
	"\"reason\":{\"type\":\"string\",\"description\":\"Why it failed, ended or is "      \
	"reconnecting.\"},"                                                                \
	"\"timeout_ms\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"0: no "        \
	"deadline.\"},"                                                                    \
	"\"deadline\":{\"type\":[\"string\",\"null\"],\"format\":\"date-time\"},"             \
	"\"remaining_ms\":{\"type\":\"integer\",\"minimum\":0},"                              \
	"\"metadata\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"}}," \
	"\"sandbox\":{\"type\":\"object\",\"description\":\"What is isolated (local "     \
	"sessions) and what is not.\",\"properties\":{\"isolated\":{\"type\":\"boolean\"},"  \
	"\"network\":{\"type\":\"boolean\"},\"isolation\":{\"type\":\"string\"}}},"         \
	"\"volume\":{\"type\":\"string\",\"description\":\"Mounted at /workspace.\"},"       \
	"\"resources\":{\"type\":\"object\",\"description\":\"Local sessions with a "       \
	"size: its limits and what its cgroup uses now.\",\"properties\":{"               \
	"\"size\":{\"type\":\"string\"},"                                                  \
	"\"limits\":{\"type\":\"object\",\"properties\":{\"cpus\":{\"type\":\"number\"}," \
	"\"memory_bytes\":{\"type\":\"number\"},\"pids\":{\"type\":\"number\"},"            \
	"\"disk_bytes\":{\"type\":[\"number\",\"null\"],\"description\":\"HOME, /tmp and " \
	"/workspace together; null: no limit (the daemon cannot make disks).\"}}},"       \
	"\"usage\":{\"type\":\"object\",\"properties\":{"                                \
	"\"cpu_seconds\":{\"type\":\"number\"},\"cpu_throttled_seconds\":{\"type\":"      \
	"\"number\"},\"memory_bytes\":{\"type\":\"number\"},\"memory_peak_bytes\":{"        \
	"\"type\":\"number\"},\"processes\":{\"type\":\"number\"},\"tasks\":{\"type\":"    \
	"\"number\"},\"oom_kills\":{\"type\":\"number\",\"description\":\"Processes the "   \
	"kernel killed for going over the memory limit.\"},\"disk_bytes\":{\"type\":"   \
	"\"number\",\"description\":\"In use on the session's disk.\"}}}}}},"               \
	"\"required\":[\"session\",\"template\",\"size\",\"created\",\"state\","              \
	"\"timeout_ms\",\"deadline\",\"metadata\"]}"

/* start_stream's links; more kinds of link may join them. */
#define STREAM_LINKS_SCHEMA                                                                \
	"{\"type\":\"object\",\"properties\":{"                                            \
	"\"url\":{\"type\":\"string\",\"description\":\"Watch and control.\"},"             \
	"\"view_only_url\":{\"type\":\"string\",\"description\":\"Watch only.\"},"          \
	"\"note\":{\"type\":\"string\"}},\"required\":[\"url\",\"view_only_url\"]}"

#define REQUIRED_SESSION                                                                   \
	"\"session\":{\"type\":\"string\",\"minLength\":1,\"description\":\"Session id.\"}"

static const struct mcp_tool session_tools[] = {
	{
		.name = "create_session",
		.title = "Create a desktop session",
		.description =
			"Start a new desktop: template \"desktop\" (the default: X server with a "
			"window manager, Chromium for open_url) or \"bare\" (X server only), or "
			"attach to a VNC server with vnc \"vnc://[:PASSWORD@]HOST[:PORT]\". A "
			"local session is a sandbox (Linux namespaces on a shared kernel, not a "
			"VM) with exec and file tools; network false leaves it loopback only, "
			"envs sets variables for all its programs. The session ends after "
			"timeout_ms (default 300000; 0 never). Returns its id for the session "
			"argument of the other tools.",
		.input_schema =
			"{\"type\":\"object\",\"properties\":{"
			"\"template\":{\"type\":\"string\",\"enum\":[\"desktop\",\"bare\"]},"
			"\"vnc\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":1000,"
			"\"description\":\"vnc://[:PASSWORD@]HOST[:PORT] or unix:///path\"},"
			"\"password\":{\"type\":\"string\",\"maxLength\":256,\"description\":"
			"\"VNC password, instead of putting it in the URL.\"},"
			"\"size\":{\"type\":\"string\",\"maxLength\":16,\"description\":"
			"\"small, medium (default) or large: the CPU, memory and process limits "
			"of a local session (cgroup). WxH is still taken as the screen size.\"},"
			"\"screen\":{\"type\":\"string\",\"maxLength\":16,\"description\":"
			"\"WxH, default 1280x800.\"},"
			"\"volume\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":64,"
			"\"description\":\"A volume (create_volume) mounted read-write at "
			"/workspace; one session at a time.\"},"
			"\"timeout_ms\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":"
			"2147483647},"
			"\"metadata\":{\"type\":\"object\",\"description\":\"String values to "
			"keep with the session.\"},"
			"\"network\":{\"type\":\"boolean\",\"description\":\"Default true: "
			"outbound IPv4 through a user-mode network that cannot reach the host's "
			"loopback; false: loopback only.\"},"
			"\"envs\":{\"type\":\"object\",\"description\":\"Environment "
			"variables (strings) for every program of the session.\"}}}",
		.output_schema = SESSION_INFO_SCHEMA,
		.handler = create_session,
	},
	{
		.name = "list_sessions",
		.quick = true,
		.title = "List sessions",
		.description = "Every session with its id, template, size, state (starting, "
			       "ready, reconnecting, failed, ended), deadline and metadata, as "
			       "{\"sessions\":[...]}.",
		.input_schema = "{\"type\":\"object\",\"properties\":{}}",
		.output_schema = "{\"type\":\"object\",\"properties\":{\"sessions\":{"
				 "\"type\":\"array\",\"items\":" SESSION_INFO_SCHEMA "}},"
				 "\"required\":[\"sessions\"]}",
		.handler = list_sessions,
		.read_only = true,
	},
	{
		.name = "session_info",
		.quick = true,
		.title = "Describe a session",
		.description = "One session's id, template, size, state, deadline and metadata.",
		.input_schema = "{\"type\":\"object\",\"properties\":{" SESSION_PROPERTY "}}",
		.output_schema = SESSION_INFO_SCHEMA,
		.handler = session_info,
		.read_only = true,
	},
	{
		.name = "set_timeout",
		.quick = true,
		.title = "Set a session's timeout",
		.description = "End the session timeout_ms from now (1000..2147483647). Calls "
			       "do not extend the deadline; this does.",
		.input_schema = "{\"type\":\"object\",\"properties\":{" REQUIRED_SESSION ","
				"\"timeout_ms\":{\"type\":\"integer\",\"minimum\":1000,\"maximum\":"
				"2147483647}},\"required\":[\"session\",\"timeout_ms\"]}",
		.output_schema = SESSION_INFO_SCHEMA,
		.handler = set_timeout,
	},
	{
		.name = "pause_session",
		.quick = true,
		.title = "Pause a session",
		.description = "Freeze every process of a local session (its cgroup), keeping "
			       "memory and processes. While paused, screenshot shows the last "
			       "frame, input and exec fail, and the timeout does not run.",
		.input_schema = "{\"type\":\"object\",\"properties\":{" REQUIRED_SESSION
				"},\"required\":[\"session\"]}",
		.output_schema = SESSION_INFO_SCHEMA,
		.handler = pause_session,
	},
	{
		.name = "resume_session",
		.quick = true,
		.title = "Resume a session",
		.description = "Let a paused session's processes continue where they were.",
		.input_schema = "{\"type\":\"object\",\"properties\":{" REQUIRED_SESSION
				"},\"required\":[\"session\"]}",
		.output_schema = SESSION_INFO_SCHEMA,
		.handler = resume_session,
	},
	{
		.name = "start_stream",
		.quick = true,
		.title = "Share the desktop in a browser",
		.description = "Links for people to watch or help: url lets them use mouse and "
			       "keyboard, view_only_url only shows the screen; novnc_url and "
			       "novnc_view_only_url are the same in noVNC, the fallback viewer. "
			       "Calling it again replaces all links.",
		.input_schema = "{\"type\":\"object\",\"properties\":{" SESSION_PROPERTY "}}",
		.output_schema = STREAM_LINKS_SCHEMA,
		.handler = start_stream,
	},
	{
		.name = "stop_stream",
		.quick = true,
		.title = "Stop sharing",
		.description = "Revoke the session's viewer links and disconnect their viewers.",
		.input_schema = "{\"type\":\"object\",\"properties\":{" SESSION_PROPERTY "}}",
		.handler = stop_stream,
	},
	{
		.name = "kill_session",
		.quick = true,
		.title = "End a session",
		.description = "End a session now: calls on it fail and its desktop's processes "
			       "are stopped.",
		.input_schema = "{\"type\":\"object\",\"properties\":{" REQUIRED_SESSION
				"},\"required\":[\"session\"]}",
		.handler = kill_session,
	},
};

bool tools_register_sessions(struct mcp_server *server, struct bridge_tools_context *context)
{
	return tools_register(server, context, session_tools,
			      sizeof(session_tools) / sizeof(session_tools[0]));
}
