/* SPDX-License-Identifier: MIT */
/* Reading and writing cgroup interface files. They are small, their values
 * are single lines or "key value" lines, and a failed write carries the
 * kernel's reason in errno (EBUSY, EINVAL, ...), so every error names the
 * file and keeps errno. */
#include "sandbox/cgroup_files.h"
#include "util/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

char *cgroup_path_join(const char *dir, const char *name)
{
	size_t a = strlen(dir), b = strlen(name);
	char *path = malloc(a + b + 2);
	if (!path)
		return NULL;
	memcpy(path, dir, a);
	path[a] = '/';
	memcpy(path + a + 1, name, b + 1);
	return path;
}

bool cgroup_write(const char *dir, const char *file, const char *value, struct error *err)
{
	char path[4096];
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >= sizeof(path))
		return error_set(err, ENAMETOOLONG, "cgroup path %s/%s", dir, file);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return error_set(err, errno, "cannot open %s", path);
	size_t len = strlen(value);
	ssize_t n;
	do
		n = write(fd, value, len);
	while (n < 0 && errno == EINTR);
	int saved = errno;
	close(fd);
	if (n < 0)
		return error_set(err, saved, "cannot write \"%s\" to %s", value, path);
	if ((size_t)n != len)
		return error_set(err, EIO, "short write of \"%s\" to %s", value, path);
	return true;
}

bool cgroup_read(const char *dir, const char *file, char *out, size_t size, struct error *err)
{
	char path[4096];
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >= sizeof(path))
		return error_set(err, ENAMETOOLONG, "cgroup path %s/%s", dir, file);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return error_set(err, errno, "cannot open %s", path);
	size_t used = 0;
	while (used + 1 < size) {
		ssize_t n = read(fd, out + used, size - 1 - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int saved = errno;
			close(fd);
			return error_set(err, saved, "cannot read %s", path);
		}
		if (n == 0)
			break;
		used += (size_t)n;
	}
	close(fd);
	out[used] = '\0';
	return true;
}

static bool parse_u64(const char *text, uint64_t *value)
{
	if (strncmp(text, "max", 3) == 0) {
		*value = UINT64_MAX;
		return true;
	}
	if (*text < '0' || *text > '9')
		return false;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(text, &end, 10);
	if (errno || (*end && *end != '\n' && *end != ' '))
		return false;
	*value = v;
	return true;
}

bool cgroup_read_u64(const char *dir, const char *file, uint64_t *value, struct error *err)
{
	char text[64];
	if (!cgroup_read(dir, file, text, sizeof(text), err))
		return false;
	if (!parse_u64(text, value))
		return error_set(err, EINVAL, "%s/%s holds \"%.20s\", not a number", dir, file,
				 text);
	return true;
}

bool cgroup_read_keyed(const char *dir, const char *file, const char *key, uint64_t *value,
		       struct error *err)
{
	char text[4096];
	if (!cgroup_read(dir, file, text, sizeof(text), err))
		return false;
	size_t key_len = strlen(key);
	for (const char *line = text; *line;) {
		if (strncmp(line, key, key_len) == 0 && line[key_len] == ' ' &&
		    parse_u64(line + key_len + 1, value))
			return true;
		const char *next = strchr(line, '\n');
		if (!next)
			break;
		line = next + 1;
	}
	return error_set(err, ENOENT, "%s/%s has no \"%s\" line", dir, file, key);
}

bool cgroup_read_pids(const char *dir, pid_t **pids_out, size_t *count_out, struct error *err)
{
	char path[4096];
	if ((size_t)snprintf(path, sizeof(path), "%s/cgroup.procs", dir) >= sizeof(path))
		return error_set(err, ENAMETOOLONG, "cgroup path %s/cgroup.procs", dir);
	FILE *f = fopen(path, "re");
	if (!f)
		return error_set(err, errno, "cannot open %s", path);
	pid_t *pids = NULL;
	size_t count = 0, capacity = 0;
	long long pid;
	while (fscanf(f, "%lld", &pid) == 1) {
		if (pid <= 0 || pid > INT32_MAX)
			continue;
		if (count == capacity) {
			/* The pids limit bounds this; 4M is the kernel's own ceiling. */
			size_t grown = capacity ? capacity * 2 : 64;
			pid_t *bigger = grown <= (4u << 20) ? realloc(pids, grown * sizeof(*pids))
							    : NULL;
			if (!bigger) {
				free(pids);
				fclose(f);
				return error_set(err, ENOMEM, "reading %s", path);
			}
			pids = bigger;
			capacity = grown;
		}
		pids[count++] = (pid_t)pid;
	}
	bool failed = ferror(f);
	fclose(f);
	if (failed) {
		free(pids);
		return error_set(err, EIO, "cannot read %s", path);
	}
	*pids_out = pids;
	*count_out = count;
	return true;
}

void cgroup_backoff(unsigned *step, int64_t deadline_ms)
{
	int64_t ms = (int64_t)1 << (*step < 4 ? *step : 4);
	int64_t left = deadline_ms - clock_monotonic_ms();
	if (left <= 0)
		return;
	if (ms > left)
		ms = left;
	(*step)++;
	struct timespec pause = { .tv_sec = 0, .tv_nsec = (long)ms * 1000000L };
	nanosleep(&pause, NULL);
}
