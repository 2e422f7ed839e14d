/* SPDX-License-Identifier: MIT */
#include "util/utf8.h"

#include <stdlib.h>
#include <string.h>

size_t utf8_decode(const char *s, size_t len, uint32_t *codepoint)
{
	const unsigned char *u = (const unsigned char *)s;
	if (len == 0)
		return 0;
	if (u[0] < 0x80) {
		*codepoint = u[0];
		return 1;
	}
	size_t need;
	uint32_t cp, min;
	if ((u[0] & 0xe0) == 0xc0) {
		need = 2, cp = u[0] & 0x1f, min = 0x80;
	} else if ((u[0] & 0xf0) == 0xe0) {
		need = 3, cp = u[0] & 0x0f, min = 0x800;
	} else if ((u[0] & 0xf8) == 0xf0) {
		need = 4, cp = u[0] & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (len < need)
		return 0;
	for (size_t i = 1; i < need; i++) {
		if ((u[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (u[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	*codepoint = cp;
	return need;
}

bool utf8_valid(const char *s, size_t len, size_t *bad_offset)
{
	size_t i = 0;
	while (i < len) {
		/* Messages are mostly ASCII: skip it a byte at a time without
		 * decoding. */
		if ((unsigned char)s[i] < 0x80) {
			i++;
			continue;
		}
		uint32_t cp;
		size_t n = utf8_decode(s + i, len - i, &cp);
		if (n == 0) {
			if (bad_offset)
				*bad_offset = i;
			return false;
		}
		i += n;
	}
	return true;
}

char *utf8_repair(const char *s, size_t len, size_t *out_len)
{
	/* Each bad byte grows to the three bytes of U+FFFD at most. */
	if (len > (SIZE_MAX - 1) / 3)
		return NULL;
	char *out = malloc(len * 3 + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < len;) {
		uint32_t cp;
		size_t n = utf8_decode(s + i, len - i, &cp);
		if (n == 0) {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		} else {
			memcpy(out + o, s + i, n);
			o += n;
			i += n;
		}
	}
	out[o] = '\0';
	if (out_len)
		*out_len = o;
	return out;
}

const char *utf8_excerpt(char *out, size_t size, const char *s)
{
	return utf8_excerpt_len(out, size, s, strlen(s));
}

const char *utf8_excerpt_len(char *out, size_t size, const char *s, size_t len)
{
	size_t o = 0;
	for (size_t i = 0; i < len;) {
		uint32_t cp;
		size_t n = utf8_decode(s + i, len - i, &cp);
		const char *piece = n ? s + i : "?";
		size_t piece_len = n ? n : 1;
		if (o + piece_len > size - 1)
			break;
		memcpy(out + o, piece, piece_len);
		o += piece_len;
		i += n ? n : 1;
	}
	out[o] = '\0';
	return out;
}

bool utf8_is_text(const char *s, size_t len)
{
	return memchr(s, '\0', len) == NULL && utf8_valid(s, len, NULL);
}

size_t utf8_complete_prefix(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	/* Look back at most 3 bytes for the lead byte of the last character. */
	for (size_t back = 1; back <= 3 && back <= len; back++) {
		unsigned char c = p[len - back];
		if ((c & 0xc0) == 0x80)
			continue; /* a continuation byte: keep looking */
		size_t need = c < 0x80             ? 1
			      : (c & 0xe0) == 0xc0 ? 2
			      : (c & 0xf0) == 0xe0 ? 3
			      : (c & 0xf8) == 0xf0 ? 4
						   : 1;
		return need > back ? len - back : len;
	}
	return len;
}

char *utf8_sanitize(const char *s, size_t len)
{
	size_t out_len;
	char *repaired = utf8_repair(s, len, &out_len);
	if (!repaired || !memchr(repaired, '\0', out_len))
		return repaired;
	/* Each NUL becomes three bytes. */
	size_t nuls = 0;
	for (size_t i = 0; i < out_len; i++)
		nuls += repaired[i] == '\0';
	char *out = malloc(out_len + 2 * nuls + 1);
	if (out) {
		size_t o = 0;
		for (size_t i = 0; i < out_len; i++) {
			if (repaired[i] == '\0') {
				memcpy(out + o, "\xef\xbf\xbd", 3);
				o += 3;
			} else {
				out[o++] = repaired[i];
			}
		}
		out[o] = '\0';
	}
	free(repaired);
	return out;
}

size_t utf8_to_latin1(const char *s, size_t len, char *out, size_t *replaced,
		      size_t *first_replaced)
{
	size_t o = 0, count = 0, first = len;
	for (size_t i = 0; i < len;) {
		uint32_t cp;
		size_t n = utf8_decode(s + i, len - i, &cp);
		if (n == 0 || cp > 0xff) {
			if (count++ == 0)
				first = i;
			out[o++] = '?';
			i += n ? n : 1;
			continue;
		}
		out[o++] = (char)cp;
		i += n;
	}
	if (replaced)
		*replaced = count;
	if (first_replaced)
		*first_replaced = first;
	return o;
}
