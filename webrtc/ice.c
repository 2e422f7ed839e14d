/* SPDX-License-Identifier: MIT */
#include "webrtc/ice.h"

#include "webrtc/stream.h"

#include <gst/gst.h>

#include <string.h>

/* "stun:host:port?query" as webrtcbin's "stun://host:port" (a STUN URL has
 * no query that matters). */
static char *stun_uri(const char *url)
{
	const char *rest = url + strlen("stun:");
	return g_strdup_printf("stun://%.*s", (int)strcspn(rest, "?"), rest);
}

/* "turn:host:port?transport=tcp" with its username and credential as
 * webrtcbin's "turn://user:credential@host:port?transport=tcp". */
static char *turn_uri(const struct webrtc_ice_server *server)
{
	bool secure = strncmp(server->url, "turns:", 6) == 0;
	const char *rest = server->url + (secure ? 6 : 5);
	char *user = g_uri_escape_string(server->username ? server->username : "", NULL, FALSE);
	char *credential = g_uri_escape_string(server->credential ? server->credential : "", NULL,
					       FALSE);
	char *uri = g_strdup_printf("%s://%s:%s@%s", secure ? "turns" : "turn", user, credential,
				    rest);
	memset(credential, 0, strlen(credential));
	g_free(user);
	g_free(credential);
	return uri;
}

static void free_secret(char *uri)
{
	memset(uri, 0, strlen(uri));
	g_free(uri);
}

bool webrtc_ice_use(GstElement *webrtc, const struct webrtc_ice_server *servers, int count,
		    struct error *err)
{
	if (count > WEBRTC_MAX_ICE_SERVERS)
		return error_set(err, 0,
				 "%d STUN and TURN URLs for a video peer; it takes at most %d",
				 count, WEBRTC_MAX_ICE_SERVERS);
	bool have_stun = false;
	for (int i = 0; i < count; i++) {
		const char *url = servers[i].url;
		if (strncmp(url, "stun:", 5) == 0) {
			if (have_stun)
				continue; /* webrtcbin takes one; the page has them all */
			char *uri = stun_uri(url);
			g_object_set(webrtc, "stun-server", uri, NULL);
			g_free(uri);
			have_stun = true;
		} else if (strncmp(url, "turn:", 5) == 0 || strncmp(url, "turns:", 6) == 0) {
			char *uri = turn_uri(&servers[i]);
			gboolean added = FALSE;
			g_signal_emit_by_name(webrtc, "add-turn-server", uri, &added);
			free_secret(uri);
			if (!added)
				return error_set(err, 0,
						 "webrtcbin refused the TURN server %.*s (its URL, "
						 "username or credential)",
						 (int)strcspn(url, "?"), url);
		} else {
			return error_set(err, 0,
					 "%.*s is not a STUN or TURN URL (stun:, turn: or turns:)",
					 (int)strcspn(url, "?"), url);
		}
	}
	return true;
}
