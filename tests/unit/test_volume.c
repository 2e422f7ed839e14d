/* SPDX-License-Identifier: MIT */
/* Volumes on a real temporary data directory; "another daemon" is a real
 * forked process holding its own lock, as a second lizard-bridge would. */
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/tree.h"
#include "sandbox/volume.h"

static char data_dir[64];

static void make_data_dir(void)
{
	snprintf(data_dir, sizeof(data_dir), "/tmp/lizard-volumes-XXXXXX");
	if (!mkdtemp(data_dir)) {
		perror("mkdtemp");
		exit(1);
	}
}

static bool write_file(const char *path, size_t bytes)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return false;
	char block[4096];
	memset(block, 'x', sizeof(block));
	bool ok = true;
	for (size_t done = 0; ok && done < bytes; done += sizeof(block))
		ok = write(fd, block, sizeof(block)) == (ssize_t)sizeof(block);
	return close(fd) == 0 && ok;
}

static bool exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

static void data_dir_follows_xdg_then_home(void)
{
	char *saved_xdg = getenv("XDG_DATA_HOME") ? strdup(getenv("XDG_DATA_HOME")) : NULL;
	char *saved_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
	char dir[256];
	struct error err;
	setenv("XDG_DATA_HOME", "/srv/data", 1);
	ASSERT(sandbox_data_dir_default(dir, sizeof(dir), &err));
	ASSERT_STR_EQ(dir, "/srv/data/lizard-bridge");
	setenv("XDG_DATA_HOME", "relative/ignored", 1);
	setenv("HOME", "/home/agent", 1);
	ASSERT(sandbox_data_dir_default(dir, sizeof(dir), &err));
	ASSERT_STR_EQ(dir, "/home/agent/.local/share/lizard-bridge");
	unsetenv("XDG_DATA_HOME");
	ASSERT(sandbox_data_dir_default(dir, sizeof(dir), &err));
	ASSERT_STR_EQ(dir, "/home/agent/.local/share/lizard-bridge");
	ASSERT(!sandbox_data_dir_default(dir, 10, &err));
	if (saved_xdg)
		setenv("XDG_DATA_HOME", saved_xdg, 1);
	if (saved_home)
		setenv("HOME", saved_home, 1);
	free(saved_xdg);
	free(saved_home);
}

static void created_volume_is_listed_with_its_size(void)
{
	struct error err;
	struct sandbox_volumes *v = sandbox_volumes_open(data_dir, &err);
	ASSERT(v != NULL);
	ASSERT(sandbox_volume_create(v, "beta", 0, &err));
	ASSERT(sandbox_volume_create(v, "alpha", 0, &err));
	ASSERT(!sandbox_volume_create(v, "alpha", 0, &err));
	ASSERT_CONTAINS(err.message, "volume alpha already exists");
	ASSERT(!sandbox_volume_create(v, "../escape", 0, &err));
	ASSERT_CONTAINS(err.message, "'.' at position 1");
	char path[512];
	snprintf(path, sizeof(path), "%s/volumes/alpha/big", data_dir);
	ASSERT(write_file(path, 1 << 20));

	struct sandbox_volume_info *list;
	size_t count;
	ASSERT(sandbox_volume_list(v, &list, &count, &err));
	ASSERT_EQ(count, 2);
	ASSERT_STR_EQ(list[0].name, "alpha");
	ASSERT_STR_EQ(list[1].name, "beta");
	ASSERT(list[0].bytes >= 1 << 20);
	ASSERT(list[0].bytes_complete);
	ASSERT(list[1].bytes < 1 << 20);
	ASSERT_STR_EQ(list[0].session, "");
	free(list);
	ASSERT(sandbox_volume_delete(v, "alpha", &err));
	ASSERT(sandbox_volume_delete(v, "beta", &err));
	ASSERT(!sandbox_volume_delete(v, "beta", &err));
	ASSERT_CONTAINS(err.message, "there is no volume beta");
	sandbox_volumes_close(v);
}

static void one_session_at_a_time_and_no_delete_while_mounted(void)
{
	struct error err;
	struct sandbox_volumes *v = sandbox_volumes_open(data_dir, &err);
	ASSERT(v != NULL);
	ASSERT(sandbox_volume_create(v, "work", 0, &err));
	char path[512], expected[512];
	bool image = true;
	snprintf(expected, sizeof(expected), "%s/volumes/work", data_dir);
	ASSERT(sandbox_volume_acquire(v, "work", "s-0001", path, sizeof(path), &image, &err));
	ASSERT(!image);
	ASSERT_STR_EQ(path, expected);

	ASSERT(!sandbox_volume_acquire(v, "work", "s-0002", path, sizeof(path), &image, &err));
	ASSERT_CONTAINS(err.message, "volume work is already mounted by session s-0001");
	ASSERT(!sandbox_volume_delete(v, "work", &err));
	ASSERT_CONTAINS(err.message, "volume work is in use by session s-0001");
	ASSERT(exists(expected));

	struct sandbox_volume_info *list;
	size_t count;
	ASSERT(sandbox_volume_list(v, &list, &count, &err));
	ASSERT_EQ(count, 1);
	ASSERT_STR_EQ(list[0].session, "s-0001");
	ASSERT(!list[0].other_daemon);
	free(list);

	ASSERT(!sandbox_volume_release(v, "work", "s-0002", &err));
	ASSERT_CONTAINS(err.message, "mounted by session s-0001, not s-0002");
	ASSERT(sandbox_volume_release(v, "work", "s-0001", &err));
	ASSERT(sandbox_volume_acquire(v, "work", "s-0002", path, sizeof(path), &image, &err));
	ASSERT(sandbox_volume_release(v, "work", "s-0002", &err));
	ASSERT(!sandbox_volume_release(v, "work", "s-0002", &err));
	ASSERT_CONTAINS(err.message, "volume work is not mounted");
	ASSERT(sandbox_volume_delete(v, "work", &err));
	ASSERT(!exists(expected));
	ASSERT(!sandbox_volume_acquire(v, "work", "s-0003", path, sizeof(path), &image, &err));
	ASSERT_CONTAINS(err.message, "there is no volume work; create it with create_volume");
	sandbox_volumes_close(v);
}

static void files_outlive_the_session_and_the_daemon(void)
{
	struct error err;
	struct sandbox_volumes *v = sandbox_volumes_open(data_dir, &err);
	ASSERT(v != NULL);
	ASSERT(sandbox_volume_create(v, "keep", 0, &err));
	char path[512], file[600];
	bool image = true;
	ASSERT(sandbox_volume_acquire(v, "keep", "s-1", path, sizeof(path), &image, &err));
	snprintf(file, sizeof(file), "%s/notes.txt", path);
	ASSERT(write_file(file, 4096));
	ASSERT(sandbox_volume_release(v, "keep", "s-1", &err));
	sandbox_volumes_close(v); /* "daemon restart" */
	v = sandbox_volumes_open(data_dir, &err);
	ASSERT(v != NULL);
	ASSERT(sandbox_volume_acquire(v, "keep", "s-2", path, sizeof(path), &image, &err));
	ASSERT(exists(file));
	sandbox_volumes_close(v); /* close releases what is still held */
	v = sandbox_volumes_open(data_dir, &err);
	ASSERT(sandbox_volume_delete(v, "keep", &err));
	sandbox_volumes_close(v);
}

/* A child process plays the second daemon: it mounts the volume and waits. */
static pid_t other_daemon_holds(const char *name, const char *session, int *release_fd)
{
	int ready[2], release[2];
	if (pipe(ready) != 0 || pipe(release) != 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		close(ready[0]);
		close(release[1]);
		struct error err;
		struct sandbox_volumes *v = sandbox_volumes_open(data_dir, &err);
		char path[512], ok = 0;
		bool image = true;
		if (v && sandbox_volume_acquire(v, name, session, path, sizeof(path), &image, &err))
			ok = 1;
		if (write(ready[1], &ok, 1) != 1)
			_exit(2);
		char c;
		while (read(release[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0); /* without releasing: the kernel drops the lock */
	}
	close(ready[1]);
	close(release[0]);
	char ok = 0;
	if (pid < 0 || read(ready[0], &ok, 1) != 1 || !ok) {
		close(ready[0]);
		close(release[1]);
		if (pid > 0)
			waitpid(pid, NULL, 0);
		return -1;
	}
	close(ready[0]);
	*release_fd = release[1];
	return pid;
}

static void another_daemon_on_the_same_data_dir_is_refused(void)
{
	struct error err;
	struct sandbox_volumes *v = sandbox_volumes_open(data_dir, &err);
	ASSERT(v != NULL);
	ASSERT(sandbox_volume_create(v, "shared", 0, &err));
	int release_fd;
	pid_t other = other_daemon_holds("shared", "s-other", &release_fd);
	ASSERT(other > 0);

	char path[512];
	bool image = true;
	bool acquired = sandbox_volume_acquire(v, "shared", "s-mine", path, sizeof(path), &image,
					       &err);
	bool deleted = !acquired && sandbox_volume_delete(v, "shared", &err);
	struct sandbox_volume_info *list = NULL;
	size_t count = 0;
	bool listed = sandbox_volume_list(v, &list, &count, &err);

	close(release_fd);
	int status;
	waitpid(other, &status, 0);
	ASSERT(!acquired);
	ASSERT(!deleted);
	ASSERT_CONTAINS(err.message, "in use by session s-other of another lizard-bridge");
	ASSERT(listed && count == 1);
	ASSERT_STR_EQ(list[0].session, "s-other");
	ASSERT(list[0].other_daemon);
	free(list);

	/* The other daemon is gone (it never released): its lock went with it. */
	ASSERT(sandbox_volume_acquire(v, "shared", "s-mine", path, sizeof(path), &image, &err));
	ASSERT(sandbox_volume_release(v, "shared", "s-mine", &err));
	ASSERT(sandbox_volume_list(v, &list, &count, &err));
	ASSERT_STR_EQ(list[0].session, "");
	free(list);
	ASSERT(sandbox_volume_delete(v, "shared", &err));
	sandbox_volumes_close(v);
}

static void delete_does_not_follow_links_out_of_the_volume(void)
{
	struct error err;
	struct sandbox_volumes *v = sandbox_volumes_open(data_dir, &err);
	ASSERT(v != NULL);
	ASSERT(sandbox_volume_create(v, "links", 0, &err));
	char outside[512], victim[600], link[512], sub[512], locked[600];
	snprintf(outside, sizeof(outside), "%s/outside", data_dir);
	ASSERT(mkdir(outside, 0700) == 0);
	snprintf(victim, sizeof(victim), "%s/precious", outside);
	ASSERT(write_file(victim, 10));
	snprintf(link, sizeof(link), "%s/volumes/links/to-outside", data_dir);
	ASSERT(symlink(outside, link) == 0);
	/* A directory a sandbox made unreadable, with a file in it. */
	snprintf(sub, sizeof(sub), "%s/volumes/links/closed", data_dir);
	ASSERT(mkdir(sub, 0700) == 0);
	snprintf(locked, sizeof(locked), "%s/file", sub);
	ASSERT(write_file(locked, 10));
	ASSERT(chmod(sub, 0) == 0);

	struct sandbox_volume_info *list;
	size_t count;
	ASSERT(sandbox_volume_list(v, &list, &count, &err));
	ASSERT(count == 1 && list[0].bytes < 1 << 20); /* the link was not followed */
	free(list);
	ASSERT(sandbox_volume_delete(v, "links", &err));
	ASSERT(exists(victim));
	ASSERT(!exists(link));
	unlink(victim);
	rmdir(outside);
	sandbox_volumes_close(v);
}

/* Deeper than the walk keeps directories open: a sandbox must not be able
 * to make its volume undeletable by nesting. */
static void delete_removes_a_tree_of_any_depth(void)
{
	struct error err;
	struct sandbox_volumes *v = sandbox_volumes_open(data_dir, &err);
	ASSERT(v != NULL);
	ASSERT(sandbox_volume_create(v, "deep", 0, &err));
	char path[512];
	snprintf(path, sizeof(path), "%s/volumes/deep", data_dir);
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ASSERT(fd >= 0);
	int levels = 3 * SANDBOX_TREE_MAX_DEPTH + 7;
	for (int i = 0; i < levels && fd >= 0; i++) {
		int next = -1;
		if (mkdirat(fd, "d", 0700) == 0)
			next = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (i % 50 == 0) { /* and a file now and then */
			int file = openat(fd, "f", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
			if (file >= 0)
				close(file);
		}
		close(fd);
		fd = next;
	}
	ASSERT(fd >= 0);
	close(fd);
	struct sandbox_volume_info *list;
	size_t count;
	ASSERT(sandbox_volume_list(v, &list, &count, &err));
	ASSERT(count == 1 && !list[0].bytes_complete); /* deeper than the size walk goes */
	free(list);
	if (!sandbox_volume_delete(v, "deep", &err))
		FAIL_AT("delete: %s", err.message);
	ASSERT(!exists(path));
	sandbox_volumes_close(v);
}

static void size_walk_stops_at_its_ceiling(void)
{
	char dir[512], file[600];
	snprintf(dir, sizeof(dir), "%s/many", data_dir);
	ASSERT(mkdir(dir, 0700) == 0);
	for (int i = 0; i < 20; i++) {
		snprintf(file, sizeof(file), "%s/f%d", dir, i);
		ASSERT(write_file(file, 4096));
	}
	uint64_t bytes;
	bool complete;
	struct error err;
	ASSERT(sandbox_tree_size(dir, 5, &bytes, &complete, &err));
	ASSERT(!complete);
	ASSERT(sandbox_tree_size(dir, 100, &bytes, &complete, &err));
	ASSERT(complete);
	ASSERT(bytes >= 20 * 4096);
	ASSERT(sandbox_tree_remove(dir, &err));
	ASSERT(!exists(dir));
}

/* A volume is handed to each new sandbox's uid: every entry, symlinks
 * themselves and never what they point to, nothing past the ceiling. */
static void chown_hands_over_the_tree_but_not_link_targets(void)
{
	if (geteuid() != 0)
		SKIP("changing a file's owner to another uid needs root (euid is %u)",
		     (unsigned)geteuid());
	char dir[512], sub[600], file[700], link[600], outside[600];
	snprintf(dir, sizeof(dir), "%s/owned", data_dir);
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	snprintf(file, sizeof(file), "%s/sub/file", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	snprintf(outside, sizeof(outside), "%s/outside", data_dir);
	ASSERT(mkdir(dir, 0700) == 0 && mkdir(sub, 0700) == 0);
	ASSERT(write_file(file, 10) && write_file(outside, 10));
	ASSERT(symlink(outside, link) == 0);
	struct error err;
	const unsigned uid = 2345678;
	if (!sandbox_tree_chown(dir, uid, uid, 100, &err))
		FAIL_AT("chown: %s", err.message);
	const char *const owned[] = { dir, sub, file, link };
	for (size_t i = 0; i < 4; i++) {
		struct stat st;
		ASSERT(lstat(owned[i], &st) == 0);
		if (st.st_uid != uid || st.st_gid != uid)
			FAIL_AT("%s is owned by %u:%u", owned[i], (unsigned)st.st_uid,
				(unsigned)st.st_gid);
	}
	struct stat target;
	ASSERT(stat(outside, &target) == 0 && target.st_uid == 0);
	ASSERT(!sandbox_tree_chown(dir, 0, 0, 2, &err)); /* 3 entries below: over the ceiling */
	ASSERT_CONTAINS(err.message, "too many files");
	ASSERT(sandbox_tree_remove(dir, &err));
	ASSERT(unlink(outside) == 0);
}

int main(void)
{
	make_data_dir();
	RUN_TEST(data_dir_follows_xdg_then_home);
	RUN_TEST(created_volume_is_listed_with_its_size);
	RUN_TEST(one_session_at_a_time_and_no_delete_while_mounted);
	RUN_TEST(files_outlive_the_session_and_the_daemon);
	RUN_TEST(another_daemon_on_the_same_data_dir_is_refused);
	RUN_TEST(delete_does_not_follow_links_out_of_the_volume);
	RUN_TEST(delete_removes_a_tree_of_any_depth);
	RUN_TEST(size_walk_stops_at_its_ceiling);
	RUN_TEST(chown_hands_over_the_tree_but_not_link_targets);
	struct error err;
	if (!sandbox_tree_remove(data_dir, &err))
		fprintf(stderr, "cleanup: %s\n", err.message);
	TEST_EXIT();
}
