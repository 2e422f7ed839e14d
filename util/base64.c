#include "base64.h"

#include <stdint.h>
#include <stdlib.h>

char *base64_encode(const unsigned char *data, size_t len)
{
	static const char alphabet[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	if (len > (SIZE_MAX - 1) / 4 * 3 - 3)
		return NULL;
	size_t out_len = (len + 2) / 3 * 4;
	char *out = malloc(out_len + 1);
	if (!out)
		return NULL;

	char *p = out;
	size_t i = 0;
	for (; i + 3 <= len; i += 3) {
		uint32_t v = (uint32_t)data[i] << 16 | (uint32_t)data[i + 1] << 8 | data[i + 2];
		*p++ = alphabet[v >> 18];
		*p++ = alphabet[(v >> 12) & 63];
		*p++ = alphabet[(v >> 6) & 63];
		*p++ = alphabet[v & 63];
	}
	if (i < len) {
		uint32_t v = (uint32_t)data[i] << 16;
		if (i + 1 < len)
			v |= (uint32_t)data[i + 1] << 8;
		*p++ = alphabet[v >> 18];
		*p++ = alphabet[(v >> 12) & 63];
		*p++ = i + 1 < len ? alphabet[(v >> 6) & 63] : '=';
		*p++ = '=';
	}
	*p = '\0';
	return out;
}
