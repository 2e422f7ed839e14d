#ifndef LIZARD_UTIL_IO_H
#define LIZARD_UTIL_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/uio.h>

/* Writes all of data, retrying short writes and EINTR. */
bool io_write_all(int fd, const void *data, size_t len);
/* Writes all parts in order, the same way; parts may be changed. */
bool io_writev_all(int fd, struct iovec *parts, int count);

#endif
