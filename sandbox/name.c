/* SPDX-License-Identifier: MIT */
#include "sandbox/name.h"

#include <string.h>

static bool name_char(char c, bool first)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
		return true;
	return !first && (c == '.' || c == '_' || c == '-');
}

bool sandbox_name_check(const char *kind, const char *name, struct error *err)
{
	if (!name || !name[0])
		return error_set(err, 0,
				 "the %s name is empty; use 1 to %d characters "
				 "of A-Z a-z 0-9 . _ -",
				 kind, SANDBOX_NAME_MAX);
	size_t len = strnlen(name, SANDBOX_NAME_MAX + 1);
	if (len > SANDBOX_NAME_MAX)
		return error_set(err, 0, "the %s name is longer than %d characters", kind,
				 SANDBOX_NAME_MAX);
	for (size_t i = 0; i < len; i++) {
		if (name_char(name[i], i == 0))
			continue;
		/* Print the offending character only when it is printable ASCII. */
		unsigned char c = (unsigned char)name[i];
		if (c >= 0x20 && c < 0x7f)
			return error_set(err, 0,
					 "%s name \"%s\": '%c' at position %zu is not "
					 "allowed; use A-Z a-z 0-9, and . _ - after the "
					 "first character",
					 kind, name, c, i + 1);
		return error_set(err, 0,
				 "%s name: byte 0x%02x at position %zu is not "
				 "allowed; use A-Z a-z 0-9, and . _ - after the first "
				 "character",
				 kind, c, i + 1);
	}
	if (strstr(name, ".."))
		return error_set(err, 0, "%s name \"%s\" contains \"..\", which is not allowed",
				 kind, name);
	return true;
}
