/* SPDX-License-Identifier: MIT */
/* Standard base64 (RFC 4648, with padding): screenshots and file data
 * travel as it in MCP results. Encoding writes into the caller's buffer or a
 * blob, so a screenshot's text can be shared by reference; decoding checks
 * every character and the length. */
#ifndef LIZARD_UTIL_BASE64_H
#define LIZARD_UTIL_BASE64_H

#include <stdbool.h>
#include <stddef.h>

struct blob;

/* Length of the padded base64 text for len bytes, without a NUL. */
size_t base64_encoded_len(size_t len);

/* Standard base64 with padding into out, which has room for
 * base64_encoded_len(len) characters; no NUL is added. Returns the number
 * of characters written. Thread-safe. */
size_t base64_encode_into(char *out, const unsigned char *data, size_t len);

/* The same as a new blob (NUL-terminated text), or NULL when out of
 * memory. */
struct blob *base64_encode(const unsigned char *data, size_t len);

/* Decodes standard base64 (padding optional, no whitespace) into out, which
 * has room for len / 4 * 3 + 3 bytes. Returns false on any other
 * character or a bad length. Thread-safe. */
bool base64_decode(const char *text, size_t len, unsigned char *out, size_t *out_len);

#endif
