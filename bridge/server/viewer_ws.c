/* SPDX-License-Identifier: MIT */
/* The browser viewer: GET /view/<session> serves the page (embedded in
 * the binary); the page connects to /viewer with subprotocol
 * lizard-viewer and sends {"session", "token"} as its first message, so the
 * token never appears in a request line or a log. Then frames flow from the
 * session's hub, and a control viewer's pointer and key messages go to the
 * desktop, and so does text pasted into its page (as cut text), while
 * text copied on the desktop comes to it; a view-only viewer's input and
 * clipboard are dropped here, whatever the page sends, and it is sent no
 * clipboard. */
#include "bridge/server/viewer_ws.h"

#include "bridge/server/access.h"
#include "bridge/server/conn.h"
#include "bridge/server/metrics.h"
#include "bridge/server/options.h"
#include "bridge/server/reply.h"
#include "bridge/viewer/control.h"
#include "bridge/session/registry.h"
#include "bridge/session/session.h"
#include "bridge/viewer/hub.h"
#include "bridge/viewer/video.h"
#include "bridge/viewer/wire.h"
#include "bridge/session/input.h"
#include "util/log.h"
#include "util/utf8.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VIEWER_FRAGMENT 65536
/* Data channel messages handled per writeable turn; the rest wait for the
 * next, so one page's input cannot hold the loop. */
#define VIEWER_VIDEO_INPUTS_PER_TURN 64

extern const char viewer_page[];
extern const size_t viewer_page_len;

/* One browser viewer on one WebSocket. */
struct viewer_conn {
	struct server_conn base;
	struct bridge_session *session;
	struct bridge_viewer *viewer;
	struct bridge_viewer_message *sending;
	size_t sending_offset;
	/* Written, but permessage-deflate may still be reading it: libwebsockets
	 * drains the compressor from the caller's buffer before the next
	 * writeable callback, so it is released there. */
	struct bridge_viewer_message *written;
	char *notice; /* a JSON text frame to send, then maybe close */
	bool close_after_notice;
	bool leaving; /* revoked or ended: told why, closed within 1 s */
	struct bridge_viewer_sink sink;
};

void bridge_server_viewer_page(struct http_conn *c)
{
	bridge_server_http_reply(c, 200, "text/html; charset=utf-8", viewer_page, viewer_page_len);
}

static void notice(struct viewer_conn *c, const char *json, bool then_close)
{
	free(c->notice);
	c->notice = malloc(LWS_PRE + strlen(json) + 1);
	if (c->notice)
		memcpy(c->notice + LWS_PRE, json, strlen(json) + 1);
	c->close_after_notice = then_close;
	lws_callback_on_writable(c->base.wsi);
}

static void join(struct viewer_conn *c, const char *text, size_t len)
{
	struct bridge_server *server = c->base.server;
	cJSON *hello = cJSON_ParseWithLength(text, len);
	const char *session = cJSON_GetStringValue(
		cJSON_GetObjectItemCaseSensitive(hello, "session"));
	const char *token = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(hello, "token"));
	struct error err;
	struct bridge_session *s = session && token
					   ? bridge_registry_acquire(server->options->registry,
								     session, &err)
					   : NULL;
	struct bridge_viewers *viewers = s ? bridge_session_viewers(s, 0, NULL, NULL) : NULL;
	enum bridge_viewer_role role = viewers ? bridge_viewers_check(viewers, token)
					       : BRIDGE_VIEWER_NONE;
	cJSON_Delete(hello);
	if (role == BRIDGE_VIEWER_NONE) {
		bridge_registry_release(server->options->registry, s);
		log_info("refused a viewer: wrong or expired link");
		notice(c,
		       "{\"type\":\"" VIEWER_WIRE_TYPE_ERROR
		       "\",\"message\":\"this link is wrong or no longer "
		       "valid\"}",
		       true);
		return;
	}
	c->session = s;
	c->viewer = bridge_viewers_attach(viewers, role);
	if (!c->viewer) {
		notice(c, "{\"type\":\"" VIEWER_WIRE_TYPE_ERROR "\",\"message\":\"out of memory\"}",
		       true);
		return;
	}
	lws_set_timer_usecs(c->base.wsi, LWS_SET_TIMER_USEC_CANCEL); /* joined in time */
	bridge_metrics_viewers(server->options->metrics, 1);
	log_info("a %s viewer joined session %s",
		 role == BRIDGE_VIEWER_CONTROL ? "control" : "view-only", bridge_session_id(s));
}

/* Queued without waiting: the network loop never blocks on a desktop. */
static void post(void *context, const struct vnc_input_event *events, size_t count)
{
	struct viewer_conn *c = context;
	struct error err;
	if (count && !bridge_session_post_input(c->session, events, count, &err))
		log_debug("viewer input not delivered: %s", err.message);
}

/* Text pasted into a control viewer's page, for the desktop's clipboard.
 * RFB cut text is Latin-1 (see vnc/conn.c): characters beyond U+00FF
 * arrive as '?', which the page tells its user. */
static void paste(void *context, const char *utf8, size_t len)
{
	struct viewer_conn *c = context;
	char *latin1 = malloc(len + 1);
	if (!latin1)
		return;
	size_t latin1_len = utf8_to_latin1(utf8, len, latin1, NULL, NULL);
	struct error err;
	if (!bridge_session_post_cut_text(c->session, latin1, latin1_len, &err))
		log_debug("viewer clipboard text not delivered: %s", err.message);
	free(latin1);
}

/* Messages any viewer may send: an update painted, the quality it wants. */
static bool viewer_state(struct viewer_conn *c, const char *text, size_t len)
{
	cJSON *m = cJSON_ParseWithLength(text, len);
	const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "type"));
	const char *quality = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "quality"));
	bool handled = true;
	if (type && strcmp(type, VIEWER_WIRE_TYPE_ACK) == 0)
		bridge_viewer_painted(c->viewer);
	else if (type && strcmp(type, VIEWER_WIRE_TYPE_QUALITY) == 0 && quality)
		bridge_viewer_set_fast(c->viewer, strcmp(quality, VIEWER_WIRE_QUALITY_FAST) == 0);
	else if (type && strncmp(type, VIEWER_WIRE_TYPE_WEBRTC_PREFIX,
				 strlen(VIEWER_WIRE_TYPE_WEBRTC_PREFIX)) == 0)
		bridge_viewer_video_message(c->viewer, text, len);
	else
		handled = false;
	cJSON_Delete(m);
	return handled;
}

static int receive(struct viewer_conn *c, const void *in, size_t len)
{
	size_t limit = !c->viewer ? VIEWER_WIRE_MAX_MESSAGE
		       : bridge_viewer_role(c->viewer) == BRIDGE_VIEWER_CONTROL
			       ? c->base.server->options->max_message
			       : VIEWER_WIRE_MAX_JOINED_MESSAGE;
	enum ws_collect state = bridge_server_collect(&c->base, in, len, limit);
	if (state != WS_MESSAGE_COMPLETE)
		return state == WS_MESSAGE_PARTIAL ? 0 : -1;
	int rc = 0;
	if (!c->viewer && !c->notice)
		join(c, c->base.message, c->base.message_len);
	else if (c->viewer && !viewer_state(c, c->base.message, c->base.message_len) &&
		 !bridge_viewer_handle_input(c->viewer, c->base.message, c->base.message_len,
					     &c->sink)) {
		log_info("closing a viewer: its link was revoked or its session ended");
		rc = -1;
	}
	bridge_server_message_done(&c->base);
	return rc;
}

static int write_notice(struct viewer_conn *c)
{
	size_t len = strlen(c->notice + LWS_PRE);
	int n = lws_write(c->base.wsi, (unsigned char *)c->notice + LWS_PRE, len, LWS_WRITE_TEXT);
	/* Notices are short literals: written whole, so freed here. */
	free(c->notice);
	c->notice = NULL;
	if (n < (int)len || c->close_after_notice) {
		lws_close_reason(c->base.wsi, LWS_CLOSE_STATUS_NORMAL, NULL, 0);
		return -1;
	}
	return 0;
}

/* Input a control viewer's page sent over its video's data channel: on
 * this thread, in order, as if it came on the socket. False when the
 * viewer must go. */
static bool video_input(struct viewer_conn *c)
{
	size_t len;
	char *text;
	for (int i = 0; (text = bridge_viewer_video_next_input(c->viewer, &len)); i++) {
		bool keep = bridge_viewer_handle_input(c->viewer, text, len, &c->sink);
		free(text);
		if (!keep)
			return false;
		if (i + 1 == VIEWER_VIDEO_INPUTS_PER_TURN) {
			lws_callback_on_writable(c->base.wsi); /* the rest next turn */
			break;
		}
	}
	return true;
}

static int writeable(struct viewer_conn *c)
{
	if (c->written) {
		bridge_viewer_sent(c->viewer, c->written);
		c->written = NULL;
	}
	if (c->base.kicked)
		return -1;
	if (c->notice)
		return write_notice(c);
	if (!c->viewer)
		return 0;
	if (!video_input(c)) {
		log_info("closing a viewer: its link was revoked or its session ended");
		return -1;
	}
	if (!c->sending) {
		bool closing, ended;
		c->sending = bridge_viewer_next(c->viewer, &closing, &ended);
		c->sending_offset = 0;
		if (closing) {
			if (c->sending) {
				bridge_viewer_sent(c->viewer, c->sending);
				c->sending = NULL;
			}
			notice(c,
			       ended ? "{\"type\":\"" VIEWER_WIRE_TYPE_STATUS
				       "\",\"state\":\"" VIEWER_WIRE_STATE_ENDED "\"}"
				     : "{\"type\":\"" VIEWER_WIRE_TYPE_ERROR
				       "\",\"message\":\"this link was revoked\"}",
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
	if (lws_write(c->base.wsi, m->data + LWS_PRE + c->sending_offset, chunk, flags) <
	    (int)chunk)
		return -1;
	c->sending_offset += chunk;
	if (last) {
		c->written = m;
		c->sending = NULL;
	}
	lws_callback_on_writable(c->base.wsi);
	return 0;
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
		    size_t len)
{
	struct viewer_conn *c = user;
	struct bridge_server *server = lws_context_user(lws_get_context(wsi));
	char uri[32];
	switch (reason) {
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
		if (lws_hdr_copy(wsi, uri, sizeof(uri), WSI_TOKEN_GET_URI) <= 0 ||
		    strcmp(uri, VIEWER_WIRE_PATH) != 0) {
			lws_return_http_status(wsi, 404, NULL);
			return -1;
		}
		if (!bridge_server_origin_allowed(wsi) ||
		    !bridge_server_host_allowed(server, wsi)) {
			lws_return_http_status(wsi, 403, NULL);
			return -1;
		}
		return 0;
	case LWS_CALLBACK_ESTABLISHED:
		bridge_server_conn_track(server, &c->base, wsi, SERVER_CONN_VIEWER);
		c->sink = (struct bridge_viewer_sink){ .post = post, .paste = paste, .context = c };
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
		if (!c->base.server)
			return 0;
		if (c->sending)
			bridge_viewer_sent(c->viewer, c->sending);
		if (c->written)
			bridge_viewer_sent(c->viewer, c->written);
		if (c->viewer) {
			bridge_viewer_release_held(c->viewer, &c->sink);
			bridge_viewer_detach(c->viewer);
			bridge_metrics_viewers(server->options->metrics, -1);
		}
		/* Maybe the last reference (the session was killed): its
		 * teardown waits for processes, so it happens elsewhere. */
		bridge_registry_release(server->options->registry, c->session);
		free(c->notice);
		free(c->base.message);
		bridge_server_conn_untrack(&c->base);
		c->base.server = NULL;
		return 0;
	default:
		return 0;
	}
}

const struct lws_protocols bridge_server_viewer_protocol = {
	.name = VIEWER_WIRE_SUBPROTOCOL,
	.callback = callback,
	.per_session_data_size = sizeof(struct viewer_conn),
	.rx_buffer_size = 4096,
};

void bridge_server_viewer_wake_all(struct bridge_server *server)
{
	for (struct server_conn *base = server->live; base; base = base->next_live) {
		if (base->kind != SERVER_CONN_VIEWER || base->kicked)
			continue;
		struct viewer_conn *c = (struct viewer_conn *)base;
		if (c->viewer && !c->leaving &&
		    bridge_viewer_role(c->viewer) == BRIDGE_VIEWER_NONE) {
			if (lws_send_pipe_choked(base->wsi)) {
				bridge_server_conn_kill(base,
							"viewer link revoked or session ended");
				continue;
			}
			/* It is told why first, if that goes out within a second. */
			c->leaving = true;
			lws_set_timeout(base->wsi, PENDING_TIMEOUT_USER_OK, 1);
		}
		lws_callback_on_writable(base->wsi);
	}
}
