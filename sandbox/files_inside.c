/* SPDX-License-Identifier: MIT */
#include "sandbox/files_inside.h"

#include "sandbox/files.h"

#include "sandbox/sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail(const char *what, const char *path)
{
	fprintf(stderr, "%s %s: %s", what, path, strerror(errno));
	return 1;
}

static bool copy_all(int from, int to)
{
	char buffer[65536];
	for (;;) {
		ssize_t got = read(from, buffer, sizeof(buffer));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return got == 0;
		for (ssize_t done = 0; done < got;) {
			ssize_t put = write(to, buffer + done, (size_t)(got - done));
			if (put < 0 && errno == EINTR)
				continue;
			if (put <= 0)
				return false;
			done += put;
		}
	}
}

/* Writes up to length bytes read with pread from offset on; stops at EOF.
 * A file whose end the kernel does not report (unsized) is read in whole
 * buffers, so that the files which take only reads of a certain size (such
 * as /proc/PID/pagemap) work, and the caller is given one byte beyond
 * length when there is more. */
static int copy_range(int fd, const char *path, uint64_t offset, uint64_t length, bool unsized)
{
	char buffer[65536];
	uint64_t give = unsized ? length + 1 : length;
	while (give > 0) {
		size_t want = unsized || give > sizeof(buffer) ? sizeof(buffer) : (size_t)give;
		ssize_t got = pread(fd, buffer, want, (off_t)offset);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return fail("cannot read", path);
		if (got == 0)
			break;
		size_t put = (uint64_t)got < give ? (size_t)got : (size_t)give;
		if (fwrite(buffer, 1, put, stdout) != put)
			return 1;
		offset += (uint64_t)got;
		give -= put;
	}
	return fflush(stdout) == 0 ? 0 : 1;
}

static int read_file(const char *path, const char *offset_text, const char *length_text)
{
	uint64_t offset = strtoull(offset_text, NULL, 10);
	uint64_t length = strtoull(length_text, NULL, 10);
	/* O_NONBLOCK: a FIFO must not hang the call; it is refused below. */
	int fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return fail("cannot open", path);
	struct stat st;
	if (fstat(fd, &st) != 0)
		return fail("cannot stat", path);
	if (S_ISDIR(st.st_mode)) {
		fprintf(stderr, "%s is a directory; list_files shows what it holds", path);
		return 1;
	}
	if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, "%s is not a regular file", path);
		return 1;
	}
	if (length > SANDBOX_FILE_MAX_BYTES)
		length = SANDBOX_FILE_MAX_BYTES;
	/* Most files of /proc and /sys say 0 and hold text made as they are
	 * read: those are read to their end (or length), and the size is
	 * left to the caller, who sees what came. An empty file reads the
	 * same. */
	if (st.st_size == 0) {
		printf("?\n");
		return copy_range(fd, path, offset, length, true);
	}
	uint64_t size = (uint64_t)st.st_size;
	uint64_t available = offset < size ? size - offset : 0;
	if (length > available)
		length = available;
	printf("%" PRIu64 "\n", size);
	return copy_range(fd, path, offset, length, false);
}

/* mkdir -p of path's parent directories. */
static bool make_parents(const char *path)
{
	char *copy = strdup(path);
	if (!copy)
		return false;
	for (char *p = copy + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(copy, 0755) != 0 && errno != EEXIST) {
			fprintf(stderr, "cannot create the directory %s: %s", copy,
				strerror(errno));
			free(copy);
			return false;
		}
		*p = '/';
	}
	free(copy);
	return true;
}

static const char *kind_of(mode_t mode)
{
	return S_ISDIR(mode)    ? "a directory"
	       : S_ISFIFO(mode) ? "a FIFO (named pipe)"
	       : S_ISSOCK(mode) ? "a socket"
	       : S_ISCHR(mode)  ? "a character device"
	       : S_ISBLK(mode)  ? "a block device"
				: "not a regular file";
}

/* Opens path to be written: a new file, or an existing regular one. A
 * program in the sandbox may have put a FIFO or a device where an agent
 * writes; opening either could block or act, so what is there is looked
 * at first (O_PATH opens nothing), and the file opened to write, without
 * blocking, must be that same file. */
static int open_for_writing(const char *path, mode_t mode)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		int probe = open(path, O_PATH | O_CLOEXEC);
		if (probe < 0 && errno == ENOENT) {
			int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY | O_CLOEXEC,
				      mode);
			if (fd >= 0)
				return fd;
			if (errno == EEXIST)
				continue; /* made meanwhile: look again */
			fail("cannot create", path);
			return -1;
		}
		if (probe < 0) {
			fail("cannot open for writing", path);
			return -1;
		}
		struct stat first, opened;
		bool regular = fstat(probe, &first) == 0 && S_ISREG(first.st_mode);
		close(probe);
		if (!regular) {
			fprintf(stderr, "%s is %s; write_file writes regular files only", path,
				kind_of(first.st_mode));
			return -1;
		}
		int fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd < 0) {
			fail("cannot open for writing", path);
			return -1;
		}
		if (fstat(fd, &opened) != 0 || opened.st_dev != first.st_dev ||
		    opened.st_ino != first.st_ino) {
			close(fd);
			fprintf(stderr, "%s was replaced while it was being opened", path);
			return -1;
		}
		if (fcntl(fd, F_SETFL, 0) != 0 || ftruncate(fd, 0) != 0) {
			fail("cannot truncate", path);
			close(fd);
			return -1;
		}
		return fd;
	}
	fprintf(stderr, "%s keeps changing while it is being opened", path);
	return -1;
}

static int write_file(const char *path, const char *mode_text)
{
	mode_t mode = (mode_t)strtoul(mode_text, NULL, 8) & 07777;
	if (!make_parents(path))
		return 1;
	int fd = open_for_writing(path, mode);
	if (fd < 0)
		return 1;
	/* The mode asked for, not what the umask leaves of it. */
	if (fchmod(fd, mode) != 0)
		return fail("cannot set the mode of", path);
	if (!copy_all(STDIN_FILENO, fd))
		return fail("cannot write", path);
	if (close(fd) != 0)
		return fail("cannot write", path);
	return 0;
}

static char type_letter(mode_t mode)
{
	return S_ISREG(mode)    ? 'f'
	       : S_ISDIR(mode)  ? 'd'
	       : S_ISLNK(mode)  ? 'l'
	       : S_ISFIFO(mode) ? 'p'
	       : S_ISSOCK(mode) ? 's'
	       : S_ISCHR(mode)  ? 'c'
	       : S_ISBLK(mode)  ? 'b'
				: '?';
}

static int list_files(const char *path)
{
	DIR *dir = opendir(path);
	if (!dir)
		return fail("cannot list", path);
	int count = 0;
	struct dirent *entry;
	while ((entry = readdir(dir))) {
		if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
			continue;
		if (++count > SANDBOX_LIST_MAX_ENTRIES)
			break;
		struct stat st;
		if (fstatat(dirfd(dir), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue; /* gone since readdir */
		printf("%c %" PRIu64 " %" PRId64 " %s", type_letter(st.st_mode),
		       (uint64_t)st.st_size, (int64_t)st.st_mtime, entry->d_name);
		putchar('\0');
	}
	closedir(dir);
	return fflush(stdout) == 0 ? 0 : 1;
}

int sandbox_files_inside_run(char **argv)
{
	int argc = 0;
	while (argv[argc])
		argc++;
	if (strcmp(argv[0], "@read") == 0 && argc == 4)
		return read_file(argv[1], argv[2], argv[3]);
	if (strcmp(argv[0], "@write") == 0 && argc == 3)
		return write_file(argv[1], argv[2]);
	if (strcmp(argv[0], "@list") == 0 && argc == 2)
		return list_files(argv[1]);
	fprintf(stderr, "unknown file operation %s", argv[0]);
	return 1;
}
