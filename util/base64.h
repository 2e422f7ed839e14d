#ifndef LIZARD_UTIL_BASE64_H
#define LIZARD_UTIL_BASE64_H

#include <stddef.h>

/* Standard base64 with padding. Returns a NUL-terminated heap string the
 * caller frees, or NULL when out of memory. */
char *base64_encode(const unsigned char *data, size_t len);

#endif
