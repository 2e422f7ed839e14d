/* The error every sandbox_ function reports through, in the way crun does:
 * the failing call fills a caller-owned struct with errno and one sentence
 * that names the path or id it was about, and returns false or NULL. Nothing
 * in sandbox/ prints; the caller decides what the user sees. */
#ifndef LIZARD_SANDBOX_ERROR_H
#define LIZARD_SANDBOX_ERROR_H

#include <stdbool.h>

struct sandbox_error {
	int code; /* errno of the failed call, or 0 when no system call failed */
	char message[512];
};

void sandbox_error_clear(struct sandbox_error *err);

/* Sets the message from fmt and, when code is not 0, appends ": strerror".
 * err may be NULL. Returns false so that callers can `return sandbox_error_set(...)`. */
__attribute__((format(printf, 3, 4)))
bool sandbox_error_set(struct sandbox_error *err, int code, const char *fmt, ...);

/* Same, for a value returned as a pointer: returns NULL. */
#define sandbox_error_null(err, code, ...) (sandbox_error_set((err), (code), __VA_ARGS__), NULL)

/* Checks a name used as a directory name (volumes, cgroups): 1 to 64 of
 * [A-Za-z0-9._-], starting with a letter or digit, and without "..", so it can never be "..",
 * hidden, or contain a '/'. kind names the thing in the message ("volume"). */
bool sandbox_name_check(const char *kind, const char *name, struct sandbox_error *err);

#define SANDBOX_NAME_MAX 64

#endif
