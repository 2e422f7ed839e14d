#include "conn.h"

#include "framebuffer.h"
#include "target.h"
#include "../util/log.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <rfb/rfbclient.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* How long one partially received server message may stall before the
 * connection counts as dead (libvncclient waits forever by default). */
#define READ_TIMEOUT_S 10

struct command {
	const struct vnc_input_event *events;
	size_t count;
	const char *cut_text;
	size_t cut_len;
	bool done, ok;
	struct command *next;
};

struct vnc_conn {
	rfbClient *client;
	struct vnc_framebuffer *fb;
	uint8_t *client_pixels; /* libvncclient decodes into this; we own it */
	char *password;
	bool password_missing;
	char desktop_name[128];

	pthread_t thread;
	int wake_fd;

	pthread_mutex_t lock;
	pthread_cond_t command_done;
	struct command *queue_head, *queue_tail;
	bool stopping;
	bool paused;
	bool failed;
	char failure[256];
	char *cut_text; /* the server's latest clipboard, as UTF-8 */
};

static int client_tag;

/* libvncclient reports through global, non thread-safe function pointers
 * with no client argument. Messages go to our logger, and the latest error
 * of the calling thread is kept so a failed connect can say why. */
static __thread char last_library_error[256];

static void format_library_message(char *out, size_t size, const char *format, va_list ap)
{
	vsnprintf(out, size, format, ap);
	size_t len = strlen(out);
	while (len > 0 && (out[len - 1] == '\n' || out[len - 1] == '\r'))
		out[--len] = '\0';
}

/* Some failures (a refused password among them) come through the plain
 * log, so the latest line of either kind is kept. */
static void library_log(const char *format, ...)
{
	va_list ap;
	va_start(ap, format);
	format_library_message(last_library_error, sizeof(last_library_error), format, ap);
	va_end(ap);
	log_debug("libvncclient: %s", last_library_error);
}

static void library_error(const char *format, ...)
{
	va_list ap;
	va_start(ap, format);
	format_library_message(last_library_error, sizeof(last_library_error), format, ap);
	va_end(ap);
	log_debug("libvncclient error: %s", last_library_error);
}

void vnc_conn_global_init(void)
{
	rfbClientLog = library_log;
	rfbClientErr = library_error;
	/* A dropped server must show up as a failed write, not kill us. */
	signal(SIGPIPE, SIG_IGN);
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

static rfbBool allocate_framebuffer(rfbClient *client)
{
	struct vnc_conn *conn = conn_of(client);
	if (client->width <= 0 || client->height <= 0 || client->width > 16384 ||
	    client->height > 16384) {
		rfbClientErr("server announced an unusable screen size %dx%d", client->width,
			     client->height);
		return FALSE;
	}
	uint8_t *pixels = calloc((size_t)client->width * client->height, 4);
	if (!pixels)
		return FALSE;
	if (!vnc_framebuffer_resize(conn->fb, client->width, client->height)) {
		free(pixels);
		return FALSE;
	}
	free(conn->client_pixels);
	conn->client_pixels = pixels;
	client->frameBuffer = pixels;
	log_debug("VNC screen is %dx%d", client->width, client->height);
	return TRUE;
}

static void got_update(rfbClient *client, int x, int y, int w, int h)
{
	struct vnc_conn *conn = conn_of(client);
	vnc_framebuffer_write_rect(conn->fb, client->frameBuffer, client->width * 4, x, y, w, h);
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

/* RFB cut text is Latin-1; we keep UTF-8. */
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
	pthread_mutex_unlock(&conn->lock);
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

static void fail_locked(struct vnc_conn *conn, const char *why)
{
	if (!conn->failed) {
		conn->failed = true;
		snprintf(conn->failure, sizeof(conn->failure), "%s", why);
		if (conn->stopping)
			log_debug("VNC connection closed");
		else
			log_warn("VNC connection lost: %s", why);
	}
	for (struct command *c = conn->queue_head; c; c = c->next) {
		c->done = true;
		c->ok = false;
	}
	conn->queue_head = conn->queue_tail = NULL;
	pthread_cond_broadcast(&conn->command_done);
}

static bool send_events(struct vnc_conn *conn, const struct command *c)
{
	rfbClient *client = conn->client;
	if (c->cut_text)
		return SendClientCutText(client, (char *)c->cut_text, (int)c->cut_len);
	for (size_t i = 0; i < c->count; i++) {
		const struct vnc_input_event *e = &c->events[i];
		bool ok = true;
		if (e->type == VNC_INPUT_KEY) {
			ok = SendKeyEvent(client, e->keysym, e->down);
		} else if (e->type == VNC_INPUT_POINTER) {
			ok = SendPointerEvent(client, e->x, e->y, e->buttons);
			vnc_framebuffer_set_cursor_position(conn->fb, e->x, e->y);
		}
		if (!ok)
			return false;
	}
	return true;
}

/* Sends everything queued; false when a send failed. */
static bool run_commands(struct vnc_conn *conn)
{
	pthread_mutex_lock(&conn->lock);
	struct command *batch = conn->queue_head;
	conn->queue_head = conn->queue_tail = NULL;
	pthread_mutex_unlock(&conn->lock);

	bool ok = true;
	for (struct command *c = batch; c; c = c->next) {
		bool sent = ok && send_events(conn, c);
		ok = ok && sent;
		pthread_mutex_lock(&conn->lock);
		c->ok = sent;
		c->done = true;
		pthread_mutex_unlock(&conn->lock);
	}
	pthread_mutex_lock(&conn->lock);
	pthread_cond_broadcast(&conn->command_done);
	pthread_mutex_unlock(&conn->lock);
	return ok;
}

static void *conn_thread(void *arg)
{
	struct vnc_conn *conn = arg;
	rfbClient *client = conn->client;
	const char *why = NULL;

	for (;;) {
		pthread_mutex_lock(&conn->lock);
		bool stopping = conn->stopping;
		bool paused = conn->paused;
		pthread_mutex_unlock(&conn->lock);
		if (stopping)
			break;
		if (paused) {
			struct pollfd wake = { .fd = conn->wake_fd, .events = POLLIN };
			if (poll(&wake, 1, 1000) > 0) {
				uint64_t drained;
				if (read(conn->wake_fd, &drained, sizeof(drained)) < 0)
					log_debug("wake eventfd read: %s", strerror(errno));
			}
			continue;
		}

		if (!run_commands(conn)) {
			why = "sending to the VNC server failed; the server closed the connection";
			break;
		}

		/* Bytes libvncclient already buffered would not wake poll(). */
		if (client->buffered == 0) {
			struct pollfd fds[2] = {
				{ .fd = client->sock, .events = POLLIN },
				{ .fd = conn->wake_fd, .events = POLLIN },
			};
			int n = poll(fds, 2, 1000);
			if (n < 0 && errno != EINTR) {
				why = "waiting on the VNC socket failed";
				break;
			}
			if (n <= 0)
				continue;
			if (fds[1].revents & POLLIN) {
				uint64_t drained;
				if (read(conn->wake_fd, &drained, sizeof(drained)) < 0)
					log_debug("wake eventfd read: %s", strerror(errno));
			}
			if (!(fds[0].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
		}
		if (!HandleRFBServerMessage(client)) {
			why = "the VNC server closed the connection";
			break;
		}
	}

	pthread_mutex_lock(&conn->lock);
	fail_locked(conn, why ? why : "the VNC connection was closed by the bridge");
	pthread_mutex_unlock(&conn->lock);
	vnc_framebuffer_close(conn->fb);
	return NULL;
}

static rfbClient *make_client(struct vnc_conn *conn, const struct vnc_target *target,
			      int connect_timeout_s)
{
	/* 8 bits per channel, 32 bits per pixel: R, G, B, X in memory. */
	rfbClient *client = rfbGetClient(8, 3, 4);
	if (!client)
		return NULL;
	rfbClientSetClientData(client, &client_tag, conn);
	free(client->serverHost); /* rfbGetClient put an empty string there */
	client->serverHost = strdup(target->host);
	client->serverPort = target->is_unix ? 0 : target->port;
	client->connectTimeout = (unsigned)connect_timeout_s;
	client->readTimeout = READ_TIMEOUT_S;
	client->GetPassword = get_password;
	client->MallocFrameBuffer = allocate_framebuffer;
	client->GotFrameBufferUpdate = got_update;
	client->FinishedFrameBufferUpdate = finished_update;
	client->GotCursorShape = got_cursor_shape;
	client->HandleCursorPos = got_cursor_position;
	client->GotXCutText = got_cut_text;
	client->canHandleNewFBSize = TRUE;
	client->appData.shareDesktop = TRUE;
	client->appData.useRemoteCursor = TRUE;
	client->appData.enableJPEG = FALSE; /* screenshots must be exact */
	/* Over a local socket, raw pixels cost less than any compression. */
	client->appData.encodingsString =
		is_local(target) ? "copyrect raw" : "copyrect tight zrle hextile zlib raw";
	client->appData.compressLevel = 1;
	return client;
}

struct vnc_conn *vnc_conn_open(const struct vnc_target *target, struct vnc_framebuffer *fb,
			       int connect_timeout_s, char *err, size_t err_size)
{
	char where[300];
	vnc_target_describe(target, where, sizeof(where));

	if (target->is_unix) {
		struct stat st;
		if (stat(target->host, &st) != 0 || !S_ISSOCK(st.st_mode)) {
			snprintf(err, err_size, "cannot connect to VNC server at %s: no socket there",
				 where);
			return NULL;
		}
	}

	struct vnc_conn *conn = calloc(1, sizeof(*conn));
	if (!conn) {
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	conn->fb = fb;
	conn->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	pthread_mutex_init(&conn->lock, NULL);
	pthread_cond_init(&conn->command_done, NULL);
	if (target->password && !(conn->password = strdup(target->password)))
		goto fail_early;
	if (conn->wake_fd < 0)
		goto fail_early;

	conn->client = make_client(conn, target, connect_timeout_s);
	if (!conn->client)
		goto fail_early;

	last_library_error[0] = '\0';
	vnc_framebuffer_reopen(fb);
	if (!rfbInitClient(conn->client, NULL, NULL)) {
		/* rfbInitClient already freed the client. */
		conn->client = NULL;
		if (conn->password_missing)
			snprintf(err, err_size,
				 "VNC server at %s asks for a password; give it as "
				 "vnc://:PASSWORD@HOST:PORT or in LIZARD_VNC_PASSWORD",
				 where);
		else if (conn->password && (strstr(last_library_error, "uthentication") ||
					    strstr(last_library_error, "assword")))
			snprintf(err, err_size, "VNC server at %s refused the password (%s)", where,
				 last_library_error);
		else
			snprintf(err, err_size, "cannot connect to VNC server at %s: %s", where,
				 last_library_error[0] ? last_library_error
						       : "connection failed");
		goto fail_connected;
	}
	if (conn->client->desktopName)
		snprintf(conn->desktop_name, sizeof(conn->desktop_name), "%s",
			 conn->client->desktopName);

	if (pthread_create(&conn->thread, NULL, conn_thread, conn) != 0) {
		snprintf(err, err_size, "cannot start the VNC thread");
		goto fail_connected;
	}
	log_info("connected to VNC server at %s (%dx%d, \"%s\")", where, conn->client->width,
		 conn->client->height, conn->desktop_name);
	return conn;

fail_early:
	snprintf(err, err_size, "out of memory or descriptors while connecting to %s", where);
fail_connected:
	if (conn->client)
		rfbClientCleanup(conn->client);
	free(conn->client_pixels);
	if (conn->wake_fd >= 0)
		close(conn->wake_fd);
	free(conn->password);
	pthread_cond_destroy(&conn->command_done);
	pthread_mutex_destroy(&conn->lock);
	free(conn);
	return NULL;
}

static void wake(struct vnc_conn *conn)
{
	uint64_t one = 1;
	if (write(conn->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_debug("wake eventfd write: %s", strerror(errno));
}

void vnc_conn_destroy(struct vnc_conn *conn)
{
	if (!conn)
		return;
	pthread_mutex_lock(&conn->lock);
	conn->stopping = true;
	pthread_mutex_unlock(&conn->lock);
	wake(conn);
	pthread_join(conn->thread, NULL);

	rfbClientCleanup(conn->client);
	free(conn->client_pixels);
	close(conn->wake_fd);
	free(conn->cut_text);
	if (conn->password) {
		memset(conn->password, 0, strlen(conn->password));
		free(conn->password);
	}
	pthread_cond_destroy(&conn->command_done);
	pthread_mutex_destroy(&conn->lock);
	free(conn);
}

static bool submit(struct vnc_conn *conn, struct command *c, char *err, size_t err_size)
{
	pthread_mutex_lock(&conn->lock);
	if (conn->failed || conn->stopping) {
		snprintf(err, err_size, "the desktop is not connected: %s",
			 conn->failed ? conn->failure : "it is shutting down");
		pthread_mutex_unlock(&conn->lock);
		return false;
	}
	if (conn->queue_tail)
		conn->queue_tail->next = c;
	else
		conn->queue_head = c;
	conn->queue_tail = c;
	pthread_mutex_unlock(&conn->lock);
	wake(conn);

	pthread_mutex_lock(&conn->lock);
	while (!c->done)
		pthread_cond_wait(&conn->command_done, &conn->lock);
	bool ok = c->ok;
	if (!ok)
		snprintf(err, err_size, "the desktop connection failed while sending input: %s",
			 conn->failed ? conn->failure : "send failed");
	pthread_mutex_unlock(&conn->lock);
	return ok;
}

bool vnc_conn_send_input(struct vnc_conn *conn, const struct vnc_input_event *events,
			 size_t count, char *err, size_t err_size)
{
	/* Pauses happen here, in the caller, so the VNC thread keeps reading. */
	size_t start = 0;
	while (start < count) {
		size_t end = start;
		while (end < count && events[end].type != VNC_INPUT_PAUSE)
			end++;
		if (end > start) {
			struct command c = { .events = events + start, .count = end - start };
			if (!submit(conn, &c, err, err_size))
				return false;
		}
		if (end < count && events[end].pause_ms > 0) {
			struct timespec pause = { events[end].pause_ms / 1000,
						  (events[end].pause_ms % 1000) * 1000000L };
			nanosleep(&pause, NULL);
		}
		start = end + 1;
	}
	return true;
}

bool vnc_conn_send_cut_text(struct vnc_conn *conn, const char *latin1, size_t len, char *err,
			    size_t err_size)
{
	struct command c = { .cut_text = latin1, .cut_len = len };
	return submit(conn, &c, err, err_size);
}

bool vnc_conn_alive(struct vnc_conn *conn, char *err, size_t err_size)
{
	pthread_mutex_lock(&conn->lock);
	bool alive = !conn->failed;
	if (!alive)
		snprintf(err, err_size, "the desktop is not connected: %s", conn->failure);
	pthread_mutex_unlock(&conn->lock);
	return alive;
}

const char *vnc_conn_desktop_name(struct vnc_conn *conn)
{
	return conn->desktop_name;
}

char *vnc_conn_cut_text(struct vnc_conn *conn)
{
	pthread_mutex_lock(&conn->lock);
	char *copy = conn->cut_text ? strdup(conn->cut_text) : NULL;
	pthread_mutex_unlock(&conn->lock);
	return copy;
}

void vnc_conn_set_paused(struct vnc_conn *conn, bool paused)
{
	if (!conn)
		return;
	pthread_mutex_lock(&conn->lock);
	conn->paused = paused;
	pthread_mutex_unlock(&conn->lock);
	wake(conn);
}
