/* SPDX-License-Identifier: MIT */
#include "mcp/stdio.h"

#include "mcp/server.h"
#include "util/clock.h"
#include "util/io.h"
#include "util/log.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct stdio_writer {
	int fd;
	/* A write the client does not read ends when either becomes
	 * readable: the stop pipe, or ours once replies are abandoned. */
	int stop_fds[2];
	pthread_mutex_t lock;
	bool broken;
};

/* One message and its newline, in one system call where the pipe has room. */
static void send_line(void *context, const struct iovec *parts, int count)
{
	struct stdio_writer *writer = context;
	struct iovec line[MCP_MAX_SEND_PARTS + 1];
	if (count > MCP_MAX_SEND_PARTS) {
		log_error("a reply in %d parts is more than stdio takes", count);
		return;
	}
	memcpy(line, parts, sizeof(*parts) * (size_t)count);
	line[count++] = (struct iovec){ "\n", 1 };
	pthread_mutex_lock(&writer->lock);
	if (!writer->broken && !io_writev_all_until(writer->fd, line, count, writer->stop_fds, 2)) {
		writer->broken = true;
		log_warn("cannot write to stdout: %s",
			 errno == ECANCELED ? "the client stopped reading and the bridge is leaving"
					    : strerror(errno));
	}
	pthread_mutex_unlock(&writer->lock);
}

/* One line: the message is what comes before the newline, without a
 * carriage return before it. */
static void handle_line(struct mcp_peer *peer, char *line, size_t len, size_t max_message)
{
	if (len > 0 && line[len - 1] == '\r')
		len--;
	if (len > max_message) {
		mcp_peer_reject_oversize(peer, max_message);
		return;
	}
	size_t start = 0;
	while (start < len && (line[start] == ' ' || line[start] == '\t'))
		start++;
	if (start == len)
		return;
	mcp_peer_handle(peer, line + start, len - start);
}

static bool stop_requested(int stop_fd)
{
	struct pollfd fd = { .fd = stop_fd, .events = POLLIN };
	return stop_fd >= 0 && poll(&fd, 1, 0) > 0 && (fd.revents & POLLIN);
}

/* After EOF: every request already read gets its reply before we return.
 * Calls get MCP_STDIO_DRAIN_MS to finish; those still running are then
 * stopped and answered with an error, and after MCP_STDIO_GIVE_UP_MS more
 * we return whatever is left, so that EOF ends the bridge within 2 s
 * whatever a desktop does. A stop signal ends the wait at once. */
static enum mcp_stdio_end drain(struct mcp_peer *peer, int stop_fd)
{
	int64_t give_up_at = clock_monotonic_ms() + MCP_STDIO_DRAIN_MS;
	int64_t deadline = give_up_at + MCP_STDIO_GIVE_UP_MS;
	bool given_up = false;
	for (;;) {
		/* Short slices, so the stop pipe is looked at often. */
		if (mcp_peer_wait_idle(peer, 50))
			return MCP_STDIO_EOF;
		if (stop_requested(stop_fd))
			return MCP_STDIO_STOPPED;
		int64_t now = clock_monotonic_ms();
		if (!given_up && now >= give_up_at) {
			log_warn("stdin closed, but calls were still running after %d ms; they "
				 "are stopped and answered with an error",
				 MCP_STDIO_DRAIN_MS);
			mcp_peer_give_up(peer, "stdin was closed and the bridge is exiting; the "
					       "call was stopped before it finished");
			given_up = true;
		}
		if (now >= deadline) {
			log_warn(
				"calls still had not stopped %d ms later; their replies are dropped",
				MCP_STDIO_GIVE_UP_MS);
			return MCP_STDIO_EOF;
		}
	}
}

#define READ_CHUNK 65536

enum mcp_stdio_end mcp_stdio_serve(struct mcp_server *server, int in_fd, int out_fd, int stop_fd,
				   size_t max_message)
{
	int give_up[2];
	if (pipe2(give_up, O_CLOEXEC | O_NONBLOCK) != 0)
		return MCP_STDIO_ERROR;
	struct stdio_writer writer = { .fd = out_fd, .stop_fds = { stop_fd, give_up[0] } };
	/* A screenshot reply is most of a megabyte: a larger pipe lets it go
	 * out in one write instead of sixteen wake-ups of the reader. */
	if (fcntl(out_fd, F_SETPIPE_SZ, 1024 * 1024) < 0)
		log_debug("stdout is not a pipe, or its size cannot grow");
	/* A client that stops reading must not hold a writer (and the peer
	 * lock with it) once we leave: writes wait in poll beside the stop and
	 * give-up pipes. Only for a pipe or a socket (ours alone, unlike a
	 * terminal); the flags are put back at the end. */
	struct stat out_stat;
	int out_flags = fcntl(out_fd, F_GETFL);
	bool made_nonblocking = out_flags >= 0 && !(out_flags & O_NONBLOCK) &&
				fstat(out_fd, &out_stat) == 0 &&
				(S_ISFIFO(out_stat.st_mode) || S_ISSOCK(out_stat.st_mode)) &&
				fcntl(out_fd, F_SETFL, out_flags | O_NONBLOCK) == 0;
	pthread_mutex_init(&writer.lock, NULL);
	struct mcp_peer *peer = mcp_peer_create(server, send_line, &writer);
	size_t capacity = 2 * READ_CHUNK;
	char *buffer = malloc(capacity);
	enum mcp_stdio_end end = MCP_STDIO_ERROR;
	if (!peer || !buffer)
		goto out;

	/* buffer[0, used) is the start of the line being read; a line longer
	 * than a message and its "\r" can be is dropped as it streams in
	 * (discarding), so memory stays bounded by the limit. */
	size_t used = 0;
	bool discarding = false;
	for (;;) {
		struct pollfd fds[2] = { { .fd = in_fd, .events = POLLIN },
					 { .fd = stop_fd, .events = POLLIN } };
		int n = poll(fds, stop_fd >= 0 ? 2 : 1, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (stop_fd >= 0 && (fds[1].revents & POLLIN)) {
			end = MCP_STDIO_STOPPED;
			break;
		}
		if (capacity - used < READ_CHUNK) {
			size_t grown_capacity = capacity * 2;
			char *grown = realloc(buffer, grown_capacity);
			if (!grown)
				break;
			buffer = grown;
			capacity = grown_capacity;
		}
		ssize_t got = read(in_fd, buffer + used, READ_CHUNK);
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (got == 0) {
			/* A last message without its newline still counts. */
			if (discarding)
				mcp_peer_reject_oversize(peer, max_message);
			else if (used > 0)
				handle_line(peer, buffer, used, max_message);
			end = drain(peer, stop_fd);
			break;
		}
		if (got < 0)
			break;

		size_t scan = used;
		used += (size_t)got;
		size_t line_start = 0;
		bool stopped = false;
		for (size_t i = scan; i < used && !stopped; i++) {
			if (buffer[i] != '\n')
				continue;
			/* A chunk may hold hundreds of requests, each some work
			 * (a tools/list builds every schema): a stop signal must
			 * not wait behind them. */
			if (stop_requested(stop_fd)) {
				stopped = true;
				break;
			}
			if (discarding) {
				discarding = false;
				mcp_peer_reject_oversize(peer, max_message);
			} else {
				handle_line(peer, buffer + line_start, i - line_start, max_message);
			}
			line_start = i + 1;
		}
		if (stopped) {
			end = MCP_STDIO_STOPPED;
			break;
		}
		memmove(buffer, buffer + line_start, used - line_start);
		used -= line_start;
		if (used > max_message + 1) {
			discarding = true;
			used = 0;
		}
	}

out:
	free(buffer);
	/* Replies still being written are abandoned (after EOF the drain has
	 * waited for them already); close waits for the writer to see that,
	 * and later replies are dropped, so the writer can go right after. */
	if (write(give_up[1], "x", 1) < 0)
		log_warn("cannot wake the stdout writer: %s", strerror(errno));
	mcp_peer_close(peer);
	pthread_mutex_destroy(&writer.lock);
	if (made_nonblocking)
		fcntl(out_fd, F_SETFL, out_flags);
	close(give_up[0]);
	close(give_up[1]);
	return end;
}
