/* UTF-8 checks for bytes that came from programs and files, before they go
 * into JSON text (which must be valid UTF-8, and which cJSON cuts at NUL). */
#ifndef LIZARD_UTIL_UTF8_H
#define LIZARD_UTIL_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* Valid UTF-8 without NUL bytes. */
bool utf8_is_text(const char *data, size_t len);
/* The length of data without an incomplete sequence at its end (at most 3
 * bytes), which the next chunk of a stream may complete. */
size_t utf8_complete_prefix(const char *data, size_t len);
/* A NUL-terminated copy with every invalid byte and every NUL replaced by
 * U+FFFD; NULL when out of memory. */
char *utf8_sanitize(const char *data, size_t len);

#endif
