/* SPDX-License-Identifier: MIT */
/* The error every layer reports through, in the way crun does: a call that
 * fails fills a caller-owned struct with errno and one sentence that names
 * what it was about (a path, an id, a value) and, where it helps, what
 * would work, and returns false or NULL. Callers pass it up, adding
 * context in front when that helps (error_prefix); only the caller that
 * decides what the user sees prints it: nothing below bridge/ logs a
 * failure it reports. */
#ifndef LIZARD_UTIL_ERROR_H
#define LIZARD_UTIL_ERROR_H

#include <stdbool.h>

struct error {
	int code; /* errno of the failed call, or 0 when no system call failed */
	char message[512];
};

void error_clear(struct error *err);

/* Sets the message from fmt and, when code is not 0, appends ": strerror".
 * err may be NULL. Returns false so that callers can `return error_set(...)`. */
__attribute__((format(printf, 3, 4))) bool error_set(struct error *err, int code, const char *fmt,
						     ...);

/* Puts fmt's text and ": " before the message: context on the way up. The
 * code stays. err may be NULL. Returns false. */
__attribute__((format(printf, 2, 3))) bool error_prefix(struct error *err, const char *fmt, ...);

/* Same as error_set, for a value returned as a pointer: gives NULL. */
#define error_null(err, code, ...) (error_set((err), (code), __VA_ARGS__), NULL)

#endif
