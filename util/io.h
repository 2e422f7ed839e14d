#ifndef LIZARD_UTIL_IO_H
#define LIZARD_UTIL_IO_H

#include <stdbool.h>
#include <stddef.h>

/* Writes all of data, retrying short writes and EINTR. */
bool io_write_all(int fd, const void *data, size_t len);

#endif
