/* SPDX-License-Identifier: MIT */
/* expose_port, get_host, unexpose_port (see ports.h). A port's host name
 * is <port>-<session>.<suffix>: "localhost:<daemon port>" by default, which
 * browsers and curl resolve to loopback by themselves, or the operator's
 * --public-host. */
#include "bridge/tools/ports.h"

#include "bridge/context.h"
#include "bridge/session/ports.h"
#include "bridge/session/session.h"
#include "bridge/tools/common.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

static bool port_host(struct bridge_tools_context *context, struct mcp_call *call,
		      struct bridge_session *s, int port, char *host, size_t size)
{
	const struct bridge_viewer_links *links = context->viewer_links;
	if (!links || !links->port_host_suffix[0]) {
		mcp_call_fail(call, "exposed ports are served by the daemon (lizard-bridge serve, "
				    "or stdio --viewer ADDR:PORT); this bridge has no listener");
		return false;
	}
	snprintf(host, size, "%d-%s.%s", port, bridge_session_id(s), links->port_host_suffix);
	return true;
}

static cJSON *describe(struct bridge_session *s, int port, const char *host)
{
	cJSON *reply = cJSON_CreateObject();
	cJSON_AddStringToObject(reply, "session", bridge_session_id(s));
	cJSON_AddNumberToObject(reply, "port", port);
	cJSON_AddStringToObject(reply, "host", host);
	return reply;
}

void tools_expose_port(struct mcp_call *call, const cJSON *args,
		       struct bridge_tools_context *context)
{
	struct bridge_session *s = tools_session(context, call, args);
	if (!s)
		return;
	int port = tools_int(args, "port", 0);
	char host[256];
	if (!port_host(context, call, s, port, host, sizeof(host)))
		return;
	struct error err;
	if (!bridge_session_expose_port(s, port, &err)) {
		mcp_call_fail(call, "%s", err.message);
		return;
	}
	char token[BRIDGE_SESSION_TOKEN_LEN + 1], url[512];
	bridge_session_access_token(s, token, sizeof(token));
	snprintf(url, sizeof(url), "http://%s/?%s=%s", host, BRIDGE_PORT_TOKEN_QUERY, token);
	/* First, alone on its line: what `lizard-bridge call expose_port`
	 * prints for a person to open. */
	mcp_call_text(call, "%s", url);
	cJSON *reply = describe(s, port, host);
	cJSON_AddStringToObject(reply, "url", url);
	cJSON_AddStringToObject(reply, "token", token);
	cJSON_AddStringToObject(reply, "header", BRIDGE_PORT_TOKEN_HEADER);
	memset(token, 0, sizeof(token));
	memset(url, 0, sizeof(url));
	tools_reply_data(call, reply);
}

void tools_get_host(struct mcp_call *call, const cJSON *args, struct bridge_tools_context *context)
{
	struct bridge_session *s = tools_session(context, call, args);
	if (!s)
		return;
	int port = tools_int(args, "port", 0);
	char host[256];
	if (port_host(context, call, s, port, host, sizeof(host)))
		tools_reply_data(call, describe(s, port, host));
}

void tools_unexpose_port(struct mcp_call *call, const cJSON *args,
			 struct bridge_tools_context *context)
{
	struct bridge_session *s = tools_session(context, call, args);
	if (!s)
		return;
	int port = tools_int(args, "port", 0);
	struct error err;
	if (!bridge_session_unexpose_port(s, port, &err)) {
		mcp_call_fail(call, "%s", err.message);
		return;
	}
	cJSON *reply = cJSON_CreateObject();
	cJSON_AddStringToObject(reply, "session", bridge_session_id(s));
	cJSON_AddNumberToObject(reply, "port", port);
	cJSON_AddBoolToObject(reply, "exposed", false);
	tools_reply_data(call, reply);
}
