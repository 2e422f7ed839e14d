/* SPDX-License-Identifier: MIT */
/* Sandbox sizes: the CPU, memory, process and disk limits a session gets, named
 * small, medium (the default) and large like the hosted sandboxes users
 * compare us with. The presets can be changed from the command line with
 * an option value parsed here, so the daemon only passes strings through. */
#ifndef LIZARD_SANDBOX_SIZE_H
#define LIZARD_SANDBOX_SIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

/* What a session may use. Every field 0 means "no limit". A cgroup
 * enforces the first three; the disk is a filesystem of that size (disk.h)
 * that holds HOME, /tmp and /workspace. */
struct sandbox_limits {
	uint32_t cpu_millis;   /* CPU time per wall-clock second, in 1/1000 CPU */
	uint64_t memory_bytes; /* memory (and swap) of all processes together */
	uint64_t pids;         /* tasks (threads count) at once */
	uint64_t disk_bytes;   /* HOME, /tmp and /workspace together */
};

/* Bounds of an accepted preset; below them a desktop cannot even start and
 * the failure would surface later and say less. */
#define SANDBOX_CPU_MILLIS_MIN 10u /* the kernel's smallest quota, 1 ms per 100 ms */
#define SANDBOX_CPU_MILLIS_MAX 1024000u
#define SANDBOX_MEMORY_MIN ((uint64_t)16 << 20)
#define SANDBOX_MEMORY_MAX ((uint64_t)1 << 50)
#define SANDBOX_PIDS_MIN 32u
#define SANDBOX_PIDS_MAX 4194304u /* the kernel's pid_max ceiling */
#define SANDBOX_PIDS_DEFAULT 4096u
/* Room for the filesystem's own metadata and a desktop's files. */
#define SANDBOX_DISK_MIN ((uint64_t)64 << 20)
#define SANDBOX_DISK_MAX ((uint64_t)16 << 40)

enum sandbox_size_index {
	SANDBOX_SIZE_SMALL,
	SANDBOX_SIZE_MEDIUM,
	SANDBOX_SIZE_LARGE,
	SANDBOX_SIZE_COUNT,
};

struct sandbox_sizes {
	struct sandbox_limits preset[SANDBOX_SIZE_COUNT];
};

/* small 2 CPUs 4 GiB 10 GiB disk, medium 4 CPUs 8 GiB 20 GiB disk, large 8
 * CPUs 16 GiB 40 GiB disk; 4096 pids each. */
void sandbox_sizes_init(struct sandbox_sizes *sizes);

/* "small", "medium", "large"; NULL for an index out of range. */
const char *sandbox_size_name(enum sandbox_size_index index);

/* Changes presets from an option value: one or more
 * NAME=CPUS:MEMORY[:PIDS[:DISK]] separated by commas, e.g.
 * "small=1:512M,large=8:16G:8192:100G". CPUS may have up to three decimals
 * (0.5); MEMORY and DISK are bytes with an optional K, M, G or T suffix
 * (powers of 1024; KiB, MiB, ... and KB, MB, ... mean the same).
 * Either every part is applied or, on an error, none is. */
bool sandbox_sizes_parse(struct sandbox_sizes *sizes, const char *option, struct error *err);

/* The limits of the named preset; NULL or "" means medium. An unknown name
 * is an error that lists the known ones. */
bool sandbox_sizes_find(const struct sandbox_sizes *sizes, const char *name,
			struct sandbox_limits *limits, struct error *err);

/* "2 CPUs, 4 GiB memory, 4096 pids, 10 GiB disk" (or "no limit" parts);
 * for messages. */
void sandbox_limits_describe(const struct sandbox_limits *limits, char *out, size_t size);

/* Parses a byte count as the preset option does ("64M", "4GiB", "1048576"). */
bool sandbox_parse_bytes(const char *text, uint64_t *bytes, struct error *err);

#endif
