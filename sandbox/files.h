/* SPDX-License-Identifier: MIT */
/* Files in a sandbox, in its view and as its user or root: each operation
 * runs inside as a built-in program (files_inside.c), its data through
 * pipes, so no path is resolved by the daemon. */
#ifndef LIZARD_SANDBOX_FILES_H
#define LIZARD_SANDBOX_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sandbox/process.h"
#include "util/error.h"

struct sandbox;

/* The most one read or write moves, and one listing holds. */
#define SANDBOX_FILE_MAX_BYTES (16 * 1024 * 1024)
#define SANDBOX_LIST_MAX_ENTRIES 10000

/* Files, in the sandbox's view, as user. */
struct sandbox_file_data {
	char *data;
	size_t len;
	uint64_t size; /* of the whole file; unsized: offset + len */
	/* false for a file the kernel says is empty though it holds data
	 * (most of /proc and /sys): it is read to its end or to length, and
	 * more says whether it went on beyond. */
	bool sized;
	bool more;
};

bool sandbox_read_file(struct sandbox *sandbox, enum sandbox_user user, const char *path,
		       uint64_t offset, uint64_t length, struct sandbox_file_data *out,
		       struct error *err);
bool sandbox_write_file(struct sandbox *sandbox, enum sandbox_user user, const char *path,
			const void *data, size_t len, unsigned mode, struct error *err);

struct sandbox_dir_entry {
	char type; /* f d l p s c b ? */
	uint64_t size;
	int64_t mtime;
	char *name;
};

/* Entries in readdir order; free with sandbox_free_entries. */
bool sandbox_list_files(struct sandbox *sandbox, enum sandbox_user user, const char *path,
			struct sandbox_dir_entry **entries, size_t *count, bool *truncated,
			struct error *err);
void sandbox_free_entries(struct sandbox_dir_entry *entries, size_t count);

#endif
