/* SPDX-License-Identifier: MIT */
/* Reading and writing the files of cgroup directories, and the clock the
 * cgroup code waits on. Private to sandbox/. */
#ifndef LIZARD_SANDBOX_CGROUP_FILES_H
#define LIZARD_SANDBOX_CGROUP_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/error.h"

char *cgroup_path_join(const char *dir, const char *name);

bool cgroup_write(const char *dir, const char *file, const char *value, struct error *err);
/* Reads the whole small file as a string (at most size - 1 bytes). */
bool cgroup_read(const char *dir, const char *file, char *out, size_t size, struct error *err);
/* A file holding one number, or "max" (read as UINT64_MAX). */
bool cgroup_read_u64(const char *dir, const char *file, uint64_t *value, struct error *err);
/* The value of "key value" line key in a flat keyed file (cpu.stat, memory.events). */
bool cgroup_read_keyed(const char *dir, const char *file, const char *key, uint64_t *value,
		       struct error *err);
/* The pids in dir/cgroup.procs into a malloc'ed array (*pids, *count). */
bool cgroup_read_pids(const char *dir, pid_t **pids, size_t *count, struct error *err);

/* A pause that backs off from 1 to 16 ms without passing deadline_ms
 * (util/clock's milliseconds), for waiting on a state the kernel changes. */
void cgroup_backoff(unsigned *step, int64_t deadline_ms);


#endif
