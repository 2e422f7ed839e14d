/* SPDX-License-Identifier: MIT */
/* The copies a writable root's /etc is made of (sandbox/root_copy.h):
 * what others may read and nothing else, one copy while the directory is
 * unchanged, and old copies gone once nobody holds them. */
#include "test.h"

#include "sandbox/root_copy.h"
#include "sandbox/tree.h"
#include "util/error.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

static char host[PATH_MAX], daemon_dir[PATH_MAX];

static void put(const char *name, const char *text, mode_t mode)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/%s", host, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
	if (fd >= 0) {
		fchmod(fd, mode);
		close(fd);
	}
}

static void dir(const char *name, mode_t mode)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/%s", host, name);
	mkdir(path, mode);
	chmod(path, mode);
}

static bool exists(const char *copy, const char *name, struct stat *st)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/%s", copy, name);
	return lstat(path, st) == 0;
}

static void fresh_dirs(void)
{
	struct error ignored;
	if (host[0])
		sandbox_tree_remove(host, &ignored);
	if (daemon_dir[0])
		sandbox_tree_remove(daemon_dir, &ignored);
	snprintf(host, sizeof(host), "/tmp/lizard-copy-host-XXXXXX");
	snprintf(daemon_dir, sizeof(daemon_dir), "/tmp/lizard-copy-daemon-XXXXXX");
	if (!mkdtemp(host) || !mkdtemp(daemon_dir))
		fprintf(stderr, "cannot make temporary directories: %s\n", strerror(errno));
	chmod(host, 0755);
}

static void copies_only_what_others_may_read(void)
{
	fresh_dirs();
	put("public", "for all\n", 0644);
	put("secret", "root only\n", 0600);
	dir("locked", 0700);
	put("locked/inside", "readable, behind a locked door\n", 0644);
	dir("open", 0755);
	put("open/deep", "deep\n", 0640 | 04);
	char path[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/link", host);
	ASSERT(symlink("/etc/shadow", path) == 0);
	snprintf(path, sizeof(path), "%s/fifo", host);
	ASSERT(mkfifo(path, 0644) == 0);

	char copy[400];
	struct error err;
	ASSERT(sandbox_root_copy_take(daemon_dir, host, copy, sizeof(copy), &err));
	struct stat st;
	ASSERT(exists(copy, "public", &st));
	ASSERT_EQ(st.st_mode & 07777, 0644);
	ASSERT_EQ(st.st_size, strlen("for all\n"));
	ASSERT(!exists(copy, "secret", &st));
	ASSERT(!exists(copy, "locked", &st));
	ASSERT(exists(copy, "open/deep", &st));
	ASSERT_EQ(st.st_mode & 07777, 0644);
	/* A link is copied as a link, never followed. */
	ASSERT(exists(copy, "link", &st));
	ASSERT(S_ISLNK(st.st_mode));
	char target[64] = "";
	snprintf(path, sizeof(path), "%s/link", copy);
	ASSERT(readlink(path, target, sizeof(target) - 1) > 0);
	ASSERT_STR_EQ(target, "/etc/shadow");
	ASSERT(!exists(copy, "fifo", &st));
	ASSERT(exists(copy, "", &st));
	ASSERT_EQ(st.st_mode & 07777, 0755);
	sandbox_root_copy_release(copy);
}

static void one_copy_until_the_directory_changes(void)
{
	fresh_dirs();
	put("hosts", "127.0.0.1 localhost\n", 0644);
	char first[400], again[400], changed[400];
	struct error err;
	ASSERT(sandbox_root_copy_take(daemon_dir, host, first, sizeof(first), &err));
	ASSERT(sandbox_root_copy_take(daemon_dir, host, again, sizeof(again), &err));
	ASSERT_STR_EQ(first, again);
	/* A key made later is in no copy; a public file is in the next. */
	put("key", "made later\n", 0600);
	put("motd", "made later\n", 0644);
	ASSERT(sandbox_root_copy_take(daemon_dir, host, changed, sizeof(changed), &err));
	ASSERT(strcmp(first, changed) != 0);
	struct stat st;
	ASSERT(!exists(first, "motd", &st));
	ASSERT(exists(changed, "motd", &st));
	ASSERT(!exists(changed, "key", &st));
	/* The old copy stays while one session holds it, then goes. */
	sandbox_root_copy_release(first);
	ASSERT(exists(first, "hosts", &st));
	sandbox_root_copy_release(again);
	ASSERT(!exists(first, "", &st));
	/* The newest stays for the next session when nobody holds it. */
	sandbox_root_copy_release(changed);
	ASSERT(exists(changed, "motd", &st));
}

/* Watched, not walked, between changes: a change deep below, to a file's
 * bytes or its mode, still makes the next take copy again. */
static void a_change_deep_below_is_seen(void)
{
	fresh_dirs();
	dir("a", 0755);
	dir("a/b", 0755);
	put("a/b/conf", "one\n", 0644);
	char first[400], second[400], third[400], fourth[400];
	struct error err;
	ASSERT(sandbox_root_copy_take(daemon_dir, host, first, sizeof(first), &err));
	put("a/b/conf", "two\n", 0644); /* same size: the watch sees the write */
	ASSERT(sandbox_root_copy_take(daemon_dir, host, second, sizeof(second), &err));
	ASSERT(strcmp(first, second) != 0);
	char path[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/a/b/conf", host);
	ASSERT_EQ(chmod(path, 0600), 0);
	ASSERT(sandbox_root_copy_take(daemon_dir, host, third, sizeof(third), &err));
	ASSERT(strcmp(second, third) != 0);
	struct stat st;
	ASSERT(exists(second, "a/b/conf", &st));
	ASSERT(!exists(third, "a/b/conf", &st));
	/* Nothing changed: the same copy, without a walk. */
	ASSERT(sandbox_root_copy_take(daemon_dir, host, fourth, sizeof(fourth), &err));
	ASSERT_STR_EQ(third, fourth);
	sandbox_root_copy_release(first);
	sandbox_root_copy_release(second);
	sandbox_root_copy_release(third);
	sandbox_root_copy_release(fourth);
}

/* From tmpfs to the disk: copy_file_range refuses the pair, and the copy
 * goes through a buffer. */
static void copies_across_file_systems(void)
{
	fresh_dirs();
	char shm[PATH_MAX];
	snprintf(shm, sizeof(shm), "/dev/shm/lizard-copy-XXXXXX");
	struct stat st;
	if (stat("/dev/shm", &st) != 0 || !mkdtemp(shm))
		SKIP("no /dev/shm to copy from");
	struct error ignored;
	sandbox_tree_remove(host, &ignored);
	snprintf(host, sizeof(host), "%s", shm);
	chmod(host, 0755);
	char big[200000];
	for (size_t i = 0; i < sizeof(big) - 1; i++)
		big[i] = (char)('a' + i % 26);
	big[sizeof(big) - 1] = '\0';
	put("big", big, 0644);
	char copy[400];
	struct error err;
	ASSERT(sandbox_root_copy_take(daemon_dir, host, copy, sizeof(copy), &err));
	ASSERT(exists(copy, "big", &st));
	ASSERT_EQ(st.st_size, sizeof(big) - 1);
	char path[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/big", copy);
	FILE *f = fopen(path, "re");
	static char back[sizeof(big)];
	size_t n = f ? fread(back, 1, sizeof(back) - 1, f) : 0;
	if (f)
		fclose(f);
	ASSERT_EQ(n, sizeof(big) - 1);
	ASSERT(memcmp(back, big, n) == 0);
	sandbox_root_copy_release(copy);
}

static void a_missing_directory_is_an_error(void)
{
	fresh_dirs();
	char missing[PATH_MAX + 16], copy[400];
	snprintf(missing, sizeof(missing), "%s/none", host);
	struct error err;
	ASSERT(!sandbox_root_copy_take(daemon_dir, missing, copy, sizeof(copy), &err));
	ASSERT_CONTAINS(err.message, "cannot open");
	ASSERT_CONTAINS(err.message, "/none");
}

int main(void)
{
	RUN_TEST(copies_only_what_others_may_read);
	RUN_TEST(one_copy_until_the_directory_changes);
	RUN_TEST(a_change_deep_below_is_seen);
	RUN_TEST(copies_across_file_systems);
	RUN_TEST(a_missing_directory_is_an_error);
	struct error ignored;
	sandbox_tree_remove(host, &ignored);
	sandbox_tree_remove(daemon_dir, &ignored);
	TEST_EXIT();
}
