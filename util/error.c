/* SPDX-License-Identifier: MIT */
#include "util/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void error_clear(struct error *err)
{
	if (!err)
		return;
	err->code = 0;
	err->message[0] = '\0';
}

bool error_set(struct error *err, int code, const char *fmt, ...)
{
	if (!err)
		return false;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	if (code && n >= 0 && (size_t)n < sizeof(err->message))
		snprintf(err->message + n, sizeof(err->message) - (size_t)n, ": %s",
			 strerror(code));
	err->code = code;
	return false;
}

bool error_prefix(struct error *err, const char *fmt, ...)
{
	if (!err)
		return false;
	char prefix[sizeof(err->message)], message[sizeof(err->message)];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(message, err->message, sizeof(message));
	/* Cut where it must: the end of a long message matters least. */
	if (snprintf(err->message, sizeof(err->message), "%s: %s", prefix, message) >=
	    (int)sizeof(err->message))
		err->message[sizeof(err->message) - 1] = '\0';
	return false;
}
