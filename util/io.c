#include "io.h"

#include <errno.h>
#include <limits.h>
#include <sys/uio.h>
#include <unistd.h>

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
	while (count > 0) {
		ssize_t n = writev(fd, parts, count > IOV_MAX ? IOV_MAX : count);
		if (n < 0 && errno == EINTR)
			continue;
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
