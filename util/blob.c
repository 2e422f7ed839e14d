/* SPDX-License-Identifier: MIT */
#include "util/blob.h"

#include <stdint.h>
#include <stdlib.h>

struct blob *blob_create(size_t len)
{
	if (len > SIZE_MAX - sizeof(struct blob) - 1)
		return NULL;
	struct blob *blob = malloc(sizeof(*blob) + len + 1);
	if (!blob)
		return NULL;
	atomic_init(&blob->refs, 1);
	blob->len = len;
	blob->data[len] = '\0';
	return blob;
}

struct blob *blob_ref(struct blob *blob)
{
	atomic_fetch_add_explicit(&blob->refs, 1, memory_order_relaxed);
	return blob;
}

void blob_unref(struct blob *blob)
{
	if (blob && atomic_fetch_sub_explicit(&blob->refs, 1, memory_order_acq_rel) == 1)
		free(blob);
}
