/* SPDX-License-Identifier: MIT */
/* Written against libvncclient 0.9.14: its quirks are worked around where
 * they bite, and each says so. */
#include "vnc/callbacks.h"

#include "vnc/conn_state.h"
#include "vnc/framebuffer.h"
#include "vnc/target.h"
#include "util/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libvncclient's own read timeout counts waits for more bytes, not time:
 * a server sending a big update in many small pieces trips it within a
 * second. So it is only a backstop; the watchdog times read stalls. */
#define LIBRARY_READ_TIMEOUT_S 60

static int client_tag;

/* libvncclient reports through global, non thread-safe function pointers
 * with no client argument. Messages go to our logger, and the latest error
 * of the calling thread is kept so a failed connect can say why. */
static __thread char last_library_error[256];

/* Keeps the message, without its line end, and logs it after prefix. */
static void keep_library_message(const char *prefix, const char *format, va_list ap)
{
	char *out = last_library_error;
	vsnprintf(out, sizeof(last_library_error), format, ap);
	size_t len = strlen(out);
	while (len > 0 && (out[len - 1] == '\n' || out[len - 1] == '\r'))
		out[--len] = '\0';
	log_debug("%s: %s", prefix, out);
}

/* Some failures (a refused password among them) come through the plain
 * log, so the latest line of either kind is kept. */
static void library_log(const char *format, ...)
{
	va_list ap;
	va_start(ap, format);
	keep_library_message("libvncclient", format, ap);
	va_end(ap);
}

static void library_error(const char *format, ...)
{
	va_list ap;
	va_start(ap, format);
	keep_library_message("libvncclient error", format, ap);
	va_end(ap);
}

void vnc_callbacks_route_library_log(void)
{
	rfbClientLog = library_log;
	rfbClientErr = library_error;
}

const char *vnc_callbacks_library_error(void)
{
	return last_library_error;
}

void vnc_callbacks_clear_library_error(void)
{
	last_library_error[0] = '\0';
}

static struct vnc_conn *conn_of(rfbClient *client)
{
	return rfbClientGetClientData(client, &client_tag);
}

static char *get_password(rfbClient *client)
{
	struct vnc_conn *conn = conn_of(client);
	if (!conn->password) {
		/* NULL makes libvncclient give up; an empty string would leak. */
		conn->password_missing = true;
		return NULL;
	}
	return strdup(conn->password);
}

/* A server that holds 8-bit channels as B, G, R, X in memory (Xvnc,
 * x11vnc on little-endian machines) converts every pixel it sends to a
 * client's other order, before it even picks an encoding: Xvnc sent a
 * screen of one colour 0.65 ms later for it (bench/pixel-format.py). We
 * take its order and reorder while copying into the framebuffer, which
 * costs 0.2 ms a screen. */
static bool server_holds_bgrx(const rfbPixelFormat *f)
{
	return f->trueColour && f->bitsPerPixel == 32 && f->depth == 24 && !f->bigEndian &&
	       f->redMax == 255 && f->greenMax == 255 && f->blueMax == 255 && f->redShift == 16 &&
	       f->greenShift == 8 && f->blueShift == 0;
}

static rfbBool allocate_framebuffer(rfbClient *client)
{
	struct vnc_conn *conn = conn_of(client);
	if (client->width <= 0 || client->height <= 0 || client->width > VNC_MAX_SCREEN_SIDE ||
	    client->height > VNC_MAX_SCREEN_SIDE) {
		rfbClientErr("the VNC server's screen is %dx%d; the bridge takes screens of "
			     "1x1 to %dx%d",
			     client->width, client->height, VNC_MAX_SCREEN_SIDE,
			     VNC_MAX_SCREEN_SIDE);
		return FALSE;
	}
	uint8_t *pixels = calloc((size_t)client->width * client->height, 4);
	if (!pixels)
		return FALSE;
	if (!vnc_framebuffer_resize(conn->fb, client->width, client->height)) {
		free(pixels);
		return FALSE;
	}
	/* The first call comes before libvncclient asks for its format. */
	if (!conn->client_pixels && server_holds_bgrx(&client->si.format)) {
		client->format.redShift = 16;
		client->format.blueShift = 0;
		client->format.bigEndian = FALSE;
		conn->bgrx = true;
	}
	free(conn->client_pixels);
	conn->client_pixels = pixels;
	client->frameBuffer = pixels;
	log_debug("VNC screen is %dx%d", client->width, client->height);
	return TRUE;
}

/* A CopyRect is kept as a copy, so viewers can replay it instead of
 * receiving the pixels again. */
static void got_copy_rect(rfbClient *client, int src_x, int src_y, int w, int h, int x, int y)
{
	struct vnc_conn *conn = conn_of(client);
	conn->library_copy_rect(client, src_x, src_y, w, h, x, y);
	struct vnc_rect dest = { x, y, w, h };
	if (vnc_framebuffer_copy_rect(conn->fb, src_x, src_y, &dest))
		conn->copied = dest;
}

static void got_update(rfbClient *client, int x, int y, int w, int h)
{
	struct vnc_conn *conn = conn_of(client);
	struct vnc_rect copied = conn->copied;
	conn->copied = (struct vnc_rect){ 0 };
	if (copied.width > 0 && copied.x == x && copied.y == y && copied.width == w &&
	    copied.height == h)
		return; /* the copy's report: already in the framebuffer */
	if (conn->bgrx)
		vnc_framebuffer_write_rect_bgrx(conn->fb, client->frameBuffer, client->width * 4, x,
						y, w, h);
	else
		vnc_framebuffer_write_rect(conn->fb, client->frameBuffer, client->width * 4, x, y,
					   w, h);
}

static void finished_update(rfbClient *client)
{
	vnc_framebuffer_commit(conn_of(client)->fb);
}

/* libvncclient 0.9.14 never frees the decoded cursor, neither on the next
 * shape nor at cleanup. We copy it out, so it can go right away. */
static void release_cursor_buffers(rfbClient *client)
{
	free(client->rcSource);
	free(client->rcMask);
	client->rcSource = NULL;
	client->rcMask = NULL;
}

static void got_cursor_shape(rfbClient *client, int hot_x, int hot_y, int width, int height,
			     int bytes_per_pixel)
{
	struct vnc_conn *conn = conn_of(client);
	log_debug("cursor shape %dx%d, hot spot (%d, %d)", width, height, hot_x, hot_y);
	if (bytes_per_pixel != 4 || !client->rcSource || !client->rcMask || width <= 0 ||
	    height <= 0 || width > 256 || height > 256) {
		vnc_framebuffer_set_cursor_shape(conn->fb, NULL, 0, 0, 0, 0);
		release_cursor_buffers(client);
		return;
	}
	uint8_t *rgba = malloc((size_t)width * height * 4);
	if (!rgba) {
		release_cursor_buffers(client);
		return;
	}
	const rfbPixelFormat *f = &client->format;
	for (int i = 0; i < width * height; i++) {
		uint32_t p;
		memcpy(&p, client->rcSource + (size_t)i * 4, 4);
		rgba[i * 4 + 0] = (uint8_t)((p >> f->redShift) & f->redMax);
		rgba[i * 4 + 1] = (uint8_t)((p >> f->greenShift) & f->greenMax);
		rgba[i * 4 + 2] = (uint8_t)((p >> f->blueShift) & f->blueMax);
		rgba[i * 4 + 3] = client->rcMask[i] ? 255 : 0;
	}
	vnc_framebuffer_set_cursor_shape(conn->fb, rgba, width, height, hot_x, hot_y);
	free(rgba);
	release_cursor_buffers(client);
}

/* RFB cut text is Latin-1: libvncclient 0.9.14 cannot offer the extended
 * clipboard pseudo-encoding (UTF-8; GotXCutTextUTF8 came in 0.9.15), so
 * servers like Xvnc send Latin-1, with "?" for what it cannot carry. We
 * keep UTF-8. */
static void got_cut_text(rfbClient *client, const char *text, int len)
{
	struct vnc_conn *conn = conn_of(client);
	if (len < 0 || len > 16 * 1024 * 1024)
		return;
	char *utf8 = malloc((size_t)len * 2 + 1);
	if (!utf8)
		return;
	size_t o = 0;
	for (int i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];
		if (c < 0x80) {
			utf8[o++] = (char)c;
		} else {
			utf8[o++] = (char)(0xc0 | c >> 6);
			utf8[o++] = (char)(0x80 | (c & 0x3f));
		}
	}
	utf8[o] = '\0';
	pthread_mutex_lock(&conn->lock);
	free(conn->cut_text);
	conn->cut_text = utf8;
	void (*fn)(void *, const char *, size_t) = conn->on_cut_text;
	void *context = conn->on_cut_text_context;
	pthread_mutex_unlock(&conn->lock);
	/* Only this thread replaces cut_text, so it stays valid for the call. */
	if (fn)
		fn(context, utf8, o);
}

static rfbBool got_cursor_position(rfbClient *client, int x, int y)
{
	vnc_framebuffer_set_cursor_position(conn_of(client)->fb, x, y);
	return TRUE;
}

static bool is_local(const struct vnc_target *target)
{
	return target->is_unix || strcmp(target->host, "localhost") == 0 ||
	       strncmp(target->host, "127.", 4) == 0 || strcmp(target->host, "::1") == 0;
}

rfbClient *vnc_callbacks_make_client(struct vnc_conn *conn, const struct vnc_target *target)
{
	/* 8 bits per channel, 32 bits per pixel: R, G, B, X in memory. */
	rfbClient *client = rfbGetClient(8, 3, 4);
	if (!client)
		return NULL;
	rfbClientSetClientData(client, &client_tag, conn);
	free(client->serverHost); /* rfbGetClient put an empty string there */
	client->serverHost = strdup(target->host);
	client->serverPort = target->is_unix ? 0 : target->port;
	/* The socket is connected already: libvncclient takes it as it takes
	 * one it accepted in listen mode. */
	client->listenSpecified = TRUE;
	client->readTimeout = LIBRARY_READ_TIMEOUT_S;
	client->GetPassword = get_password;
	client->MallocFrameBuffer = allocate_framebuffer;
	client->GotFrameBufferUpdate = got_update;
	conn->library_copy_rect = client->GotCopyRect;
	client->GotCopyRect = got_copy_rect;
	client->FinishedFrameBufferUpdate = finished_update;
	client->GotCursorShape = got_cursor_shape;
	client->HandleCursorPos = got_cursor_position;
	client->GotXCutText = got_cut_text;
	client->canHandleNewFBSize = TRUE;
	client->appData.shareDesktop = TRUE;
	client->appData.useRemoteCursor = TRUE;
	client->appData.enableJPEG = FALSE; /* screenshots must be exact */
	/* Over a local socket, nothing compressed by zlib: it costs both
	 * sides more than the bytes it saves. But no raw either: an update
	 * larger than the socket buffer leaves Xvnc's writes to its next turn
	 * of the X dispatch loop, which stalled updates by 15 ms. Hextile keeps
	 * updates small at little cost; RRE sends an area of one colour (a
	 * cleared screen) as a single rectangle. */
	client->appData.encodingsString = is_local(target) ? "copyrect hextile raw rre"
							   : "copyrect tight zrle hextile zlib raw";
	client->appData.compressLevel = 1;
	return client;
}
