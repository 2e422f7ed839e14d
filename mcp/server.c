#include "mcp/server.h"

#include "mcp/jsonrpc.h"
#include "mcp/schema.h"
#include "mcp/workers.h"
#include "util/base64.h"
#include "util/blob.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/utf8.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const supported_versions[] = {
	"2025-11-25",
	"2025-06-18",
	"2025-03-26",
	"2024-11-05",
};

struct registered_tool {
	struct mcp_tool tool;
	cJSON *schema;
	void *userdata;
};

struct mcp_server {
	char *name, *version, *instructions;
	struct registered_tool *tools;
	size_t tool_count;
	cJSON *tool_list; /* the tools/list "tools" array, built as tools come */
	mcp_group_fn group_fn;
	void *group_userdata;
	mcp_call_observer observer;
	void *observer_userdata;
	struct mcp_workers *workers;
	/* Calls queued or running, for notifications/cancelled and for the
	 * bounds on them. */
	pthread_mutex_t calls_lock;
	struct mcp_call *calls;
	size_t call_count;
	/* Live peers, for notifications/message. */
	pthread_mutex_t peers_lock;
	struct mcp_peer *peers;
};

struct mcp_peer {
	struct mcp_server *server;
	mcp_send_fn send;
	void *context;
	pthread_mutex_t lock;
	int refs;
	bool closed;
	char *scope; /* see mcp_peer_set_scope; NULL: this peer alone */
	int calls_running; /* this peer's calls not yet finished */
	pthread_cond_t idle; /* signalled when calls_running drops to 0 */
	bool initialized;  /* initialize answered: log messages may go out */
	bool unlisted;     /* the server went first and forgot it */
	enum mcp_log_level log_level; /* the least severe message it gets */
	struct mcp_peer *next; /* in the server's list of peers */
};

#define MAX_CALL_IMAGES MCP_MAX_CALL_IMAGES

struct mcp_call {
	struct mcp_peer *peer;
	const struct registered_tool *tool;
	cJSON *id;
	cJSON *arguments;
	cJSON *content;
	bool is_error;
	/* Base64 image data goes out beside the printed reply rather than
	 * through cJSON, which would copy megabytes and scan them for characters
	 * to escape that base64 never has. The content holds a marker in its
	 * place. */
	struct blob *images[MAX_CALL_IMAGES];
	int image_count;
	cJSON *structured;
	cJSON *progress_token; /* params._meta.progressToken, or NULL */
	atomic_bool cancelled;
	/* Set with cancelled when the transport gives up: answer with this
	 * error instead of staying silent. */
	const char *_Atomic given_up;
	char *scope; /* the peer's scope when the call came, or NULL */
	struct mcp_call *next; /* in the server's list of calls */
};

#define IMAGE_MARKER "lizard-image-data-"

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
	struct registered_tool *grown =
		realloc(server->tools, (server->tool_count + 1) * sizeof(*server->tools));
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

	server->tools[server->tool_count++] =
		(struct registered_tool){ .tool = *tool, .schema = schema, .userdata = userdata };
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

static const struct registered_tool *find_tool(const struct mcp_server *server, const char *name)
{
	for (size_t i = 0; i < server->tool_count; i++)
		if (strcmp(server->tools[i].tool.name, name) == 0)
			return &server->tools[i];
	return NULL;
}

/* Peers */

struct mcp_peer *mcp_peer_create(struct mcp_server *server, mcp_send_fn send, void *context)
{
	struct mcp_peer *peer = calloc(1, sizeof(*peer));
	if (!peer)
		return NULL;
	peer->server = server;
	peer->send = send;
	peer->context = context;
	peer->refs = 1;
	peer->log_level = MCP_LOG_WARNING;
	pthread_mutex_init(&peer->lock, NULL);
	clock_cond_init(&peer->idle);
	pthread_mutex_lock(&server->peers_lock);
	peer->next = server->peers;
	server->peers = peer;
	pthread_mutex_unlock(&server->peers_lock);
	return peer;
}

static void peer_unref(struct mcp_peer *peer)
{
	pthread_mutex_lock(&peer->lock);
	bool last = --peer->refs == 0;
	bool listed = !peer->unlisted;
	pthread_mutex_unlock(&peer->lock);
	if (last && listed) {
		struct mcp_server *server = peer->server;
		pthread_mutex_lock(&server->peers_lock);
		for (struct mcp_peer **p = &server->peers; *p; p = &(*p)->next) {
			if (*p == peer) {
				*p = peer->next;
				break;
			}
		}
		pthread_mutex_unlock(&server->peers_lock);
	}
	if (last) {
		pthread_cond_destroy(&peer->idle);
		pthread_mutex_destroy(&peer->lock);
		free(peer->scope);
		free(peer);
	}
}

void mcp_peer_set_scope(struct mcp_peer *peer, const char *scope)
{
	char *copy = scope ? strdup(scope) : NULL;
	pthread_mutex_lock(&peer->lock);
	free(peer->scope);
	peer->scope = copy;
	pthread_mutex_unlock(&peer->lock);
}

void mcp_peer_close(struct mcp_peer *peer)
{
	if (!peer)
		return;
	pthread_mutex_lock(&peer->lock);
	peer->closed = true;
	pthread_mutex_unlock(&peer->lock);
	peer_unref(peer);
}

/* Holding the lock across send lets close wait for a send in progress. */
static void peer_send_parts(struct mcp_peer *peer, const struct iovec *parts, int count)
{
	pthread_mutex_lock(&peer->lock);
	if (!peer->closed)
		peer->send(peer->context, parts, count);
	pthread_mutex_unlock(&peer->lock);
}

/* Sends and frees text. */
static void peer_send(struct mcp_peer *peer, char *text)
{
	if (!text) {
		log_error("out of memory building a reply");
		return;
	}
	struct iovec part = { text, strlen(text) };
	peer_send_parts(peer, &part, 1);
	free(text);
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
	const cJSON *version =
		cJSON_GetObjectItemCaseSensitive(msg->params, "protocolVersion");
	if (!cJSON_IsString(version)) {
		peer_send(peer, jsonrpc_error(msg->id, JSONRPC_INVALID_PARAMS,
					      "initialize needs params.protocolVersion, a string "
					      "such as \"" MCP_LATEST_PROTOCOL_VERSION "\""));
		return;
	}
	cJSON *result = initialize_result(peer->server, version->valuestring);
	char asked[32];
	log_info("MCP client initialized (asked %s, using %s)",
		 utf8_excerpt(asked, sizeof(asked), version->valuestring),
		 cJSON_GetObjectItemCaseSensitive(result, "protocolVersion")->valuestring);
	peer_send(peer, jsonrpc_result(msg->id, result));
	pthread_mutex_lock(&peer->lock);
	peer->initialized = true;
	pthread_mutex_unlock(&peer->lock);
}

/* Tool calls */

static void drop_images(struct mcp_call *call)
{
	for (int i = 0; i < call->image_count; i++)
		blob_unref(call->images[i]);
	call->image_count = 0;
}

static void call_free(struct mcp_call *call)
{
	drop_images(call);
	cJSON_Delete(call->id);
	cJSON_Delete(call->arguments);
	cJSON_Delete(call->content);
	cJSON_Delete(call->structured);
	cJSON_Delete(call->progress_token);
	free(call->scope);
	free(call);
}

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

static bool same_scope(const struct mcp_call *call, const struct mcp_peer *peer,
		       const char *scope)
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

/* Sends text with each image's marker replaced by its data. */
static void send_with_images(struct mcp_call *call, char *text)
{
	struct iovec parts[MCP_MAX_SEND_PARTS];
	int count = 0;
	const char *p = text;
	for (int i = 0; i < call->image_count; i++) {
		/* Only an image's own "data" member can hold its marker unescaped
		 * and followed by a quote. */
		char marker[64];
		int marker_len = snprintf(marker, sizeof(marker), "\"data\":\"" IMAGE_MARKER "%d\"", i);
		const char *at = strstr(p, marker);
		if (!at)
			break;
		const char *data_start = at + strlen("\"data\":\"");
		parts[count++] = (struct iovec){ (void *)p, (size_t)(data_start - p) };
		parts[count++] = (struct iovec){ call->images[i]->data, call->images[i]->len };
		p = at + marker_len - 1; /* the closing quote starts the next part */
	}
	parts[count++] = (struct iovec){ (void *)p, strlen(p) };
	peer_send_parts(call->peer, parts, count);
	free(text);
}

static void finish_call(struct mcp_call *call)
{
	cJSON *result = cJSON_CreateObject();
	if (result) {
		cJSON_AddItemToObject(result, "content", call->content);
		call->content = NULL;
		if (call->structured && !call->is_error) {
			cJSON_AddItemToObject(result, "structuredContent", call->structured);
			call->structured = NULL;
		}
		cJSON_AddBoolToObject(result, "isError", call->is_error);
	}
	char *text = jsonrpc_result(call->id, result);
	if (text && call->image_count > 0)
		send_with_images(call, text);
	else
		peer_send(call->peer, text);
}

static double now_seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
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
		finish_call(call);
	struct mcp_peer *peer = call->peer;
	call_free(call);
	pthread_mutex_lock(&peer->lock);
	if (--peer->calls_running == 0)
		pthread_cond_broadcast(&peer->idle);
	pthread_mutex_unlock(&peer->lock);
	peer_unref(peer);
}

/* Whether another call from this client fits in the bounds; the reason
 * otherwise. Counted under calls_lock, so two readers cannot both take the
 * last place. Takes the place when it fits. */
static bool admit_call(struct mcp_server *server, struct mcp_call *call, char *why,
		       size_t why_size)
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
		peer_send(peer, jsonrpc_error(msg->id, JSONRPC_INVALID_PARAMS,
					      "tools/call needs params.name, a string"));
		return;
	}
	const struct registered_tool *tool = find_tool(peer->server, name->valuestring);
	if (!tool) {
		char message[200], shown[65];
		snprintf(message, sizeof(message), "Unknown tool: %s (tools/list names them)",
			 utf8_excerpt(shown, sizeof(shown), name->valuestring));
		peer_send(peer, jsonrpc_error(msg->id, JSONRPC_INVALID_PARAMS, message));
		return;
	}
	if (arguments && !cJSON_IsObject(arguments)) {
		peer_send(peer, jsonrpc_error(msg->id, JSONRPC_INVALID_PARAMS,
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
				     .group = has_group ? group : NULL, .owner = owner,
				     .quick = tool->tool.quick };
	/* A full queue answers at once: the reader never waits for room. */
	char busy[200];
	if (!admit_call(peer->server, call, busy, sizeof(busy))) {
		log_warn("%s", busy);
		call_free(call);
		peer_send(peer, jsonrpc_error(msg->id, JSONRPC_SERVER_BUSY, busy));
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
		peer_unref(peer);
		goto oom_call;
	}
	return;

oom_call:
	call_free(call);
oom:
	peer_send(peer, jsonrpc_error(msg->id, JSONRPC_INTERNAL_ERROR,
				      "the bridge is out of memory or shutting down"));
}

/* Logging */

static const char *const log_level_names[] = {
	[MCP_LOG_DEBUG] = "debug",	 [MCP_LOG_INFO] = "info",   [MCP_LOG_NOTICE] = "notice",
	[MCP_LOG_WARNING] = "warning",	 [MCP_LOG_ERROR] = "error", [MCP_LOG_CRITICAL] = "critical",
	[MCP_LOG_ALERT] = "alert",	 [MCP_LOG_EMERGENCY] = "emergency",
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
			peer_send(peer, jsonrpc_result(msg->id, cJSON_CreateObject()));
			return;
		}
	}
	peer_send(peer, jsonrpc_error(msg->id, JSONRPC_INVALID_PARAMS,
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
		peer_send(peer, jsonrpc_result(msg->id, cJSON_CreateObject()));
	} else if (strcmp(msg->method, "tools/list") == 0) {
		cJSON *result = cJSON_CreateObject();
		cJSON_AddItemToObject(result, "tools", cJSON_Duplicate(peer->server->tool_list, true));
		peer_send(peer, jsonrpc_result(msg->id, result));
	} else if (strcmp(msg->method, "tools/call") == 0) {
		handle_tools_call(peer, msg);
	} else if (strcmp(msg->method, "logging/setLevel") == 0) {
		handle_set_level(peer, msg);
	} else {
		char message[160], shown[65];
		snprintf(message, sizeof(message), "Method not found: %s",
			 utf8_excerpt(shown, sizeof(shown), msg->method));
		peer_send(peer, jsonrpc_error(msg->id, JSONRPC_METHOD_NOT_FOUND, message));
	}
}

void mcp_peer_handle(struct mcp_peer *peer, const char *data, size_t len)
{
	struct jsonrpc_message msg;
	jsonrpc_parse(data, len, &msg);
	switch (msg.kind) {
	case JSONRPC_INVALID:
		log_info("refused a message: %s", msg.error_message);
		peer_send(peer, jsonrpc_error(msg.id, msg.error_code, msg.error_message));
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

bool mcp_peer_wait_idle(struct mcp_peer *peer, int timeout_ms)
{
	struct timespec until = clock_deadline_ms(timeout_ms);
	pthread_mutex_lock(&peer->lock);
	int rc = 0;
	while (peer->calls_running > 0 && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&peer->idle, &peer->lock, &until);
	bool idle = peer->calls_running == 0;
	pthread_mutex_unlock(&peer->lock);
	return idle;
}

void mcp_peer_reject_oversize(struct mcp_peer *peer, size_t limit)
{
	char message[160];
	snprintf(message, sizeof(message),
		 "Invalid Request: message exceeds the %zu byte limit and was discarded", limit);
	log_warn("%s", message);
	peer_send(peer, jsonrpc_error(NULL, JSONRPC_INVALID_REQUEST, message));
}

/* Results */

static void add_text(struct mcp_call *call, const char *fmt, va_list ap)
{
	char stack[1024];
	va_list copy;
	va_copy(copy, ap);
	int n = vsnprintf(stack, sizeof(stack), fmt, copy);
	va_end(copy);
	char *text = stack;
	if (n >= (int)sizeof(stack)) {
		text = malloc((size_t)n + 1);
		if (!text)
			return;
		vsnprintf(text, (size_t)n + 1, fmt, ap);
	}
	cJSON *item = cJSON_CreateObject();
	cJSON_AddStringToObject(item, "type", "text");
	cJSON_AddStringToObject(item, "text", text);
	cJSON_AddItemToArray(call->content, item);
	if (text != stack)
		free(text);
}

void mcp_call_text(struct mcp_call *call, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add_text(call, fmt, ap);
	va_end(ap);
}

void mcp_call_fail(struct mcp_call *call, const char *fmt, ...)
{
	/* An error result carries only the message, not partial output. */
	cJSON_Delete(call->content);
	call->content = cJSON_CreateArray();
	drop_images(call);
	cJSON_Delete(call->structured);
	call->structured = NULL;
	call->is_error = true;
	va_list ap;
	va_start(ap, fmt);
	add_text(call, fmt, ap);
	va_end(ap);
}

bool mcp_call_image_blob(struct mcp_call *call, struct blob *base64, const char *mime_type)
{
	if (call->image_count == MAX_CALL_IMAGES)
		return false;
	char marker[48];
	snprintf(marker, sizeof(marker), IMAGE_MARKER "%d", call->image_count);
	cJSON *item = cJSON_CreateObject();
	if (!item || !cJSON_AddStringToObject(item, "type", "image") ||
	    !cJSON_AddStringToObject(item, "data", marker) ||
	    !cJSON_AddStringToObject(item, "mimeType", mime_type)) {
		cJSON_Delete(item);
		return false;
	}
	cJSON_AddItemToArray(call->content, item);
	call->images[call->image_count++] = blob_ref(base64);
	return true;
}

bool mcp_call_image(struct mcp_call *call, const uint8_t *data, size_t len, const char *mime_type)
{
	struct blob *base64 = base64_encode(data, len);
	if (!base64)
		return false;
	bool ok = mcp_call_image_blob(call, base64, mime_type);
	blob_unref(base64);
	return ok;
}

bool mcp_call_failed(const struct mcp_call *call)
{
	return call->is_error;
}

const char *mcp_call_tool_name(const struct mcp_call *call)
{
	return call->tool->tool.name;
}

void mcp_call_structured(struct mcp_call *call, cJSON *object)
{
	if (!object)
		return;
	char *text = cJSON_PrintUnformatted(object);
	if (!text) {
		cJSON_Delete(object);
		return;
	}
	cJSON *item = cJSON_CreateObject();
	cJSON_AddStringToObject(item, "type", "text");
	cJSON_AddStringToObject(item, "text", text);
	cJSON_AddItemToArray(call->content, item);
	free(text);
	cJSON_Delete(call->structured);
	call->structured = object;
}

bool mcp_call_wants_progress(const struct mcp_call *call)
{
	return call->progress_token != NULL;
}

void mcp_call_progress(struct mcp_call *call, double progress, double total, const char *message)
{
	if (!call->progress_token)
		return;
	cJSON *params = cJSON_CreateObject();
	if (!params)
		return;
	cJSON_AddItemToObject(params, "progressToken", cJSON_Duplicate(call->progress_token, false));
	cJSON_AddNumberToObject(params, "progress", progress);
	if (total >= 0)
		cJSON_AddNumberToObject(params, "total", total);
	if (message)
		cJSON_AddStringToObject(params, "message", message);
	peer_send(call->peer, jsonrpc_notification("notifications/progress", params));
}

bool mcp_call_cancelled(const struct mcp_call *call)
{
	return atomic_load(&((struct mcp_call *)call)->cancelled);
}
