/* SPDX-License-Identifier: MIT */
/* Whole reads and writes: a small file (most of /proc) in one read, and
 * writes that go on after short writes and EINTR, with a variant for
 * non-blocking descriptors that gives up when the caller says stop, so
 * that a peer that stops reading never holds a thread forever. */
#ifndef LIZARD_UTIL_IO_H
#define LIZARD_UTIL_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

/* One read of a small file (such as one of /proc) into buffer, which is
 * then NUL-terminated: its length, or -1 when it cannot be read or is
 * empty. */
ssize_t io_read_small_file(const char *path, char *buffer, size_t size);

/* Writes all of data, retrying short writes and EINTR. */
bool io_write_all(int fd, const void *data, size_t len);
/* Writes all parts in order, the same way; parts may be changed. */
bool io_writev_all(int fd, struct iovec *parts, int count);
/* The same on a non-blocking fd: waits for room until one of stop_fds (up
 * to IO_MAX_STOP_FDS; negative ones are ignored) becomes readable, then
 * fails with errno ECANCELED. */
#define IO_MAX_STOP_FDS 2
bool io_writev_all_until(int fd, struct iovec *parts, int count, const int *stop_fds,
			 int stop_count);

#endif
