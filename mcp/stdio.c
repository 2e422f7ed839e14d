#include "stdio.h"

#include "server.h"
#include "../util/io.h"
#include "../util/log.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct stdio_writer {
	int fd;
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
	if (!writer->broken && !io_writev_all(writer->fd, line, count)) {
		writer->broken = true;
		log_warn("cannot write to stdout: %s", strerror(errno));
	}
	pthread_mutex_unlock(&writer->lock);
}

static void handle_line(struct mcp_peer *peer, char *line, size_t len)
{
	if (len > 0 && line[len - 1] == '\r')
		len--;
	size_t start = 0;
	while (start < len && (line[start] == ' ' || line[start] == '\t'))
		start++;
	if (start == len)
		return;
	mcp_peer_handle(peer, line + start, len - start);
}

enum mcp_stdio_end mcp_stdio_serve(struct mcp_server *server, int in_fd, int out_fd, int stop_fd,
				   size_t max_message)
{
	struct stdio_writer writer = { .fd = out_fd };
	/* A screenshot reply is most of a megabyte: a larger pipe lets it go
	 * out in one write instead of sixteen wake-ups of the reader. */
	if (fcntl(out_fd, F_SETPIPE_SZ, 1024 * 1024) < 0)
		log_debug("stdout is not a pipe, or its size cannot grow");
	pthread_mutex_init(&writer.lock, NULL);
	struct mcp_peer *peer = mcp_peer_create(server, send_line, &writer);
	size_t capacity = 65536;
	char *buffer = malloc(capacity);
	enum mcp_stdio_end end = MCP_STDIO_ERROR;
	if (!peer || !buffer)
		goto out;

	size_t used = 0;
	bool discarding = false; /* inside an oversize line */
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
		if (used == capacity) {
			size_t grown_capacity = capacity * 2;
			char *grown = realloc(buffer, grown_capacity);
			if (!grown)
				break;
			buffer = grown;
			capacity = grown_capacity;
		}
		ssize_t got = read(in_fd, buffer + used, capacity - used);
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (got <= 0) {
			end = got == 0 ? MCP_STDIO_EOF : MCP_STDIO_ERROR;
			break;
		}

		size_t scan = used;
		used += (size_t)got;
		size_t line_start = 0;
		for (size_t i = scan; i < used; i++) {
			if (buffer[i] != '\n')
				continue;
			if (discarding) {
				discarding = false;
				mcp_peer_reject_oversize(peer, max_message);
			} else {
				handle_line(peer, buffer + line_start, i - line_start);
			}
			line_start = i + 1;
		}
		memmove(buffer, buffer + line_start, used - line_start);
		used -= line_start;
		/* A line that cannot fit is dropped as it streams in, so memory
		 * stays bounded by the limit. */
		if (used > max_message) {
			discarding = true;
			used = 0;
		}
	}

out:
	free(buffer);
	/* Close waits out a reply being written; later replies are dropped,
	 * so the writer can go right after. */
	mcp_peer_close(peer);
	pthread_mutex_destroy(&writer.lock);
	return end;
}
