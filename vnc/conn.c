/* SPDX-License-Identifier: MIT */
/* A connection's life, its VNC thread and the input queue. The pieces it
 * is made of have files of their own: connect.c (the socket), callbacks.c
 * (the rfbClient and what libvncclient calls back), watchdog.c (the stall
 * watchdog); they share struct vnc_conn through conn_state.h. */
#include "vnc/conn.h"

#include "vnc/callbacks.h"
#include "vnc/conn_state.h"
#include "vnc/connect.h"
#include "vnc/framebuffer.h"
#include "vnc/target.h"
#include "vnc/watchdog.h"
#include "util/clock.h"
#include "util/log.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <rfb/rfbclient.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SEND_FAILED "sending to the VNC server failed; the server closed the connection"

/* Input on its way to the server. Commands live on the heap: a caller that
 * stops waiting (deadline) or never waited (post) leaves it to the VNC
 * thread to free. */
struct vnc_command {
	struct vnc_input_event *events; /* owned copy */
	size_t count;
	char *cut_text; /* owned copy */
	size_t cut_len;
	bool done, ok;
	bool orphan; /* nobody waits: whoever finishes it frees it */
	struct vnc_command *next;
};

void vnc_conn_global_init(void)
{
	vnc_callbacks_route_library_log();
	/* A dropped server must show up as a failed write, not kill us. */
	signal(SIGPIPE, SIG_IGN);
	vnc_watchdog_global_init();
}

static void free_command(struct vnc_command *c)
{
	free(c->events);
	free(c->cut_text);
	free(c);
}

/* Marks a command finished: its waiter wakes, or it is freed when nobody
 * waits any more. */
static void finish_locked(struct vnc_command *c, bool ok)
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
	struct vnc_command *c = conn->queue_head;
	conn->queue_head = conn->queue_tail = NULL;
	conn->queued = 0;
	while (c) {
		struct vnc_command *next = c->next;
		finish_locked(c, false);
		c = next;
	}
	pthread_cond_broadcast(&conn->command_done);
}

/* The watchdog judges by these: how long the VNC thread has been inside
 * libvncclient, where a stalled peer can hold it. */
static void set_busy(struct vnc_conn *conn, enum vnc_conn_busy busy)
{
	pthread_mutex_lock(&conn->lock);
	conn->busy = busy;
	pthread_mutex_unlock(&conn->lock);
}

static bool send_events(struct vnc_conn *conn, const struct vnc_command *c)
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
	struct vnc_command *batch = conn->queue_head;
	conn->queue_head = conn->queue_tail = NULL;
	conn->queued = 0;
	pthread_mutex_unlock(&conn->lock);
	if (!batch)
		return true;

	bool ok = true;
	set_busy(conn, VNC_CONN_SENDING);
	while (batch) {
		struct vnc_command *c = batch;
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
	set_busy(conn, VNC_CONN_IDLE);
	return ok;
}

/* Why HandleRFBServerMessage gave up, from what libvncclient logged. */
static void describe_read_failure(char *out, size_t size)
{
	const char *said = vnc_callbacks_library_error();
	if (strstr(said, "timed out"))
		snprintf(out, size,
			 "the VNC server stalled in the middle of a message; dropped "
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
	vnc_watchdog_attach_thread(conn);

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
		vnc_callbacks_clear_library_error();
		set_busy(conn, VNC_CONN_READING);
		bool handled = HandleRFBServerMessage(client);
		set_busy(conn, VNC_CONN_IDLE);
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

/* Why rfbInitClient failed: the watchdog's cut, a password we lack or
 * that was refused, or what libvncclient logged last. */
static void describe_handshake_failure(struct vnc_conn *conn, const char *where, struct error *err)
{
	const char *said = vnc_callbacks_library_error();
	char cut_reason[sizeof(conn->cut_reason)];
	pthread_mutex_lock(&conn->lock);
	bool cut = conn->cut;
	snprintf(cut_reason, sizeof(cut_reason), "%s", conn->cut_reason);
	pthread_mutex_unlock(&conn->lock);
	if (cut)
		error_set(err, 0, "cannot connect to VNC server at %s: %s", where, cut_reason);
	else if (conn->password_missing)
		error_set(err, 0,
			  "VNC server at %s asks for a password; give it as "
			  "vnc://:PASSWORD@HOST:PORT or in LIZARD_VNC_PASSWORD",
			  where);
	else if (conn->password && (strstr(said, "uthentication") || strstr(said, "assword")))
		error_set(err, 0, "VNC server at %s refused the password (%s)", where, said);
	else
		error_set(err, 0, "cannot connect to VNC server at %s: %s", where,
			  said[0] ? said : "connection failed");
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
	conn->sock = vnc_connect_socket(target, deadline, abandon, &why);
	if (conn->sock < 0) {
		error_set(err, 0, "cannot connect to VNC server at %s: %s", where, why.message);
		free_conn(conn);
		return NULL;
	}
	conn->client = vnc_callbacks_make_client(conn, target);
	if (!conn->client)
		goto fail_early;
	conn->client->sock = fcntl(conn->sock, F_DUPFD_CLOEXEC, 0);
	if (conn->client->sock < 0)
		goto fail_early;

	conn->handshake_deadline_ms = deadline;
	if (!vnc_watchdog_start(conn, VNC_STALL_MS))
		goto fail_early;

	vnc_callbacks_clear_library_error();
	vnc_framebuffer_reopen(fb);
	if (!rfbInitClient(conn->client, NULL, NULL)) {
		/* rfbInitClient already freed the client (and closed its socket). */
		conn->client = NULL;
		describe_handshake_failure(conn, where, err);
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
	vnc_watchdog_stop(conn);
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
	vnc_watchdog_stop(conn);

	pthread_mutex_lock(&conn->lock);
	fail_locked(conn, "the VNC connection was closed by the bridge");
	pthread_mutex_unlock(&conn->lock);
	rfbClientCleanup(conn->client);
	free_conn(conn);
}

/* Queues c (taking it over). False with a message when it cannot be. */
static bool enqueue(struct vnc_conn *conn, struct vnc_command *c, struct error *err)
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
static bool unqueue_locked(struct vnc_conn *conn, struct vnc_command *c)
{
	struct vnc_command **link = &conn->queue_head, *prev = NULL;
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
static bool submit(struct vnc_conn *conn, struct vnc_command *c, struct error *err)
{
	if (!enqueue(conn, c, err))
		return false;
	struct timespec deadline = clock_deadline_ms(VNC_INPUT_TIMEOUT_MS);
	pthread_mutex_lock(&conn->lock);
	while (!c->done) {
		if (pthread_cond_timedwait(&conn->command_done, &conn->lock, &deadline) ==
			    ETIMEDOUT &&
		    !c->done) {
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
static struct vnc_command *input_command(const struct vnc_input_event *events, size_t count,
					 struct error *err)
{
	struct vnc_command *c = calloc(1, sizeof(*c));
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

bool vnc_conn_send_input(struct vnc_conn *conn, const struct vnc_input_event *events, size_t count,
			 struct error *err)
{
	struct vnc_command *c = input_command(events, count, err);
	return c && submit(conn, c, err);
}

bool vnc_conn_post_input(struct vnc_conn *conn, const struct vnc_input_event *events, size_t count,
			 struct error *err)
{
	struct vnc_command *c = input_command(events, count, err);
	if (!c)
		return false;
	c->orphan = true;
	return enqueue(conn, c, err);
}

static struct vnc_command *cut_text_command(const char *latin1, size_t len, struct error *err)
{
	struct vnc_command *c = calloc(1, sizeof(*c));
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

bool vnc_conn_send_cut_text(struct vnc_conn *conn, const char *latin1, size_t len,
			    struct error *err)
{
	struct vnc_command *c = cut_text_command(latin1, len, err);
	return c && submit(conn, c, err);
}

bool vnc_conn_post_cut_text(struct vnc_conn *conn, const char *latin1, size_t len,
			    struct error *err)
{
	struct vnc_command *c = cut_text_command(latin1, len, err);
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
