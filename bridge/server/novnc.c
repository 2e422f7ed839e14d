/* SPDX-License-Identifier: MIT */
/* noVNC as the fallback viewer: GET /novnc/<session> serves a small page
 * (embedded) that runs noVNC from Debian's novnc package, which the bridge
 * serves from /usr/share/novnc under /novnc-files/ (not copied into the
 * repository). The page opens a WebSocket on /rfb/<session> and names the
 * link's token as a WebSocket subprotocol, next to "lizard-rfb", so the
 * token never appears in a request line or a log. The bridge then speaks
 * raw RFB over that socket, as websockify does for noVNC, relayed to a
 * VNC connection of its own: the local desktop's private socket, or the
 * attached server. The relay (vnc/relay.c) does the handshakes and, for a
 * view-only token, drops every input message whatever the client sends.
 * Links are checked again every second, so revoked or ended links stop. */
#include "bridge/server/novnc.h"

#include "bridge/server/access.h"
#include "bridge/server/conn.h"
#include "bridge/server/options.h"
#include "bridge/server/reply.h"
#include "bridge/viewer/novnc.h"

#include "bridge/session/registry.h"
#include "bridge/session/session.h"
#include "bridge/viewer/hub.h"
#include "util/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define NOVNC_DIR "/usr/share/novnc"
#define MAX_STATIC_FILE (4u << 20)
#define CHUNK 65536
/* A side stops being read while more than this waits for the other. */
#define HIGH_WATER (1u << 20)
#define CHECK_EVERY_US (1000 * 1000)

extern const char novnc_page[];
extern const size_t novnc_page_len;

/* Both ends of one relay; whichever closes first closes the other, the
 * last one frees it. */
struct rfb_link {
	struct lws *ws, *raw;
	struct bridge_novnc *relay;
	struct bridge_session *session;
	char token[33];
	bool ws_paused, raw_paused;
	unsigned char scratch[LWS_PRE + CHUNK];
};

/* The relay's WebSocket. */
struct novnc_conn {
	struct server_conn base;
	struct rfb_link *rfb;
};

void bridge_server_novnc_page(struct http_conn *c)
{
	bridge_server_http_reply(c, 200, "text/html; charset=utf-8", novnc_page, novnc_page_len);
}

static const char *content_type(const char *path)
{
	static const struct {
		const char *ext, *type;
	} types[] = {
		{ ".js", "text/javascript" },    { ".css", "text/css" },
		{ ".html", "text/html" },        { ".svg", "image/svg+xml" },
		{ ".png", "image/png" },         { ".ico", "image/x-icon" },
		{ ".json", "application/json" },
	};
	const char *dot = strrchr(path, '.');
	for (size_t i = 0; dot && i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(dot, types[i].ext) == 0)
			return types[i].type;
	return NULL;
}

/* GET /novnc-files/<path>: a regular file under NOVNC_DIR, named with
 * plain characters and no "..", of a known type. */
void bridge_server_novnc_file(struct http_conn *c, const char *path)
{
	const char *type = content_type(path);
	bool plain = *path && *path != '/' && strlen(path) < 200 && !strstr(path, "..");
	for (const char *p = path; plain && *p; p++)
		plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			(*p >= '0' && *p <= '9') || strchr("._-/", *p);
	char full[300];
	snprintf(full, sizeof(full), "%s/%s", NOVNC_DIR, path);
	int fd = plain && type ? open(full, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) : -1;
	struct stat st;
	char *body = NULL;
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < MAX_STATIC_FILE &&
	    (body = malloc((size_t)st.st_size + 1))) {
		size_t got = 0;
		ssize_t n = 1;
		while (got < (size_t)st.st_size &&
		       ((n = read(fd, body + got, (size_t)st.st_size - got)) > 0 ||
			(n < 0 && errno == EINTR)))
			got += n > 0 ? (size_t)n : 0;
		if (got == (size_t)st.st_size) {
			bridge_server_http_reply(c, 200, type, body, got);
			close(fd);
			free(body);
			return;
		}
	}
	if (fd >= 0)
		close(fd);
	free(body);
	static const char missing[] = "not found (is Debian's novnc package installed?)\n";
	bridge_server_http_reply(c, 404, "text/plain", missing, sizeof(missing) - 1);
}

/* The token among the offered subprotocols: 32 hex digits. */
static bool offered_token(struct lws *wsi, char token[33])
{
	char list[256];
	if (lws_hdr_copy(wsi, list, sizeof(list), WSI_TOKEN_PROTOCOL) <= 0)
		return false;
	for (char *p = list; *p;) {
		p += strspn(p, " ,");
		size_t n = strcspn(p, " ,");
		if (n == 32 && strspn(p, "0123456789abcdef") >= 32) {
			memcpy(token, p, 32);
			token[32] = '\0';
			return true;
		}
		p += n;
	}
	return false;
}

/* The session of /rfb/<id> and the role the offered token gives there
 * (BRIDGE_VIEWER_NONE, and no reference, when either is wrong). */
static enum bridge_viewer_role authorise(struct bridge_server *server, struct lws *wsi,
					 struct bridge_session **session, char token[33])
{
	char uri[128];
	struct error err;
	*session = NULL;
	if (lws_hdr_copy(wsi, uri, sizeof(uri), WSI_TOKEN_GET_URI) <= 0 ||
	    strncmp(uri, "/rfb/", 5) != 0 || !offered_token(wsi, token))
		return BRIDGE_VIEWER_NONE;
	struct bridge_session *s = bridge_registry_acquire(server->options->registry, uri + 5,
							   &err);
	struct bridge_viewers *viewers = s ? bridge_session_viewers(s, 0, NULL, NULL) : NULL;
	enum bridge_viewer_role role = viewers ? bridge_viewers_check(viewers, token)
					       : BRIDGE_VIEWER_NONE;
	if (role == BRIDGE_VIEWER_NONE)
		bridge_session_unref(s);
	else
		*session = s;
	return role;
}

static void kill_soon(struct lws *wsi)
{
	if (wsi)
		lws_set_timeout(wsi, PENDING_TIMEOUT_KILLED_BY_PARENT, LWS_TO_KILL_ASYNC);
}

static void link_free(struct rfb_link *link)
{
	bridge_novnc_destroy(link->relay);
	bridge_session_unref(link->session);
	free(link);
}

static void fail(struct rfb_link *link, const char *why)
{
	log_info("noVNC relay closed: %s", why);
	kill_soon(link->ws);
	kill_soon(link->raw);
}

/* After either side moved bytes: who has something to write, and who
 * must wait while the other side drains. */
static void pump(struct rfb_link *link)
{
	size_t to_client, to_server;
	bridge_novnc_to_client(link->relay, &to_client);
	bridge_novnc_to_server(link->relay, &to_server);
	if (to_client && link->ws)
		lws_callback_on_writable(link->ws);
	if (to_server && link->raw)
		lws_callback_on_writable(link->raw);
	bool pause_raw = to_client > HIGH_WATER, pause_ws = to_server > HIGH_WATER;
	if (link->raw && pause_raw != link->raw_paused) {
		lws_rx_flow_control(link->raw, !pause_raw);
		link->raw_paused = pause_raw;
	}
	if (link->ws && pause_ws != link->ws_paused) {
		lws_rx_flow_control(link->ws, !pause_ws);
		link->ws_paused = pause_ws;
	}
}

/* Writes what waits for one side (up to a chunk) and sees what next. */
static int write_some(struct rfb_link *link, struct lws *wsi, bool to_client)
{
	size_t len;
	const uint8_t *data = to_client ? bridge_novnc_to_client(link->relay, &len)
					: bridge_novnc_to_server(link->relay, &len);
	size_t n = len > CHUNK ? CHUNK : len;
	if (n == 0)
		return 0;
	memcpy(link->scratch + LWS_PRE, data, n);
	if (lws_write(wsi, link->scratch + LWS_PRE, n,
		      to_client ? LWS_WRITE_BINARY : LWS_WRITE_RAW) < (int)n)
		return -1;
	if (to_client)
		bridge_novnc_client_sent(link->relay, n);
	else
		bridge_novnc_server_sent(link->relay, n);
	pump(link);
	return 0;
}

static bool connect_vnc(struct rfb_link *link, struct lws *ws, bool view_only)
{
	struct error err;
	link->relay = bridge_session_open_novnc(link->session, view_only, &err);
	if (!link->relay) {
		log_info("noVNC relay: %s", err.message);
		return false;
	}
	const char *host = bridge_novnc_host(link->relay);
	if (bridge_novnc_is_unix(link->relay)) {
		/* A local socket connects at once; lws then drives it raw. */
		struct sockaddr_un addr = { .sun_family = AF_UNIX };
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0 || strlen(host) >= sizeof(addr.sun_path)) {
			if (fd >= 0)
				close(fd);
			return false;
		}
		memcpy(addr.sun_path, host, strlen(host) + 1);
		if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
			log_info("noVNC relay: cannot connect to %s: %s", host, strerror(errno));
			close(fd);
			return false;
		}
		lws_sock_file_fd_type desc = { .sockfd = fd };
		link->raw = lws_adopt_descriptor_vhost_via_info(
			&(struct lws_adopt_desc){ .vh = lws_get_vhost(ws),
						  .type = LWS_ADOPT_SOCKET,
						  .fd = desc,
						  .vh_prot_name = "lizard-vnc-raw",
						  .opaque = link });
		if (!link->raw) {
			close(fd);
			return false;
		}
		return true;
	}
	struct lws_client_connect_info info = {
		.context = lws_get_context(ws),
		.address = host,
		.port = bridge_novnc_port(link->relay),
		.method = "RAW",
		.local_protocol_name = "lizard-vnc-raw",
		.opaque_user_data = link,
		.pwsi = &link->raw,
		.vhost = lws_get_vhost(ws),
	};
	return lws_client_connect_via_info(&info) != NULL;
}

static int rfb_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
			size_t len)
{
	struct novnc_conn *c = user;
	struct bridge_server *server = lws_context_user(lws_get_context(wsi));
	struct rfb_link *link = c ? c->rfb : NULL;
	struct error err;
	switch (reason) {
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION: {
		struct bridge_session *s;
		char token[33];
		if (!bridge_server_origin_allowed(wsi) ||
		    authorise(server, wsi, &s, token) == BRIDGE_VIEWER_NONE) {
			log_info("refused a noVNC connection: wrong or expired link");
			lws_return_http_status(wsi, 403, NULL);
			return -1;
		}
		bridge_session_unref(s);
		return 0;
	}
	case LWS_CALLBACK_ESTABLISHED: {
		bridge_server_conn_track(server, &c->base, wsi, SERVER_CONN_NOVNC);
		link = calloc(1, sizeof(*link));
		if (!link)
			return -1;
		c->rfb = link;
		link->ws = wsi;
		enum bridge_viewer_role role = authorise(server, wsi, &link->session, link->token);
		if (role == BRIDGE_VIEWER_NONE ||
		    !connect_vnc(link, wsi, role == BRIDGE_VIEWER_VIEW))
			return -1;
		lws_set_timer_usecs(wsi, CHECK_EVERY_US);
		log_info("a %s noVNC viewer joined session %s",
			 role == BRIDGE_VIEWER_CONTROL ? "control" : "view-only",
			 bridge_session_id(link->session));
		pump(link);
		return 0;
	}
	case LWS_CALLBACK_RECEIVE:
		if (!link || !link->relay)
			return -1;
		if (!bridge_novnc_from_client(link->relay, in, len, &err)) {
			fail(link, err.message);
			return -1;
		}
		pump(link);
		return 0;
	case LWS_CALLBACK_SERVER_WRITEABLE:
		if (!link || !link->relay)
			return 0;
		return write_some(link, wsi, true);
	case LWS_CALLBACK_TIMER: {
		if (!link)
			return -1;
		struct bridge_viewers *viewers = bridge_session_viewers(link->session, 0, NULL,
									NULL);
		if (!viewers || bridge_viewers_check(viewers, link->token) == BRIDGE_VIEWER_NONE) {
			log_info("noVNC viewer of session %s: link revoked or session ended",
				 bridge_session_id(link->session));
			return -1;
		}
		lws_set_timer_usecs(wsi, CHECK_EVERY_US);
		return 0;
	}
	case LWS_CALLBACK_CLOSED:
		if (!c->base.server)
			return 0;
		if (link) {
			link->ws = NULL;
			if (link->raw)
				kill_soon(link->raw);
			else
				link_free(link);
			c->rfb = NULL;
		}
		bridge_server_conn_untrack(&c->base);
		c->base.server = NULL;
		return 0;
	default:
		return 0;
	}
}

/* The relay's own connection to the VNC server, driven raw by lws. */
static int raw_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
			size_t len)
{
	(void)user;
	struct rfb_link *link = lws_get_opaque_user_data(wsi);
	struct error err;
	if (!link)
		return 0;
	switch (reason) {
	case LWS_CALLBACK_RAW_RX:
		if (!bridge_novnc_from_server(link->relay, in, len, &err)) {
			fail(link, err.message);
			return -1;
		}
		pump(link);
		return 0;
	case LWS_CALLBACK_RAW_CONNECTED:
		pump(link);
		return 0;
	case LWS_CALLBACK_RAW_WRITEABLE:
		return write_some(link, wsi, false);
	case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
	case LWS_CALLBACK_RAW_CLOSE:
		lws_set_opaque_user_data(wsi, NULL);
		link->raw = NULL;
		if (link->ws)
			kill_soon(link->ws);
		else
			link_free(link);
		return 0;
	default:
		return 0;
	}
}

const struct lws_protocols bridge_server_novnc_protocol = {
	.name = "lizard-rfb",
	.callback = rfb_callback,
	.per_session_data_size = sizeof(struct novnc_conn),
	.rx_buffer_size = 65536,
};

const struct lws_protocols bridge_server_vnc_raw_protocol = {
	.name = "lizard-vnc-raw",
	.callback = raw_callback,
	.rx_buffer_size = 65536,
};
