/* SPDX-License-Identifier: MIT */
/* The engine's own part: the tool registry, initialize and the other
 * requests, and tools/call from admission to the reply: the bounds, the
 * worker pool, cancellation. Peers (peer.c) and the result a call builds
 * (call.c) are below it and share its structs (state.h). */
#include "mcp/server.h"

#include "mcp/call.h"
#include "mcp/jsonrpc.h"
#include "mcp/peer.h"
#include "mcp/schema.h"
#include "mcp/state.h"
#include "mcp/workers.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/utf8.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A tool as the server keeps it: the caller's description, the parsed
 * input schema that calls are checked against, the handler's userdata. */
struct registered_tool {
	struct mcp_tool tool;
	cJSON *schema;
	void *userdata;
};

static const char *const supported_versions[] = {
	"2025-11-25",
	"2025-06-18",
	"2025-03-26",
	"2024-11-05",
};

struct mcp_server *mcp_server_create(const char *name, const char *version,
				     const char *instructions,
				     const struct mcp_workers_limits *limits)
{
	struct mcp_server *server = calloc(1, sizeof(*server));
	if (!server)
		return NULL;
	server->name = strdup(name);
	server->version = strdup(version);
	server->instructions = instructions ? strdup(instructions) : NULL;
	server->tool_list = cJSON_CreateArray();
	pthread_mutex_init(&server->calls_lock, NULL);
	pthread_mutex_init(&server->peers_lock, NULL);
	server->workers = mcp_workers_create(limits);
	if (!server->name || !server->version || (instructions && !server->instructions) ||
	    !server->tool_list || !server->workers) {
		mcp_server_destroy(server);
		return NULL;
	}
	return server;
}

void mcp_server_destroy(struct mcp_server *server)
{
	if (!server)
		return;
	mcp_workers_destroy(server->workers);
	/* Peers may be closed after the server is gone (their transport ends
	 * later): they must not look for the list then. */
	pthread_mutex_lock(&server->peers_lock);
	for (struct mcp_peer *peer = server->peers; peer; peer = peer->next) {
		pthread_mutex_lock(&peer->lock);
		peer->unlisted = true;
		pthread_mutex_unlock(&peer->lock);
	}
	server->peers = NULL;
	pthread_mutex_unlock(&server->peers_lock);
	pthread_mutex_destroy(&server->calls_lock);
	pthread_mutex_destroy(&server->peers_lock);
	for (size_t i = 0; i < server->tool_count; i++)
		cJSON_Delete(server->tools[i].schema);
	free(server->tools);
	cJSON_Delete(server->tool_list);
	free(server->name);
	free(server->version);
	free(server->instructions);
	free(server);
}

bool mcp_server_add_tool(struct mcp_server *server, const struct mcp_tool *tool, void *userdata)
{
	cJSON *schema = cJSON_Parse(tool->input_schema);
	cJSON *output_schema = tool->output_schema ? cJSON_Parse(tool->output_schema) : NULL;
	if (!cJSON_IsObject(schema) || (tool->output_schema && !cJSON_IsObject(output_schema))) {
		log_error("tool %s: %s schema is not a JSON object", tool->name,
			  cJSON_IsObject(schema) ? "output" : "input");
		cJSON_Delete(schema);
		cJSON_Delete(output_schema);
		return false;
	}
	struct registered_tool *grown = realloc(server->tools,
						(server->tool_count + 1) * sizeof(*server->tools));
	cJSON *entry = grown ? cJSON_CreateObject() : NULL;
	if (grown)
		server->tools = grown;
	if (!entry) {
		cJSON_Delete(schema);
		cJSON_Delete(output_schema);
		return false;
	}
	cJSON_AddStringToObject(entry, "name", tool->name);
	if (tool->title)
		cJSON_AddStringToObject(entry, "title", tool->title);
	cJSON_AddStringToObject(entry, "description", tool->description);
	cJSON_AddItemToObject(entry, "inputSchema", cJSON_Duplicate(schema, true));
	if (output_schema)
		cJSON_AddItemToObject(entry, "outputSchema", output_schema);
	cJSON *annotations = cJSON_AddObjectToObject(entry, "annotations");
	if (tool->title)
		cJSON_AddStringToObject(annotations, "title", tool->title);
	cJSON_AddBoolToObject(annotations, "readOnlyHint", tool->read_only);
	cJSON_AddBoolToObject(annotations, "openWorldHint", false);
	cJSON_AddItemToArray(server->tool_list, entry);

	server->tools[server->tool_count++] = (struct registered_tool){ .tool = *tool,
									.schema = schema,
									.userdata = userdata };
	return true;
}

void mcp_server_set_group_function(struct mcp_server *server, mcp_group_fn fn, void *userdata)
{
	server->group_fn = fn;
	server->group_userdata = userdata;
}

void mcp_server_set_observer(struct mcp_server *server, mcp_call_observer fn, void *userdata)
{
	server->observer = fn;
	server->observer_userdata = userdata;
}

bool mcp_protocol_version_supported(const char *version)
{
	for (size_t i = 0; i < sizeof(supported_versions) / sizeof(supported_versions[0]); i++)
		if (strcmp(version, supported_versions[i]) == 0)
			return true;
	return false;
}

const char *mcp_call_tool_name(const struct mcp_call *call)
{
	return call->tool->tool.name;
}

static const struct registered_tool *find_tool(const struct mcp_server *server, const char *name)
{
	for (size_t i = 0; i < server->tool_count; i++)
		if (strcmp(server->tools[i].tool.name, name) == 0)
			return &server->tools[i];
	return NULL;
}

/* Lifecycle */

static cJSON *initialize_result(struct mcp_server *server, const char *requested)
{
	const char *chosen = MCP_LATEST_PROTOCOL_VERSION;
	for (size_t i = 0; i < sizeof(supported_versions) / sizeof(supported_versions[0]); i++)
		if (strcmp(requested, supported_versions[i]) == 0)
			chosen = supported_versions[i];

	cJSON *result = cJSON_CreateObject();
	cJSON_AddStringToObject(result, "protocolVersion", chosen);
	cJSON *capabilities = cJSON_AddObjectToObject(result, "capabilities");
	cJSON *tools = cJSON_AddObjectToObject(capabilities, "tools");
	cJSON_AddBoolToObject(tools, "listChanged", false);
	cJSON_AddObjectToObject(capabilities, "logging");
	cJSON *info = cJSON_AddObjectToObject(result, "serverInfo");
	cJSON_AddStringToObject(info, "name", server->name);
	cJSON_AddStringToObject(info, "version", server->version);
	if (server->instructions)
		cJSON_AddStringToObject(result, "instructions", server->instructions);
	return result;
}

static void handle_initialize(struct mcp_peer *peer, const struct jsonrpc_message *msg)
{
	const cJSON *version = cJSON_GetObjectItemCaseSensitive(msg->params, "protocolVersion");
	if (!cJSON_IsString(version)) {
		mcp_peer_send(peer,
			      jsonrpc_error(msg->id, JSONRPC_INVALID_PARAMS,
					    "initialize needs params.protocolVersion, a string "
					    "such as \"" MCP_LATEST_PROTOCOL_VERSION "\""));
		return;
	}
	cJSON *result = initialize_result(peer->server, version->valuestring);
	char asked[32];
	log_info("MCP client initialized (asked %s, using %s)",
		 utf8_excerpt(asked, sizeof(asked), version->valuestring),
		 cJSON_GetObjectItemCaseSensitive(result, "protocolVersion")->valuestring);
	mcp_peer_send(peer, jsonrpc_result(msg->id, result));
	pthread_mutex_lock(&peer->lock);
	peer->initialized = true;
	pthread_mutex_unlock(&peer->lock);
}

/* Tool calls */

static void untrack_call(struct mcp_server *server, struct mcp_call *call)
{
	pthread_mutex_lock(&server->calls_lock);
	for (struct mcp_call **p = &server->calls; *p; p = &(*p)->next) {
		if (*p == call) {
			*p = call->next;
			server->call_count--;
			break;
		}
	}
	pthread_mutex_unlock(&server->calls_lock);
}

static bool same_scope(const struct mcp_call *call, const struct mcp_peer *peer, const char *scope)
{
	if (call->scope || scope)
		return call->scope && scope && strcmp(call->scope, scope) == 0;
	return call->peer == peer;
}

/* notifications/cancelled: the named request of the same client stops at
 * its next step and sends no reply. Unknown or finished ids are ignored,
 * as the specification allows. */
static void cancel_request(struct mcp_peer *peer, const cJSON *params)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(params, "requestId");
	if (!jsonrpc_is_id(id))
		return;
	pthread_mutex_lock(&peer->lock);
	char *scope = peer->scope ? strdup(peer->scope) : NULL;
	pthread_mutex_unlock(&peer->lock);
	struct mcp_server *server = peer->server;
	pthread_mutex_lock(&server->calls_lock);
	for (struct mcp_call *call = server->calls; call; call = call->next) {
		if (same_scope(call, peer, scope) && cJSON_Compare(call->id, id, true)) {
			atomic_store(&call->cancelled, true);
			log_info("tool %s cancelled by the client", call->tool->tool.name);
		}
	}
	pthread_mutex_unlock(&server->calls_lock);
	free(scope);
}

void mcp_peer_give_up(struct mcp_peer *peer, const char *reason)
{
	struct mcp_server *server = peer->server;
	pthread_mutex_lock(&server->calls_lock);
	for (struct mcp_call *call = server->calls; call; call = call->next) {
		if (call->peer != peer)
			continue;
		atomic_store(&call->given_up, reason);
		atomic_store(&call->cancelled, true);
	}
	pthread_mutex_unlock(&server->calls_lock);
}

void mcp_server_cancel_all(struct mcp_server *server)
{
	pthread_mutex_lock(&server->calls_lock);
	for (struct mcp_call *call = server->calls; call; call = call->next)
		atomic_store(&call->cancelled, true);
	pthread_mutex_unlock(&server->calls_lock);
}

static double now_seconds(void)
{
	return (double)clock_monotonic_ms() / 1000.0;
}

static void run_call(void *arg)
{
	struct mcp_call *call = arg;
	double started = now_seconds();
	struct error err;
	if (atomic_load(&call->given_up))
		mcp_call_fail(call, "%s", atomic_load(&call->given_up));
	else if (mcp_call_cancelled(call))
		mcp_call_fail(call, "cancelled before it started");
	else if (!mcp_schema_check_arguments(call->tool->schema, call->arguments,
					     call->tool->tool.name, &err))
		mcp_call_fail(call, "%s", err.message);
	else
		call->tool->tool.handler(call, call->arguments, call->tool->userdata);
	if (call->is_error) {
		const cJSON *text = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetArrayItem(call->content, 0), "text");
		log_info("tool %s failed: %s", call->tool->tool.name,
			 cJSON_IsString(text) ? text->valuestring : "");
	}
	struct mcp_server *server = call->peer->server;
	if (server->observer)
		server->observer(call->tool->tool.name, call->is_error, now_seconds() - started,
				 server->observer_userdata);
	untrack_call(server, call);
	/* The client gave up on a cancelled request: no reply, as the
	 * specification asks. A call the transport gave up on says why. */
	const char *given_up = atomic_load(&call->given_up);
	if (given_up && !call->is_error)
		mcp_call_fail(call, "%s", given_up);
	if (!mcp_call_cancelled(call) || given_up)
		mcp_call_send_reply(call);
	struct mcp_peer *peer = call->peer;
	mcp_call_free(call);
	pthread_mutex_lock(&peer->lock);
	if (--peer->calls_running == 0)
		pthread_cond_broadcast(&peer->idle);
	pthread_mutex_unlock(&peer->lock);
	mcp_peer_unref(peer);
}

/* Whether another call from this client fits in the bounds; the reason
 * otherwise. Counted under calls_lock, so two readers cannot both take the
 * last place. Takes the place when it fits. */
static bool admit_call(struct mcp_server *server, struct mcp_call *call, char *why, size_t why_size)
{
	pthread_mutex_lock(&server->calls_lock);
	size_t mine = 0;
	for (struct mcp_call *c = server->calls; c && mine < MCP_MAX_CALLS_PER_CLIENT; c = c->next)
		if (same_scope(c, call->peer, call->scope))
			mine++;
	bool fits = server->call_count < MCP_MAX_CALLS && mine < MCP_MAX_CALLS_PER_CLIENT;
	if (fits) {
		call->next = server->calls;
		server->calls = call;
		server->call_count++;
	} else if (mine >= MCP_MAX_CALLS_PER_CLIENT) {
		snprintf(why, why_size,
			 "Server busy: this client already has %d tools/call requests unanswered "
			 "(the limit); wait for replies before sending more",
			 MCP_MAX_CALLS_PER_CLIENT);
	} else {
		snprintf(why, why_size,
			 "Server busy: the bridge holds %d unanswered tools/call requests (the "
			 "limit); try again when some have finished",
			 MCP_MAX_CALLS);
	}
	pthread_mutex_unlock(&server->calls_lock);
	return fits;
}

static void handle_tools_call(struct mcp_peer *peer, const struct jsonrpc_message *msg)
{
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(msg->params, "name");
	const cJSON *arguments = cJSON_GetObjectItemCaseSensitive(msg->params, "arguments");
	if (!cJSON_IsString(name)) {
		mcp_peer_send(peer, jsonrpc_error(msg->id, JSONRPC_INVALID_PARAMS,
						  "tools/call needs params.name, a string"));
		return;
	}
	const struct registered_tool *tool = find_tool(peer->server, name->valuestring);
	if (!tool) {
		char message[200], shown[65];
		snprintf(message, sizeof(message), "Unknown tool: %s (tools/list names them)",
			 utf8_excerpt(shown, sizeof(shown), name->valuestring));
		mcp_peer_send(peer, jsonrpc_error(msg->id, JSONRPC_INVALID_PARAMS, message));
		return;
	}
	if (arguments && !cJSON_IsObject(arguments)) {
		mcp_peer_send(peer, jsonrpc_error(msg->id, JSONRPC_INVALID_PARAMS,
						  "params.arguments must be a JSON object"));
		return;
	}

	struct mcp_call *call = calloc(1, sizeof(*call));
	if (!call)
		goto oom;
	call->peer = peer;
	call->tool = tool;
	call->id = cJSON_Duplicate(msg->id, false);
	call->arguments = arguments ? cJSON_Duplicate(arguments, true) : cJSON_CreateObject();
	call->content = cJSON_CreateArray();
	if (!call->id || !call->arguments || !call->content)
		goto oom_call;
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(msg->params, "_meta");
	const cJSON *token = cJSON_GetObjectItemCaseSensitive(meta, "progressToken");
	if (jsonrpc_is_id(token)) {
		call->progress_token = cJSON_Duplicate(token, false);
		if (!call->progress_token)
			goto oom_call;
	}
	pthread_mutex_lock(&peer->lock);
	call->scope = peer->scope ? strdup(peer->scope) : NULL;
	bool scope_ok = !peer->scope || call->scope;
	pthread_mutex_unlock(&peer->lock);
	if (!scope_ok)
		goto oom_call;

	char group[128], owner[160];
	bool has_group = peer->server->group_fn &&
			 peer->server->group_fn(tool->tool.name, call->arguments, group,
						sizeof(group), peer->server->group_userdata);
	/* The client: the scope its peers share, or this peer alone. */
	if (call->scope)
		snprintf(owner, sizeof(owner), "scope:%s", call->scope);
	else
		snprintf(owner, sizeof(owner), "peer:%p", (void *)peer);
	struct mcp_job_kind kind = { .lane = tool->tool.ordered && has_group ? group : NULL,
				     .group = has_group ? group : NULL,
				     .owner = owner,
				     .quick = tool->tool.quick };
	/* A full queue answers at once: the reader never waits for room. */
	char busy[200];
	if (!admit_call(peer->server, call, busy, sizeof(busy))) {
		log_warn("%s", busy);
		mcp_call_free(call);
		mcp_peer_send(peer, jsonrpc_error(msg->id, JSONRPC_SERVER_BUSY, busy));
		return;
	}
	pthread_mutex_lock(&peer->lock);
	peer->refs++;
	peer->calls_running++;
	pthread_mutex_unlock(&peer->lock);
	if (!mcp_workers_submit(peer->server->workers, &kind, run_call, call)) {
		untrack_call(peer->server, call);
		pthread_mutex_lock(&peer->lock);
		if (--peer->calls_running == 0)
			pthread_cond_broadcast(&peer->idle);
		pthread_mutex_unlock(&peer->lock);
		mcp_peer_unref(peer);
		goto oom_call;
	}
	return;

oom_call:
	mcp_call_free(call);
oom:
	mcp_peer_send(peer, jsonrpc_error(msg->id, JSONRPC_INTERNAL_ERROR,
					  "the bridge is out of memory or shutting down"));
}

/* Logging */

static const char *const log_level_names[] = {
	[MCP_LOG_DEBUG] = "debug",   [MCP_LOG_INFO] = "info",
	[MCP_LOG_NOTICE] = "notice", [MCP_LOG_WARNING] = "warning",
	[MCP_LOG_ERROR] = "error",   [MCP_LOG_CRITICAL] = "critical",
	[MCP_LOG_ALERT] = "alert",   [MCP_LOG_EMERGENCY] = "emergency",
};
#define LOG_LEVEL_COUNT (sizeof(log_level_names) / sizeof(log_level_names[0]))

static void handle_set_level(struct mcp_peer *peer, const struct jsonrpc_message *msg)
{
	const cJSON *level = cJSON_GetObjectItemCaseSensitive(msg->params, "level");
	for (size_t i = 0; cJSON_IsString(level) && i < LOG_LEVEL_COUNT; i++) {
		if (strcmp(level->valuestring, log_level_names[i]) == 0) {
			pthread_mutex_lock(&peer->lock);
			peer->log_level = (enum mcp_log_level)i;
			pthread_mutex_unlock(&peer->lock);
			mcp_peer_send(peer, jsonrpc_result(msg->id, cJSON_CreateObject()));
			return;
		}
	}
	mcp_peer_send(peer,
		      jsonrpc_error(msg->id, JSONRPC_INVALID_PARAMS,
				    "logging/setLevel needs params.level, one of: debug, info, "
				    "notice, warning, error, critical, alert, emergency"));
}

void mcp_server_log(struct mcp_server *server, enum mcp_log_level level, const char *logger,
		    const char *message)
{
	if ((size_t)level >= LOG_LEVEL_COUNT)
		return;
	cJSON *params = cJSON_CreateObject();
	if (!params)
		return;
	cJSON_AddStringToObject(params, "level", log_level_names[level]);
	if (logger)
		cJSON_AddStringToObject(params, "logger", logger);
	cJSON_AddStringToObject(params, "data", message);
	char *text = jsonrpc_notification("notifications/message", params);
	if (!text)
		return;
	struct iovec part = { text, strlen(text) };
	/* Peers leave the list only under peers_lock, so each one seen here
	 * is still allocated; its own lock then says whether it is open. */
	pthread_mutex_lock(&server->peers_lock);
	for (struct mcp_peer *peer = server->peers; peer; peer = peer->next) {
		pthread_mutex_lock(&peer->lock);
		if (!peer->closed && peer->initialized && level >= peer->log_level)
			peer->send(peer->context, &part, 1);
		pthread_mutex_unlock(&peer->lock);
	}
	pthread_mutex_unlock(&server->peers_lock);
	free(text);
}

static void handle_request(struct mcp_peer *peer, const struct jsonrpc_message *msg)
{
	if (strcmp(msg->method, "initialize") == 0) {
		handle_initialize(peer, msg);
	} else if (strcmp(msg->method, "ping") == 0) {
		mcp_peer_send(peer, jsonrpc_result(msg->id, cJSON_CreateObject()));
	} else if (strcmp(msg->method, "tools/list") == 0) {
		cJSON *result = cJSON_CreateObject();
		cJSON_AddItemToObject(result, "tools",
				      cJSON_Duplicate(peer->server->tool_list, true));
		mcp_peer_send(peer, jsonrpc_result(msg->id, result));
	} else if (strcmp(msg->method, "tools/call") == 0) {
		handle_tools_call(peer, msg);
	} else if (strcmp(msg->method, "logging/setLevel") == 0) {
		handle_set_level(peer, msg);
	} else {
		char message[160], shown[65];
		snprintf(message, sizeof(message), "Method not found: %s",
			 utf8_excerpt(shown, sizeof(shown), msg->method));
		mcp_peer_send(peer, jsonrpc_error(msg->id, JSONRPC_METHOD_NOT_FOUND, message));
	}
}

void mcp_peer_handle(struct mcp_peer *peer, const char *data, size_t len)
{
	struct jsonrpc_message msg;
	jsonrpc_parse(data, len, &msg);
	switch (msg.kind) {
	case JSONRPC_INVALID:
		log_info("refused a message: %s", msg.error_message);
		mcp_peer_send(peer, jsonrpc_error(msg.id, msg.error_code, msg.error_message));
		break;
	case JSONRPC_REQUEST:
		handle_request(peer, &msg);
		break;
	case JSONRPC_NOTIFICATION:
		/* Notifications are never answered. */
		log_debug("notification %s", msg.method);
		if (strcmp(msg.method, "notifications/cancelled") == 0)
			cancel_request(peer, msg.params);
		break;
	case JSONRPC_RESPONSE:
		log_debug("ignoring a response from the client; we send no requests");
		break;
	}
	jsonrpc_message_finish(&msg);
}

void mcp_peer_reject_oversize(struct mcp_peer *peer, size_t limit)
{
	char message[160];
	snprintf(message, sizeof(message),
		 "Invalid Request: message exceeds the %zu byte limit and was discarded", limit);
	log_warn("%s", message);
	mcp_peer_send(peer, jsonrpc_error(NULL, JSONRPC_INVALID_REQUEST, message));
}
