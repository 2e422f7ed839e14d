#include "vnc/conn.h"

#include "vnc/framebuffer.h"
#include "vnc/target.h"
#include "util/log.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <rfb/rfbclient.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/io.h"

/* How often the watchdog looks. */
#define WATCH_PERIOD_MS 200
#define KICK_PERIOD_MS 50
#define SEND_FAILED "sending to the VNC server failed; the server closed the connection"
/* libvncclient's own read timeout counts waits for more bytes, not time:
 * a server sending a big update in many small pieces trips it within a
 * second. So it is only a backstop; the watchdog times read stalls. */
#define LIBRARY_READ_TIMEOUT_S 60

enum busy { IDLE, READING, SENDING };

/* Interrupts the VNC thread's select() in libvncclient's write: on a UNIX
 * socket, shutdown() alone does not make a full socket look writable. */
#define KICK_SIGNAL (SIGRTMIN + 3)

/* Input on its way to the server. Commands live on the heap: a caller that
 * stops waiting (deadline) or never waited (post) leaves it to the VNC
 * thread to free. */
struct command {
	struct vnc_input_event *events; /* owned copy */
	size_t count;
	char *cut_text;                 /* owned copy */
	size_t cut_len;
	bool done, ok;
	bool orphan; /* nobody waits: whoever finishes it frees it */
	struct command *next;
};

struct vnc_conn {
	rfbClient *client;
	struct vnc_framebuffer *fb;
	uint8_t *client_pixels; /* libvncclient decodes into this; we own it */
	bool bgrx;		/* ... as B, G, R, X: the server's own order */
	char *password;
	bool password_missing;
	char desktop_name[128];

	/* Ours; libvncclient has a dup. shutdown() on either ends the socket
	 * for both, and ours stays open (so its number is not reused) until
	 * the watchdog is gone. */
	int sock;

	pthread_t thread;
	bool thread_started;
	int wake_fd;

	pthread_t watchdog;
	bool watchdog_started;
	pthread_cond_t watch; /* CLOCK_MONOTONIC */
	const atomic_bool *abandon;
	int64_t handshake_deadline_ms; /* 0 once connected */
	pid_t thread_id;               /* of the VNC thread, for its read count */
	pthread_t thread_self;         /* valid while thread_id != 0 && !thread_exited */
	bool thread_exited;
	enum busy busy;                /* what the VNC thread is doing in libvncclient */
	int64_t stall_since_ms;        /* no progress either way since */
	int last_unread;
	long long last_read_bytes;
	bool cut;                      /* the watchdog shut the socket down */
	bool watch_done;               /* the watchdog may go */
	char cut_reason[200];

	pthread_mutex_t lock;
	pthread_cond_t command_done; /* CLOCK_MONOTONIC */
	struct command *queue_head, *queue_tail;
	size_t queued;
	bool stopping;
	bool paused;
	bool failed;
	char failure[256];
	char *cut_text; /* the server's latest clipboard, as UTF-8 */
	vnc_cut_text_fn on_cut_text;
	void *on_cut_text_context;

	/* CopyRect: libvncclient's own copy, and the destination it reports
	 * as an update right after, which the framebuffer already holds. */
	GotCopyRectProc library_copy_rect;
	struct vnc_rect copied;
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

static void on_kick(int sig)
{
	(void)sig;
}

void vnc_conn_global_init(void)
{
	rfbClientLog = library_log;
	rfbClientErr = library_error;
	/* A dropped server must show up as a failed write, not kill us. */
	signal(SIGPIPE, SIG_IGN);
	/* No SA_RESTART: the point is that select() returns. */
	struct sigaction kick = { .sa_handler = on_kick };
	sigemptyset(&kick.sa_mask);
	sigaction(KICK_SIGNAL, &kick, NULL);
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
	       f->redMax == 255 && f->greenMax == 255 && f->blueMax == 255 &&
	       f->redShift == 16 && f->greenShift == 8 && f->blueShift == 0;
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
	vnc_cut_text_fn fn = conn->on_cut_text;
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

static void free_command(struct command *c)
{
	free(c->events);
	free(c->cut_text);
	free(c);
}

/* Marks a command finished: its waiter wakes, or it is freed when nobody
 * waits any more. */
static void finish_locked(struct command *c, bool ok)
{
	if (c->orphan) {
		free_command(c);
		return;
	}
	c->ok = ok;
	c->done = true;
}

static void fail_locked(struct vnc_conn *conn, const char *why)
{
	if (!conn->failed) {
		conn->failed = true;
		snprintf(conn->failure, sizeof(conn->failure), "%s",
			 conn->cut && !conn->stopping ? conn->cut_reason : why);
		if (conn->stopping)
			log_debug("VNC connection closed");
		else
			log_warn("VNC connection lost: %s", conn->failure);
	}
	struct command *c = conn->queue_head;
	conn->queue_head = conn->queue_tail = NULL;
	conn->queued = 0;
	while (c) {
		struct command *next = c->next;
		finish_locked(c, false);
		c = next;
	}
	pthread_cond_broadcast(&conn->command_done);
}

/* The watchdog judges by these: how long the VNC thread has been inside
 * libvncclient, where a stalled peer can hold it. */
static void set_busy(struct vnc_conn *conn, enum busy busy)
{
	pthread_mutex_lock(&conn->lock);
	conn->busy = busy;
	pthread_mutex_unlock(&conn->lock);
}

static bool send_events(struct vnc_conn *conn, const struct command *c)
{
	rfbClient *client = conn->client;
	if (c->cut_text)
		return SendClientCutText(client, c->cut_text, (int)c->cut_len);
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
	conn->queued = 0;
	pthread_mutex_unlock(&conn->lock);
	if (!batch)
		return true;

	bool ok = true;
	set_busy(conn, SENDING);
	while (batch) {
		struct command *c = batch;
		batch = c->next;
		bool sent = ok && send_events(conn, c);
		pthread_mutex_lock(&conn->lock);
		if (ok && !sent) /* say why before anyone hears it failed */
			fail_locked(conn, SEND_FAILED);
		ok = ok && sent;
		finish_locked(c, sent);
		pthread_cond_broadcast(&conn->command_done);
		pthread_mutex_unlock(&conn->lock);
	}
	set_busy(conn, IDLE);
	return ok;
}

/* Why HandleRFBServerMessage gave up, from what libvncclient logged. */
static void describe_read_failure(char *out, size_t size)
{
	const char *said = last_library_error;
	if (strstr(said, "timed out"))
		snprintf(out, size, "the VNC server stalled in the middle of a message; dropped "
				    "as dead");
	else if (!*said || strstr(said, "closed connection") || strstr(said, "read ("))
		snprintf(out, size, "the VNC server closed the connection");
	else
		snprintf(out, size, "the VNC server sent what the bridge refuses: %s", said);
}

static void *conn_thread(void *arg)
{
	struct vnc_conn *conn = arg;
	rfbClient *client = conn->client;
	const char *why = NULL;
	char read_failure[300];
	/* The kick must get through even if whoever made us blocks signals. */
	sigset_t kick;
	sigemptyset(&kick);
	sigaddset(&kick, KICK_SIGNAL);
	pthread_sigmask(SIG_UNBLOCK, &kick, NULL);
	pthread_mutex_lock(&conn->lock);
	conn->thread_id = gettid();
	conn->thread_self = pthread_self();
	pthread_mutex_unlock(&conn->lock);

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
			why = SEND_FAILED;
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
		last_library_error[0] = '\0';
		set_busy(conn, READING);
		bool handled = HandleRFBServerMessage(client);
		set_busy(conn, IDLE);
		if (!handled) {
			describe_read_failure(read_failure, sizeof(read_failure));
			why = read_failure;
			break;
		}
	}

	pthread_mutex_lock(&conn->lock);
	fail_locked(conn, why ? why : "the VNC connection was closed by the bridge");
	conn->thread_exited = true;
	pthread_mutex_unlock(&conn->lock);
	vnc_framebuffer_close(conn->fb);
	return NULL;
}

/* Bytes we wrote that the peer has not taken yet. */
static int unread_bytes(int sock)
{
	int n = 0;
	if (ioctl(sock, SIOCOUTQ, &n) != 0)
		return 0;
	return n;
}

/* Bytes a thread of ours has read so far (socket reads included), or -1
 * when the kernel does not say. */
static long long thread_read_bytes(pid_t tid)
{
	char path[64], text[512];
	snprintf(path, sizeof(path), "/proc/self/task/%d/io", (int)tid);
	if (io_read_small_file(path, text, sizeof(text)) < 0)
		return -1;
	const char *rchar = strstr(text, "rchar:");
	return rchar ? strtoll(rchar + 6, NULL, 10) : -1;
}

static void cut_locked(struct vnc_conn *conn, const char *why)
{
	if (conn->cut)
		return;
	conn->cut = true;
	snprintf(conn->cut_reason, sizeof(conn->cut_reason), "%s", why);
	shutdown(conn->sock, SHUT_RDWR);
}

/* Ends the socket when the connection must go and libvncclient may be
 * blocked: asked to stop or abandoned, handshake over time, or a peer that
 * takes nothing we send while the VNC thread waits on it. */
static void *watchdog_thread(void *arg)
{
	struct vnc_conn *conn = arg;
	char why[200];
	pthread_mutex_lock(&conn->lock);
	while (!conn->watch_done) {
		struct timespec next = clock_deadline_ms(conn->cut ? KICK_PERIOD_MS : WATCH_PERIOD_MS);
		pthread_cond_timedwait(&conn->watch, &conn->lock, &next);
		if (conn->cut) {
			/* Until the VNC thread is out of libvncclient: a signal that
			 * lands just before it enters select() is lost, so again. */
			if (conn->thread_id && !conn->thread_exited)
				pthread_kill(conn->thread_self, KICK_SIGNAL);
			continue;
		}
		int64_t now = clock_monotonic_ms();
		if (conn->stopping || (conn->abandon && atomic_load(conn->abandon))) {
			conn->stopping = true;
			cut_locked(conn, "the VNC connection was closed by the bridge");
			continue;
		}
		if (conn->handshake_deadline_ms && now > conn->handshake_deadline_ms) {
			cut_locked(conn, "the VNC server did not complete the handshake in time");
			continue;
		}
		/* A stall: busy in libvncclient while the server sends nothing
		 * (known from the VNC thread's read count) and, unless we wait
		 * for the rest of a message, takes none of our bytes either. A
		 * server streaming a large update need not read meanwhile. */
		bool stalled = false;
		int unread = 0;
		if (conn->busy != IDLE) {
			unread = unread_bytes(conn->sock);
			long long read_bytes = thread_read_bytes(conn->thread_id);
			bool silent = conn->busy == SENDING ||
				      (read_bytes >= 0 && read_bytes == conn->last_read_bytes);
			bool deaf = unread > 0 && unread >= conn->last_unread;
			stalled = silent && (deaf || conn->busy == READING);
			conn->last_read_bytes = read_bytes;
		}
		conn->last_unread = unread;
		if (!stalled)
			conn->stall_since_ms = 0;
		else if (conn->stall_since_ms == 0)
			conn->stall_since_ms = now;
		if (conn->stall_since_ms && now - conn->stall_since_ms >= VNC_STALL_MS) {
			if (unread > 0)
				snprintf(why, sizeof(why),
					 "the VNC server took none of the bridge's messages for %d s "
					 "(%d bytes unread); dropped as dead",
					 VNC_STALL_MS / 1000, unread);
			else
				snprintf(why, sizeof(why),
					 "the VNC server stopped in the middle of a message for %d s; "
					 "dropped as dead",
					 VNC_STALL_MS / 1000);
			cut_locked(conn, why);
		}
	}
	pthread_mutex_unlock(&conn->lock);
	return NULL;
}

/* Waits for a non-blocking connect until deadline_ms or abandon. */
static bool wait_connected(int sock, int64_t deadline_ms, const atomic_bool *abandon,
			   const char **why)
{
	for (;;) {
		int64_t left = deadline_ms - clock_monotonic_ms();
		if (left <= 0) {
			*why = "timed out";
			return false;
		}
		if (abandon && atomic_load(abandon)) {
			*why = "abandoned";
			return false;
		}
		struct pollfd p = { .fd = sock, .events = POLLOUT };
		int n = poll(&p, 1, left < WATCH_PERIOD_MS ? (int)left : WATCH_PERIOD_MS);
		if (n < 0 && errno != EINTR) {
			*why = strerror(errno);
			return false;
		}
		if (n > 0) {
			int error = 0;
			socklen_t len = sizeof(error);
			if (getsockopt(sock, SOL_SOCKET, SO_ERROR, &error, &len) != 0)
				error = errno;
			if (error) {
				*why = strerror(error);
				return false;
			}
			return true;
		}
	}
}

/* Our own connect, so we hold the socket from the start and can end it
 * whatever libvncclient is doing with it. Non-blocking, as libvncclient
 * expects. */
static int connect_socket(const struct vnc_target *target, int64_t deadline_ms,
			  const atomic_bool *abandon, struct error *err)
{
	const char *why = NULL;
	if (target->is_unix) {
		struct sockaddr_un addr = { .sun_family = AF_UNIX };
		if (strlen(target->host) >= sizeof(addr.sun_path)) {
			error_set(err, 0, "the socket path is longer than %zu bytes",
				 sizeof(addr.sun_path) - 1);
			return -1;
		}
		memcpy(addr.sun_path, target->host, strlen(target->host) + 1);
		int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (sock < 0) {
			error_set(err, 0, "socket: %s", strerror(errno));
			return -1;
		}
		if (connect(sock, (struct sockaddr *)&addr, sizeof(addr)) == 0 ||
		    ((errno == EINPROGRESS || errno == EAGAIN) &&
		     wait_connected(sock, deadline_ms, abandon, &why)))
			return sock;
		error_set(err, 0, "connect: %s", why ? why : strerror(errno));
		close(sock);
		return -1;
	}

	char port[16];
	snprintf(port, sizeof(port), "%d", target->port);
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *found = NULL;
	int rc = getaddrinfo(target->host, port, &hints, &found);
	if (rc != 0) {
		error_set(err, 0, "cannot resolve %s: %s", target->host, gai_strerror(rc));
		return -1;
	}
	int sock = -1;
	for (struct addrinfo *a = found; a && sock < 0; a = a->ai_next) {
		sock = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
			      a->ai_protocol);
		if (sock < 0) {
			why = strerror(errno);
			continue;
		}
		if (connect(sock, a->ai_addr, a->ai_addrlen) == 0 ||
		    (errno == EINPROGRESS && wait_connected(sock, deadline_ms, abandon, &why)))
			break;
		if (!why)
			why = strerror(errno);
		close(sock);
		sock = -1;
	}
	freeaddrinfo(found);
	if (sock < 0) {
		error_set(err, 0, "connect: %s", why ? why : "no address");
		return -1;
	}
	/* Input is a few bytes at a time: send it now, not with the next. */
	int one = 1;
	setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return sock;
}

static rfbClient *make_client(struct vnc_conn *conn, const struct vnc_target *target)
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
	client->appData.encodingsString =
		is_local(target) ? "copyrect hextile raw rre" : "copyrect tight zrle hextile zlib raw";
	client->appData.compressLevel = 1;
	return client;
}

static void stop_watchdog(struct vnc_conn *conn)
{
	if (!conn->watchdog_started)
		return;
	pthread_mutex_lock(&conn->lock);
	conn->watch_done = true;
	pthread_cond_broadcast(&conn->watch);
	pthread_mutex_unlock(&conn->lock);
	pthread_join(conn->watchdog, NULL);
	conn->watchdog_started = false;
}

static void free_conn(struct vnc_conn *conn)
{
	free(conn->client_pixels);
	if (conn->wake_fd >= 0)
		close(conn->wake_fd);
	if (conn->sock >= 0)
		close(conn->sock);
	free(conn->cut_text);
	if (conn->password) {
		memset(conn->password, 0, strlen(conn->password));
		free(conn->password);
	}
	pthread_cond_destroy(&conn->watch);
	pthread_cond_destroy(&conn->command_done);
	pthread_mutex_destroy(&conn->lock);
	free(conn);
}

struct vnc_conn *vnc_conn_open(const struct vnc_target *target, struct vnc_framebuffer *fb,
			       int connect_timeout_s, const atomic_bool *abandon, struct error *err)
{
	char where[300];
	vnc_target_describe(target, where, sizeof(where));

	if (target->is_unix) {
		struct stat st;
		if (stat(target->host, &st) != 0 || !S_ISSOCK(st.st_mode)) {
			error_set(err, 0, "cannot connect to VNC server at %s: no socket there",
				 where);
			return NULL;
		}
	}

	struct vnc_conn *conn = calloc(1, sizeof(*conn));
	if (!conn) {
		error_set(err, 0, "out of memory");
		return NULL;
	}
	conn->fb = fb;
	conn->sock = -1;
	conn->abandon = abandon;
	conn->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	pthread_mutex_init(&conn->lock, NULL);
	clock_cond_init(&conn->command_done);
	clock_cond_init(&conn->watch);
	if (target->password && !(conn->password = strdup(target->password)))
		goto fail_early;
	if (conn->wake_fd < 0)
		goto fail_early;

	int64_t deadline = clock_monotonic_ms() + (int64_t)connect_timeout_s * 1000;
	struct error why;
	conn->sock = connect_socket(target, deadline, abandon, &why);
	if (conn->sock < 0) {
		error_set(err, 0, "cannot connect to VNC server at %s: %s", where, why.message);
		free_conn(conn);
		return NULL;
	}
	conn->client = make_client(conn, target);
	if (!conn->client)
		goto fail_early;
	conn->client->sock = fcntl(conn->sock, F_DUPFD_CLOEXEC, 0);
	if (conn->client->sock < 0)
		goto fail_early;

	conn->handshake_deadline_ms = deadline;
	if (pthread_create(&conn->watchdog, NULL, watchdog_thread, conn) != 0)
		goto fail_early;
	conn->watchdog_started = true;

	last_library_error[0] = '\0';
	vnc_framebuffer_reopen(fb);
	if (!rfbInitClient(conn->client, NULL, NULL)) {
		/* rfbInitClient already freed the client (and closed its socket). */
		conn->client = NULL;
		pthread_mutex_lock(&conn->lock);
		bool cut = conn->cut;
		snprintf(why.message, sizeof(why.message), "%s", conn->cut_reason);
		pthread_mutex_unlock(&conn->lock);
		if (cut)
			error_set(err, 0, "cannot connect to VNC server at %s: %s", where, why.message);
		else if (conn->password_missing)
			error_set(err, 0,
				 "VNC server at %s asks for a password; give it as "
				 "vnc://:PASSWORD@HOST:PORT or in LIZARD_VNC_PASSWORD",
				 where);
		else if (conn->password && (strstr(last_library_error, "uthentication") ||
					    strstr(last_library_error, "assword")))
			error_set(err, 0, "VNC server at %s refused the password (%s)", where,
				 last_library_error);
		else
			error_set(err, 0, "cannot connect to VNC server at %s: %s", where,
				 last_library_error[0] ? last_library_error
						       : "connection failed");
		goto fail_connected;
	}
	pthread_mutex_lock(&conn->lock);
	conn->handshake_deadline_ms = 0;
	pthread_mutex_unlock(&conn->lock);
	if (conn->client->desktopName)
		snprintf(conn->desktop_name, sizeof(conn->desktop_name), "%s",
			 conn->client->desktopName);

	if (pthread_create(&conn->thread, NULL, conn_thread, conn) != 0) {
		error_set(err, 0, "cannot start the VNC thread");
		goto fail_connected;
	}
	conn->thread_started = true;
	log_info("connected to VNC server at %s (%dx%d, \"%s\")", where, conn->client->width,
		 conn->client->height, conn->desktop_name);
	return conn;

fail_early:
	error_set(err, 0, "out of memory or descriptors while connecting to %s", where);
fail_connected:
	stop_watchdog(conn);
	if (conn->client)
		rfbClientCleanup(conn->client);
	free_conn(conn);
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
	pthread_cond_broadcast(&conn->watch); /* it cuts and kicks at once */
	pthread_mutex_unlock(&conn->lock);
	/* Whatever libvncclient waits in (a read of a stalled message, a
	 * write to a server that reads nothing) returns now. */
	shutdown(conn->sock, SHUT_RDWR);
	wake(conn);
	if (conn->thread_started)
		pthread_join(conn->thread, NULL);
	stop_watchdog(conn);

	pthread_mutex_lock(&conn->lock);
	fail_locked(conn, "the VNC connection was closed by the bridge");
	pthread_mutex_unlock(&conn->lock);
	rfbClientCleanup(conn->client);
	free_conn(conn);
}

/* Queues c (taking it over). False with a message when it cannot be. */
static bool enqueue(struct vnc_conn *conn, struct command *c, struct error *err)
{
	pthread_mutex_lock(&conn->lock);
	bool ok = !conn->failed && !conn->stopping && conn->queued < VNC_MAX_QUEUED;
	if (!ok) {
		if (conn->failed || conn->stopping)
			error_set(err, 0, "the desktop is not connected: %s",
				 conn->failed ? conn->failure : "it is shutting down");
		else
			error_set(err, 0,
				 "the desktop has %d inputs waiting to be sent; the VNC server is "
				 "not keeping up",
				 VNC_MAX_QUEUED);
		pthread_mutex_unlock(&conn->lock);
		free_command(c);
		return false;
	}
	if (conn->queue_tail)
		conn->queue_tail->next = c;
	else
		conn->queue_head = c;
	conn->queue_tail = c;
	conn->queued++;
	pthread_mutex_unlock(&conn->lock);
	wake(conn);
	return true;
}

/* Takes c out of the queue if the VNC thread has not taken it yet. */
static bool unqueue_locked(struct vnc_conn *conn, struct command *c)
{
	struct command **link = &conn->queue_head, *prev = NULL;
	for (; *link; prev = *link, link = &(*link)->next) {
		if (*link != c)
			continue;
		*link = c->next;
		if (conn->queue_tail == c)
			conn->queue_tail = prev;
		conn->queued--;
		return true;
	}
	return false;
}

/* Queues c and waits, at most VNC_INPUT_TIMEOUT_MS, for it to be sent. */
static bool submit(struct vnc_conn *conn, struct command *c, struct error *err)
{
	if (!enqueue(conn, c, err))
		return false;
	struct timespec deadline = clock_deadline_ms(VNC_INPUT_TIMEOUT_MS);
	pthread_mutex_lock(&conn->lock);
	while (!c->done) {
		if (pthread_cond_timedwait(&conn->command_done, &conn->lock, &deadline) ==
		    ETIMEDOUT && !c->done) {
			/* Not sent in time: it must not go out later either. */
			if (unqueue_locked(conn, c))
				free_command(c);
			else
				c->orphan = true;
			error_set(err, 0,
				 "the desktop did not take the input within %d s (the VNC server "
				 "is stalled or busy)",
				 VNC_INPUT_TIMEOUT_MS / 1000);
			pthread_mutex_unlock(&conn->lock);
			return false;
		}
	}
	bool ok = c->ok;
	if (!ok)
		error_set(err, 0, "the desktop connection failed while sending input: %s",
			 conn->failed ? conn->failure : "send failed");
	pthread_mutex_unlock(&conn->lock);
	free_command(c);
	return ok;
}

/* A command holding a copy of the non-pause events. */
static struct command *input_command(const struct vnc_input_event *events, size_t count,
				     struct error *err)
{
	struct command *c = calloc(1, sizeof(*c));
	if (c && count > 0)
		c->events = malloc(count * sizeof(*events));
	if (!c || (count > 0 && !c->events)) {
		free(c);
		error_set(err, 0, "out of memory queueing input");
		return NULL;
	}
	for (size_t i = 0; i < count; i++)
		if (events[i].type != VNC_INPUT_PAUSE)
			c->events[c->count++] = events[i];
	return c;
}

bool vnc_conn_send_input(struct vnc_conn *conn, const struct vnc_input_event *events,
			 size_t count, struct error *err)
{
	struct command *c = input_command(events, count, err);
	return c && submit(conn, c, err);
}

bool vnc_conn_post_input(struct vnc_conn *conn, const struct vnc_input_event *events,
			 size_t count, struct error *err)
{
	struct command *c = input_command(events, count, err);
	if (!c)
		return false;
	c->orphan = true;
	return enqueue(conn, c, err);
}

static struct command *cut_text_command(const char *latin1, size_t len, struct error *err)
{
	struct command *c = calloc(1, sizeof(*c));
	if (c)
		c->cut_text = malloc(len + 1);
	if (!c || !c->cut_text) {
		free(c);
		error_set(err, 0, "out of memory queueing the clipboard text");
		return NULL;
	}
	memcpy(c->cut_text, latin1, len);
	c->cut_len = len;
	return c;
}

bool vnc_conn_send_cut_text(struct vnc_conn *conn, const char *latin1, size_t len, struct error *err)
{
	struct command *c = cut_text_command(latin1, len, err);
	return c && submit(conn, c, err);
}

bool vnc_conn_post_cut_text(struct vnc_conn *conn, const char *latin1, size_t len, struct error *err)
{
	struct command *c = cut_text_command(latin1, len, err);
	if (!c)
		return false;
	c->orphan = true;
	return enqueue(conn, c, err);
}

void vnc_conn_on_cut_text(struct vnc_conn *conn, vnc_cut_text_fn fn, void *context)
{
	pthread_mutex_lock(&conn->lock);
	conn->on_cut_text = fn;
	conn->on_cut_text_context = context;
	pthread_mutex_unlock(&conn->lock);
}

bool vnc_conn_alive(struct vnc_conn *conn, struct error *err)
{
	pthread_mutex_lock(&conn->lock);
	bool alive = !conn->failed;
	if (!alive)
		error_set(err, 0, "the desktop is not connected: %s", conn->failure);
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
