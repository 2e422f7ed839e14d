/* The browser viewer: GET /view/<session> serves the page (embedded in
 * the binary); the page connects to /viewer with subprotocol
 * lizard-viewer and sends {"session", "token"} as its first message, so the
 * token never appears in a request line or a log. Then frames flow from the
 * session's hub, and a control viewer's pointer and key messages go to the
 * desktop, and so does text pasted into its page (as cut text), while
 * text copied on the desktop comes to it; a view-only viewer's input and
 * clipboard are dropped here, whatever the page sends, and it is sent no
 * clipboard. */
#include "bridge/server/state.h"

#include "bridge/server/metrics.h"
#include "bridge/session/registry.h"
#include "bridge/session/session.h"
#include "bridge/viewer/hub.h"
#include "bridge/session/input.h"
#include "util/log.h"
#include "util/utf8.h"
#include "vnc/conn.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VIEWER_FRAGMENT 65536
/* Messages a viewer may send: small, but a control viewer's clipboard
 * text (up to BRIDGE_VIEWER_MAX_CLIPBOARD bytes, escaped as JSON) may take
 * the server's message limit. */
#define MAX_VIEWER_MESSAGE 4096

extern const char viewer_page[];
extern const size_t viewer_page_len;

void bridge_server_viewer_page(struct connection *c)
{
	bridge_server_http_reply(c, 200, "text/html; charset=utf-8", viewer_page, viewer_page_len);
}

static void notice(struct connection *c, const char *json, bool then_close)
{
	free(c->notice);
	c->notice = malloc(LWS_PRE + strlen(json) + 1);
	if (c->notice)
		memcpy(c->notice + LWS_PRE, json, strlen(json) + 1);
	c->close_after_notice = then_close;
	lws_callback_on_writable(c->wsi);
}

static void join(struct connection *c, const char *text, size_t len)
{
	struct bridge_server *server = c->server;
	cJSON *hello = cJSON_ParseWithLength(text, len);
	const char *session = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(hello, "session"));
	const char *token = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(hello, "token"));
	struct error err;
	struct bridge_session *s =
		session && token ? bridge_registry_acquire(server->options->registry, session,
							   &err)
				 : NULL;
	struct bridge_viewers *viewers = s ? bridge_session_viewers(s, 0, NULL, NULL) : NULL;
	enum bridge_viewer_role role = viewers ? bridge_viewers_check(viewers, token)
					       : BRIDGE_VIEWER_NONE;
	cJSON_Delete(hello);
	if (role == BRIDGE_VIEWER_NONE) {
		bridge_registry_release(server->options->registry, s);
		log_info("refused a viewer: wrong or expired link");
		notice(c, "{\"type\":\"error\",\"message\":\"this link is wrong or no longer "
			  "valid\"}",
		       true);
		return;
	}
	c->viewer_session = s;
	c->viewer = bridge_viewers_attach(viewers, role);
	if (!c->viewer) {
		notice(c, "{\"type\":\"error\",\"message\":\"out of memory\"}", true);
		return;
	}
	lws_set_timer_usecs(c->wsi, LWS_SET_TIMER_USEC_CANCEL); /* joined in time */
	bridge_metrics_viewers(server->options->metrics, 1);
	log_info("a %s viewer joined session %s", role == BRIDGE_VIEWER_CONTROL ? "control" : "view-only",
		 bridge_session_id(s));
}

/* The page names physical keys by KeyboardEvent.code ("KeyA"); any string
 * up to 32 bytes, folded into a number (FNV-1a) to find the key again. */
static uint32_t key_code(const cJSON *code, uint32_t keysym)
{
	const char *name = cJSON_GetStringValue(code);
	if (!name || !*name || strlen(name) > 32)
		return keysym;
	uint32_t hash = 2166136261u;
	for (const char *p = name; *p; p++)
		hash = (hash ^ (unsigned char)*p) * 16777619u;
	return hash;
}

/* Queued without waiting: the network loop never blocks on a desktop. */
static void deliver(struct connection *c, const struct vnc_input_event *events, size_t count)
{
	struct error err;
	if (count && !bridge_session_post_input(c->viewer_session, events, count, &err))
		log_debug("viewer input not delivered: %s", err.message);
}

/* Everything the viewer holds goes up: it lost focus, hid, or went away. */
static void release_held(struct connection *c)
{
	struct vnc_input_event events[BRIDGE_VIEWER_MAX_HELD + 1];
	deliver(c, events, bridge_viewer_release_all(c->viewer, events));
}

/* Text pasted into a control viewer's page, for the desktop's clipboard.
 * RFB cut text is Latin-1 (see vnc/conn.c): characters beyond U+00FF
 * arrive as '?', which the page tells its user. */
static void paste(struct connection *c, const cJSON *text)
{
	const char *utf8 = cJSON_GetStringValue(text);
	size_t len = utf8 ? strlen(utf8) : 0;
	if (!utf8 || len > BRIDGE_VIEWER_MAX_CLIPBOARD) {
		log_debug("viewer clipboard text dropped: %s", utf8 ? "too large" : "not a string");
		return;
	}
	char *latin1 = malloc(len + 1);
	if (!latin1)
		return;
	size_t latin1_len = utf8_to_latin1(utf8, len, latin1, NULL, NULL);
	struct error err;
	if (!bridge_session_post_cut_text(c->viewer_session, latin1, latin1_len, &err))
		log_debug("viewer clipboard text not delivered: %s", err.message);
	free(latin1);
}

/* Pointer and key events from a control viewer, checked and forwarded.
 * Returns -1 when the viewer must go: its link was revoked (or its session
 * ended), which takes effect at once, whether or not it reads. */
static int input(struct connection *c, const char *text, size_t len)
{
	enum bridge_viewer_role role = bridge_viewer_role(c->viewer);
	if (role == BRIDGE_VIEWER_NONE) {
		log_info("closing a viewer: its link was revoked or its session ended");
		return -1;
	}
	if (role != BRIDGE_VIEWER_CONTROL)
		return 0; /* view only: dropped, whatever the page sent */
	cJSON *m = cJSON_ParseWithLength(text, len);
	const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "type"));
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(m, "x");
	const cJSON *y = cJSON_GetObjectItemCaseSensitive(m, "y");
	const cJSON *buttons = cJSON_GetObjectItemCaseSensitive(m, "buttons");
	const cJSON *keysym = cJSON_GetObjectItemCaseSensitive(m, "keysym");
	const cJSON *down = cJSON_GetObjectItemCaseSensitive(m, "down");
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(m, "code");
	struct vnc_input_event event = { 0 };
	bool valid = false;
	if (type && strcmp(type, "pointer") == 0 && cJSON_IsNumber(x) && cJSON_IsNumber(y) &&
	    cJSON_IsNumber(buttons) && x->valueint >= 0 && y->valueint >= 0 &&
	    x->valueint < 16384 && y->valueint < 16384 && buttons->valueint >= 0 &&
	    buttons->valueint < 128) {
		event = (struct vnc_input_event){ .type = VNC_INPUT_POINTER, .x = x->valueint,
						  .y = y->valueint, .buttons = buttons->valueint };
		valid = bridge_viewer_track_input(c->viewer, &event, 0);
	} else if (type && strcmp(type, "key") == 0 && cJSON_IsNumber(keysym) && cJSON_IsBool(down) &&
		   keysym->valuedouble > 0 && keysym->valuedouble < 0x2000000) {
		event = (struct vnc_input_event){ .type = VNC_INPUT_KEY,
						  .keysym = (uint32_t)keysym->valuedouble,
						  .down = cJSON_IsTrue(down) };
		valid = bridge_viewer_track_input(c->viewer, &event, key_code(code, event.keysym));
	} else if (type && strcmp(type, "release") == 0) {
		release_held(c);
	} else if (type && strcmp(type, "clipboard") == 0) {
		paste(c, cJSON_GetObjectItemCaseSensitive(m, "text"));
	}
	cJSON_Delete(m);
	if (valid)
		deliver(c, &event, 1);
	return 0;
}

/* Messages any viewer may send: an update painted, the quality it wants. */
static bool viewer_state(struct connection *c, const char *text, size_t len)
{
	cJSON *m = cJSON_ParseWithLength(text, len);
	const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "type"));
	const char *quality = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "quality"));
	bool handled = true;
	if (type && strcmp(type, "ack") == 0)
		bridge_viewer_painted(c->viewer);
	else if (type && strcmp(type, "quality") == 0 && quality)
		bridge_viewer_set_fast(c->viewer, strcmp(quality, "fast") == 0);
	else
		handled = false;
	cJSON_Delete(m);
	return handled;
}

static int receive(struct connection *c, const void *in, size_t len)
{
	size_t limit = c->viewer && bridge_viewer_role(c->viewer) == BRIDGE_VIEWER_CONTROL
			       ? c->server->options->max_message
			       : MAX_VIEWER_MESSAGE;
	enum ws_collect state = bridge_server_collect(c, in, len, limit);
	if (state != WS_MESSAGE_COMPLETE)
		return state == WS_MESSAGE_PARTIAL ? 0 : -1;
	int rc = 0;
	if (!c->viewer && !c->notice)
		join(c, c->message, c->message_len);
	else if (c->viewer && !viewer_state(c, c->message, c->message_len))
		rc = input(c, c->message, c->message_len);
	bridge_server_message_done(c);
	return rc;
}

static int write_notice(struct connection *c)
{
	size_t len = strlen(c->notice + LWS_PRE);
	int n = lws_write(c->wsi, (unsigned char *)c->notice + LWS_PRE, len, LWS_WRITE_TEXT);
	/* Notices are short literals: written whole, so freed here. */
	free(c->notice);
	c->notice = NULL;
	if (n < (int)len || c->close_after_notice) {
		lws_close_reason(c->wsi, LWS_CLOSE_STATUS_NORMAL, NULL, 0);
		return -1;
	}
	return 0;
}

static int writeable(struct connection *c)
{
	if (c->written) {
		bridge_viewer_sent(c->viewer, c->written);
		c->written = NULL;
	}
	if (c->kicked)
		return -1;
	if (c->notice)
		return write_notice(c);
	if (!c->viewer)
		return 0;
	if (!c->sending) {
		bool closing, ended;
		c->sending = bridge_viewer_next(c->viewer, &closing, &ended);
		c->sending_offset = 0;
		if (closing) {
			if (c->sending) {
				bridge_viewer_sent(c->viewer, c->sending);
				c->sending = NULL;
			}
			notice(c, ended ? "{\"type\":\"status\",\"state\":\"ended\"}"
					: "{\"type\":\"error\",\"message\":\"this link was revoked\"}",
			       true);
			return 0;
		}
		if (!c->sending)
			return 0;
	}
	struct bridge_viewer_message *m = c->sending;
	size_t chunk = m->len - c->sending_offset > VIEWER_FRAGMENT ? VIEWER_FRAGMENT
								     : m->len - c->sending_offset;
	bool first = c->sending_offset == 0, last = c->sending_offset + chunk == m->len;
	int flags = lws_write_ws_flags(m->text ? LWS_WRITE_TEXT : LWS_WRITE_BINARY, first, last);
	if (lws_write(c->wsi, m->data + LWS_PRE + c->sending_offset, chunk, flags) < (int)chunk)
		return -1;
	c->sending_offset += chunk;
	if (last) {
		c->written = m;
		c->sending = NULL;
	}
	lws_callback_on_writable(c->wsi);
	return 0;
}

int bridge_server_viewer_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user,
				  void *in, size_t len)
{
	struct connection *c = user;
	struct bridge_server *server = lws_context_user(lws_get_context(wsi));
	char uri[32];
	switch (reason) {
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
		if (lws_hdr_copy(wsi, uri, sizeof(uri), WSI_TOKEN_GET_URI) <= 0 ||
		    strcmp(uri, "/viewer") != 0) {
			lws_return_http_status(wsi, 404, NULL);
			return -1;
		}
		if (!bridge_server_origin_allowed(wsi) || !bridge_server_host_allowed(server, wsi)) {
			lws_return_http_status(wsi, 403, NULL);
			return -1;
		}
		return 0;
	case LWS_CALLBACK_ESTABLISHED:
		bridge_server_track(server, c, wsi, true);
		c->viewer_socket = true;
		/* Anyone may open the socket; only a valid link keeps it. */
		lws_set_timer_usecs(wsi, (lws_usec_t)BRIDGE_SERVER_VIEWER_JOIN_MS * 1000);
		return 0;
	case LWS_CALLBACK_TIMER:
		if (c->viewer)
			return 0;
		log_info("closing a viewer socket: no valid link within %d ms",
			 BRIDGE_SERVER_VIEWER_JOIN_MS);
		return -1;
	case LWS_CALLBACK_RECEIVE:
		return receive(c, in, len);
	case LWS_CALLBACK_SERVER_WRITEABLE:
		return writeable(c);
	case LWS_CALLBACK_CLOSED:
		if (!c->server)
			return 0;
		if (c->sending)
			bridge_viewer_sent(c->viewer, c->sending);
		if (c->written)
			bridge_viewer_sent(c->viewer, c->written);
		if (c->viewer) {
			release_held(c);
			bridge_viewer_detach(c->viewer);
			bridge_metrics_viewers(server->options->metrics, -1);
		}
		/* Maybe the last reference (the session was killed): its
		 * teardown waits for processes, so it happens elsewhere. */
		bridge_registry_release(server->options->registry, c->viewer_session);
		free(c->notice);
		free(c->message);
		bridge_server_untrack(server, c);
		c->server = NULL;
		return 0;
	default:
		return 0;
	}
}
