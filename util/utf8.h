/* SPDX-License-Identifier: MIT */
/* UTF-8 checks for text that crosses the bridge's edges. JSON must be UTF-8
 * (RFC 8259), so every string the bridge sends has to be: bytes from peers
 * are checked where they enter, text from elsewhere (a VNC server's reason,
 * a program's output) is repaired before it is sent, and excerpts are cut
 * between characters, never inside one. */
#ifndef LIZARD_UTIL_UTF8_H
#define LIZARD_UTIL_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Decodes one character at s: its length in bytes (1..4) with *codepoint
 * set, or 0 when s does not start with a well-formed character (overlong
 * forms, surrogates and code points over U+10FFFF are not well-formed). */
size_t utf8_decode(const char *s, size_t len, uint32_t *codepoint);

/* Whether len bytes are all well-formed UTF-8; on false, *bad_offset (when
 * not NULL) is the offset of the first byte that is not. */
bool utf8_valid(const char *s, size_t len, size_t *bad_offset);

/* A copy of len bytes with each byte that is not part of a well-formed
 * character replaced by U+FFFD, NUL-terminated; NULL when out of memory. */
char *utf8_repair(const char *s, size_t len, size_t *out_len);

/* Copies a prefix of the NUL-terminated s into out (size > 0): at most
 * size - 1 bytes, ending between characters, invalid bytes shown as '?'.
 * For quoting values in messages. Returns out. */
const char *utf8_excerpt(char *out, size_t size, const char *s);
/* The same for len bytes at s, which need no NUL. */
const char *utf8_excerpt_len(char *out, size_t size, const char *s, size_t len);

/* Well-formed UTF-8 without NUL bytes: text that survives a C string and
 * a JSON string unchanged. */
bool utf8_is_text(const char *s, size_t len);

/* The length of s without an incomplete character at its end (at most 3
 * bytes), which the next chunk of a stream may complete. */
size_t utf8_complete_prefix(const char *s, size_t len);

/* Like utf8_repair, and NUL bytes become U+FFFD too (cJSON ends strings at
 * NUL): for a program's output on its way into JSON. */
char *utf8_sanitize(const char *s, size_t len);

/* Latin-1 (what RFB cut text carries) for the len bytes of UTF-8 at s,
 * written to out, which has room for len bytes: each character beyond
 * U+00FF, and each byte that is not UTF-8, becomes '?'. Returns the bytes
 * written; *replaced counts the '?'s put in and *first_replaced (either
 * may be NULL) is the offset in s of the first, or len when none was. */
size_t utf8_to_latin1(const char *s, size_t len, char *out, size_t *replaced,
		      size_t *first_replaced);

#endif
