/* SPDX-License-Identifier: MIT */
#include "util/io.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sys/uio.h>
#include <unistd.h>

ssize_t io_read_small_file(const char *path, char *buffer, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n;
	while ((n = read(fd, buffer, size - 1)) < 0 && errno == EINTR)
		;
	close(fd);
	if (n <= 0)
		return -1;
	buffer[n] = '\0';
	return n;
}

bool io_write_all(int fd, const void *data, size_t len)
{
	const char *p = data;
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

bool io_writev_all(int fd, struct iovec *parts, int count)
{
	return io_writev_all_until(fd, parts, count, NULL, 0);
}

bool io_writev_all_until(int fd, struct iovec *parts, int count, const int *stop_fds,
			 int stop_count)
{
	while (count > 0) {
		ssize_t n = writev(fd, parts, count > IOV_MAX ? IOV_MAX : count);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct pollfd fds[1 + IO_MAX_STOP_FDS] = { { .fd = fd,
								     .events = POLLOUT } };
			int n_fds = 1;
			for (int i = 0; i < stop_count && i < IO_MAX_STOP_FDS; i++)
				fds[n_fds++] = (struct pollfd){ .fd = stop_fds[i],
								.events = POLLIN };
			if (poll(fds, (nfds_t)n_fds, -1) < 0 && errno != EINTR)
				return false;
			for (int i = 1; i < n_fds; i++) {
				if (fds[i].fd >= 0 && (fds[i].revents & POLLIN)) {
					errno = ECANCELED;
					return false;
				}
			}
			continue;
		}
		if (n <= 0)
			return false;
		/* Skip what went out, then shorten the part it ended in. */
		size_t done = (size_t)n;
		while (count > 0 && done >= parts->iov_len) {
			done -= parts->iov_len;
			parts++;
			count--;
		}
		if (count > 0) {
			parts->iov_base = (char *)parts->iov_base + done;
			parts->iov_len -= done;
		}
	}
	return true;
}
