/* SPDX-License-Identifier: MIT */
#include "vnc/watchdog.h"

#include "vnc/conn_state.h"
#include "util/clock.h"
#include "util/io.h"

#include <linux/sockios.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

/* How often the watchdog looks. */
#define WATCH_PERIOD_MS 200
#define KICK_PERIOD_MS 50

/* Interrupts the VNC thread's select() in libvncclient's write: on a UNIX
 * socket, shutdown() alone does not make a full socket look writable. */
#define KICK_SIGNAL (SIGRTMIN + 3)

static void on_kick(int sig)
{
	(void)sig;
}

void vnc_watchdog_global_init(void)
{
	/* No SA_RESTART: the point is that select() returns. */
	struct sigaction kick = { .sa_handler = on_kick };
	sigemptyset(&kick.sa_mask);
	sigaction(KICK_SIGNAL, &kick, NULL);
}

void vnc_watchdog_attach_thread(struct vnc_conn *conn)
{
	/* The kick must get through even if whoever made us blocks signals. */
	sigset_t kick;
	sigemptyset(&kick);
	sigaddset(&kick, KICK_SIGNAL);
	pthread_sigmask(SIG_UNBLOCK, &kick, NULL);
	pthread_mutex_lock(&conn->lock);
	conn->thread_id = gettid();
	conn->thread_self = pthread_self();
	pthread_mutex_unlock(&conn->lock);
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
		struct timespec next = clock_deadline_ms(conn->cut ? KICK_PERIOD_MS
								   : WATCH_PERIOD_MS);
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
		if (conn->busy != VNC_CONN_IDLE) {
			unread = unread_bytes(conn->sock);
			long long read_bytes = thread_read_bytes(conn->thread_id);
			bool silent = conn->busy == VNC_CONN_SENDING ||
				      (read_bytes >= 0 && read_bytes == conn->last_read_bytes);
			bool deaf = unread > 0 && unread >= conn->last_unread;
			stalled = silent && (deaf || conn->busy == VNC_CONN_READING);
			conn->last_read_bytes = read_bytes;
		}
		conn->last_unread = unread;
		if (!stalled)
			conn->stall_since_ms = 0;
		else if (conn->stall_since_ms == 0)
			conn->stall_since_ms = now;
		if (conn->stall_since_ms && now - conn->stall_since_ms >= conn->stall_limit_ms) {
			if (unread > 0)
				snprintf(
					why, sizeof(why),
					"the VNC server took none of the bridge's messages for %d s "
					"(%d bytes unread); dropped as dead",
					conn->stall_limit_ms / 1000, unread);
			else
				snprintf(
					why, sizeof(why),
					"the VNC server stopped in the middle of a message for %d s; "
					"dropped as dead",
					conn->stall_limit_ms / 1000);
			cut_locked(conn, why);
		}
	}
	pthread_mutex_unlock(&conn->lock);
	return NULL;
}

bool vnc_watchdog_start(struct vnc_conn *conn, int stall_limit_ms)
{
	conn->stall_limit_ms = stall_limit_ms;
	if (pthread_create(&conn->watchdog, NULL, watchdog_thread, conn) != 0)
		return false;
	conn->watchdog_started = true;
	return true;
}

void vnc_watchdog_stop(struct vnc_conn *conn)
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
