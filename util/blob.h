/* SPDX-License-Identifier: MIT */
/* Immutable bytes shared by reference count, so a screenshot can sit in a
 * cache and in replies still being written without being copied. */
#ifndef LIZARD_UTIL_BLOB_H
#define LIZARD_UTIL_BLOB_H

#include <stdatomic.h>
#include <stddef.h>

struct blob {
	atomic_int refs;
	size_t len;
	char data[]; /* len bytes and a NUL */
};

/* A blob of len bytes to fill, with one reference; NULL when out of memory. */
struct blob *blob_create(size_t len);
struct blob *blob_ref(struct blob *blob);
/* Drops a reference; frees on the last. NULL is ignored. */
void blob_unref(struct blob *blob);

#endif
