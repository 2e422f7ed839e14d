/* SPDX-License-Identifier: MIT */
/* The bounded sandbox log (see log.h). */
#include "sandbox/log.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHUNK (64 * 1024)
/* Per lock hold: a program that never stops writing cannot starve readers. */
#define MAX_CHUNKS_PER_DRAIN 16
#define TAIL_SCAN 4096

struct sandbox_log {
	pthread_mutex_t lock; /* file, size, total, buffer */
	int file;
	int read_fd, write_fd;
	int stop[2];
	uint64_t size, total;
	char *buffer;
	pthread_t thread;
	bool thread_started;
};

/* Keeps the newest half of the file: the end of a runaway output is what
 * explains it. */
static void drop_oldest(struct sandbox_log *log)
{
	uint64_t keep = SANDBOX_LOG_MAX_BYTES / 2;
	if (log->size <= keep)
		return;
	uint64_t from = log->size - keep;
	char block[16 * 1024];
	for (uint64_t done = 0; done < keep;) {
		size_t want = keep - done < sizeof(block) ? (size_t)(keep - done) : sizeof(block);
		ssize_t n = pread(log->file, block, want, (off_t)(from + done));
		if (n <= 0 || pwrite(log->file, block, (size_t)n, (off_t)done) != n)
			break;
		done += (uint64_t)n;
	}
	if (ftruncate(log->file, (off_t)keep) == 0)
		log->size = keep;
}

static void append(struct sandbox_log *log, const char *data, size_t len)
{
	if (log->size + len > SANDBOX_LOG_MAX_BYTES)
		drop_oldest(log);
	ssize_t n = pwrite(log->file, data, len, (off_t)log->size);
	if (n > 0)
		log->size += (uint64_t)n;
}

/* Moves what the pipe holds into the file. Called with the lock held. */
static void drain(struct sandbox_log *log)
{
	for (int i = 0; i < MAX_CHUNKS_PER_DRAIN; i++) {
		ssize_t n = read(log->read_fd, log->buffer, CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		log->total += (uint64_t)n;
		append(log, log->buffer, (size_t)n);
	}
}

static void *copy_main(void *arg)
{
	struct sandbox_log *log = arg;
	for (;;) {
		struct pollfd pfds[2] = { { .fd = log->read_fd, .events = POLLIN },
					  { .fd = log->stop[0], .events = POLLIN } };
		if (poll(pfds, 2, -1) < 0 && errno != EINTR)
			return NULL;
		pthread_mutex_lock(&log->lock);
		drain(log);
		pthread_mutex_unlock(&log->lock);
		if (pfds[1].revents)
			return NULL;
	}
}

struct sandbox_log *sandbox_log_create(const char *path, struct error *err)
{
	struct sandbox_log *log = calloc(1, sizeof(*log));
	if (!log)
		return error_null(err, 0, "out of memory");
	log->read_fd = log->write_fd = log->stop[0] = log->stop[1] = -1;
	pthread_mutex_init(&log->lock, NULL);
	int pipe_fds[2];
	if (!(log->buffer = malloc(CHUNK))) {
		error_set(err, 0, "out of memory");
		goto fail;
	}
	if ((log->file = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) <
	    0) {
		error_set(err, errno, "cannot create %s", path);
		goto fail;
	}
	if (pipe2(pipe_fds, O_CLOEXEC) != 0 || pipe2(log->stop, O_CLOEXEC) != 0) {
		error_set(err, errno, "cannot create a pipe for %s", path);
		goto fail;
	}
	log->read_fd = pipe_fds[0];
	log->write_fd = pipe_fds[1];
	fcntl(log->read_fd, F_SETFL, O_NONBLOCK);
	if (pthread_create(&log->thread, NULL, copy_main, log) != 0) {
		error_set(err, 0, "cannot start the thread that copies %s", path);
		goto fail;
	}
	log->thread_started = true;
	return log;

fail:
	sandbox_log_destroy(log);
	return NULL;
}

void sandbox_log_destroy(struct sandbox_log *log)
{
	if (!log)
		return;
	if (log->thread_started) {
		(void)!write(log->stop[1], "x", 1);
		pthread_join(log->thread, NULL);
	}
	int fds[] = { log->file, log->read_fd, log->write_fd, log->stop[0], log->stop[1] };
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	pthread_mutex_destroy(&log->lock);
	free(log->buffer);
	free(log);
}

int sandbox_log_fd(const struct sandbox_log *log)
{
	return log->write_fd;
}

uint64_t sandbox_log_position(struct sandbox_log *log)
{
	pthread_mutex_lock(&log->lock);
	drain(log);
	uint64_t total = log->total;
	pthread_mutex_unlock(&log->lock);
	return total;
}

/* The last len bytes of the file into out (len < size), NUL-terminated. */
static size_t read_end(struct sandbox_log *log, uint64_t len, char *out, size_t size)
{
	if (len > log->size)
		len = log->size;
	if (len > size - 1)
		len = size - 1;
	ssize_t n = pread(log->file, out, (size_t)len, (off_t)(log->size - len));
	out[n > 0 ? n : 0] = '\0';
	return n > 0 ? (size_t)n : 0;
}

void sandbox_log_since(struct sandbox_log *log, uint64_t from, char *out, size_t size)
{
	out[0] = '\0';
	pthread_mutex_lock(&log->lock);
	drain(log);
	if (log->total > from)
		read_end(log, log->total - from, out, size);
	pthread_mutex_unlock(&log->lock);
}

void sandbox_log_last_line(struct sandbox_log *log, char *out, size_t size)
{
	char tail[TAIL_SCAN];
	pthread_mutex_lock(&log->lock);
	drain(log);
	size_t len = read_end(log, sizeof(tail) - 1, tail, sizeof(tail));
	pthread_mutex_unlock(&log->lock);
	while (len > 0 && (tail[len - 1] == '\n' || tail[len - 1] == '\r' || tail[len - 1] == ' '))
		len--;
	size_t start = len;
	while (start > 0 && tail[start - 1] != '\n')
		start--;
	size_t n = len - start < size - 1 ? len - start : size - 1;
	memcpy(out, tail + start, n);
	out[n] = '\0';
}
