#include "utf8.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The length of the valid sequence at data (1..4), or 0. Rejects overlong
 * forms, surrogates and code points above U+10FFFF, as RFC 3629 says. */
static size_t sequence_length(const unsigned char *p, size_t len)
{
	unsigned char c = p[0];
	if (c < 0x80)
		return 1;
	size_t n;
	uint32_t cp, min;
	if ((c & 0xe0) == 0xc0)
		n = 2, cp = c & 0x1f, min = 0x80;
	else if ((c & 0xf0) == 0xe0)
		n = 3, cp = c & 0x0f, min = 0x800;
	else if ((c & 0xf8) == 0xf0)
		n = 4, cp = c & 0x07, min = 0x10000;
	else
		return 0;
	if (len < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

bool utf8_is_text(const char *data, size_t len)
{
	const unsigned char *p = (const unsigned char *)data;
	for (size_t i = 0; i < len;) {
		if (p[i] == 0)
			return false;
		size_t n = sequence_length(p + i, len - i);
		if (n == 0)
			return false;
		i += n;
	}
	return true;
}

size_t utf8_complete_prefix(const char *data, size_t len)
{
	const unsigned char *p = (const unsigned char *)data;
	/* Look back at most 3 bytes for the lead byte of the last sequence. */
	for (size_t back = 1; back <= 3 && back <= len; back++) {
		unsigned char c = p[len - back];
		if ((c & 0xc0) == 0x80)
			continue; /* a continuation byte: keep looking */
		size_t need = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3
				       : (c & 0xf8) == 0xf0 ? 4 : 1;
		return need > back ? len - back : len;
	}
	return len;
}

char *utf8_sanitize(const char *data, size_t len)
{
	/* Each bad byte becomes three. */
	char *out = malloc(len * 3 + 1);
	if (!out)
		return NULL;
	const unsigned char *p = (const unsigned char *)data;
	size_t o = 0;
	for (size_t i = 0; i < len;) {
		size_t n = p[i] ? sequence_length(p + i, len - i) : 0;
		if (n == 0) {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		} else {
			memcpy(out + o, p + i, n);
			o += n;
			i += n;
		}
	}
	out[o] = '\0';
	return out;
}
