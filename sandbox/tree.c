/* SPDX-License-Identifier: MIT */
#include "sandbox/tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct size_walk {
	uint64_t entries_left;
	uint64_t bytes;
	bool complete;
	dev_t device;
};

static int open_dir_at(int parent, const char *name)
{
	return openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
}

static bool is_dot(const char *name)
{
	return name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2]));
}

static void size_dir(struct size_walk *w, int fd, unsigned depth)
{
	DIR *dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		w->complete = false;
		return;
	}
	struct dirent *d;
	while ((d = readdir(dir))) {
		if (is_dot(d->d_name))
			continue;
		if (w->entries_left == 0) {
			w->complete = false;
			break;
		}
		w->entries_left--;
		struct stat st;
		if (fstatat(dirfd(dir), d->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue; /* removed meanwhile */
		w->bytes += (uint64_t)st.st_blocks * 512;
		if (!S_ISDIR(st.st_mode) || st.st_dev != w->device)
			continue;
		if (depth + 1 >= SANDBOX_TREE_MAX_DEPTH) {
			w->complete = false;
			continue;
		}
		int child = open_dir_at(dirfd(dir), d->d_name);
		if (child >= 0)
			size_dir(w, child, depth + 1);
		else
			w->complete = false;
	}
	closedir(dir);
}

/* The directory a walk starts at, open, with its stat; -1 and err. */
static int open_top(const char *path, struct stat *st, struct error *err)
{
	int fd = open_dir_at(AT_FDCWD, path);
	if (fd < 0 || fstat(fd, st) != 0) {
		int saved = errno;
		if (fd >= 0)
			close(fd);
		error_set(err, saved, "cannot open %s", path);
		return -1;
	}
	return fd;
}

bool sandbox_tree_size(const char *path, uint64_t max_entries, uint64_t *bytes, bool *complete,
		       struct error *err)
{
	struct stat st;
	int fd = open_top(path, &st, err);
	if (fd < 0)
		return false;
	struct size_walk w = { .entries_left = max_entries,
			       .bytes = (uint64_t)st.st_blocks * 512,
			       .complete = true,
			       .device = st.st_dev };
	size_dir(&w, fd, 0);
	*bytes = w.bytes;
	*complete = w.complete;
	return true;
}

struct chown_walk {
	uint64_t entries_left;
	uid_t uid;
	gid_t gid;
	/* A shift (count > 0): ids from.. go to to..; uid and gid unused. */
	uint32_t from, to, count;
	dev_t device;
	const char *top;
	struct error *err;
};

/* What an entry's id becomes: the walk's, or its shift. */
static unsigned new_id(const struct chown_walk *w, unsigned id, unsigned fixed)
{
	if (!w->count)
		return fixed;
	return id - w->from < w->count ? w->to + (id - w->from) : id;
}

/* Gives name in dir (st: as it is) its new owner. A change of owner
 * clears the set-user and set-group bits, which a shift keeps: they are
 * set again. */
static bool give(const struct chown_walk *w, int dir, const char *name, const struct stat *st)
{
	uid_t uid = new_id(w, st->st_uid, w->uid);
	gid_t gid = new_id(w, st->st_gid, w->gid);
	if (uid == st->st_uid && gid == st->st_gid)
		return true;
	/* name "": dir itself. */
	if (name[0] ? fchownat(dir, name, uid, gid, AT_SYMLINK_NOFOLLOW) != 0
		    : fchown(dir, uid, gid) != 0)
		return false;
	if (!w->count || S_ISLNK(st->st_mode) || !(st->st_mode & (S_ISUID | S_ISGID)))
		return true;
	return name[0] ? fchmodat(dir, name, st->st_mode & 07777, 0) == 0
		       : fchmod(dir, st->st_mode & 07777) == 0;
}

static bool chown_dir(struct chown_walk *w, int fd, unsigned depth)
{
	DIR *dir = fdopendir(fd);
	if (!dir) {
		int saved = errno;
		close(fd);
		return error_set(w->err, saved, "cannot list a directory in %s", w->top);
	}
	bool ok = true;
	struct dirent *d;
	while (ok && (d = readdir(dir))) {
		if (is_dot(d->d_name))
			continue;
		if (w->entries_left-- == 0) {
			ok = error_set(w->err, 0, "%s has too many files to hand over", w->top);
			break;
		}
		struct stat st;
		if (fstatat(dirfd(dir), d->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue; /* removed meanwhile */
		if (!give(w, dirfd(dir), d->d_name, &st)) {
			ok = error_set(w->err, errno, "cannot give %s in %s to uid %u", d->d_name,
				       w->top, (unsigned)new_id(w, st.st_uid, w->uid));
			break;
		}
		if (!S_ISDIR(st.st_mode) || st.st_dev != w->device)
			continue;
		if (depth + 1 >= SANDBOX_TREE_MAX_DEPTH) {
			ok = error_set(w->err, 0, "%s is nested too deep to hand over", w->top);
			break;
		}
		int child = open_dir_at(dirfd(dir), d->d_name);
		if (child < 0)
			ok = error_set(w->err, errno, "cannot open %s in %s", d->d_name, w->top);
		else
			ok = chown_dir(w, child, depth + 1);
	}
	closedir(dir);
	return ok;
}

bool sandbox_tree_chown(const char *path, unsigned uid, unsigned gid, uint64_t max_entries,
			struct error *err)
{
	struct stat st;
	int fd = open_top(path, &st, err);
	if (fd < 0)
		return false;
	if (fchown(fd, uid, gid) != 0) {
		int saved = errno;
		close(fd);
		return error_set(err, saved, "cannot give %s to uid %u", path, uid);
	}
	struct chown_walk w = { .entries_left = max_entries,
				.uid = uid,
				.gid = gid,
				.device = st.st_dev,
				.top = path,
				.err = err };
	return chown_dir(&w, fd, 0);
}

bool sandbox_tree_shift(const char *path, uint32_t from, uint32_t to, uint32_t count,
			uint64_t max_entries, struct error *err)
{
	struct stat st;
	int fd = open_top(path, &st, err);
	if (fd < 0)
		return false;
	struct chown_walk w = { .entries_left = max_entries,
				.from = from,
				.to = to,
				.count = count,
				.device = st.st_dev,
				.top = path,
				.err = err };
	if (count && !give(&w, fd, "", &st)) {
		int saved = errno;
		close(fd);
		return error_set(err, saved, "cannot give %s to uid %u", path,
				 new_id(&w, st.st_uid, 0));
	}
	return !count || chown_dir(&w, fd, 0);
}

struct removal {
	int top;              /* the directory being removed */
	unsigned long moved;  /* directories moved up to it in this pass */
	unsigned long serial; /* for their new names */
};

/* A directory at the depth limit moves up to the top under a fresh name, to
 * be emptied by the next pass: so any depth can be removed while holding
 * at most SANDBOX_TREE_MAX_DEPTH directories open. */
static bool move_to_top(struct removal *r, int parent, const char *name, const char *path,
			struct error *err)
{
	for (int attempt = 0; attempt < 1000; attempt++) {
		char fresh[48];
		snprintf(fresh, sizeof(fresh), ".lizard-deep-%lu", r->serial++);
		if (renameat2(parent, name, r->top, fresh, RENAME_NOREPLACE) == 0) {
			r->moved++;
			return true;
		}
		if (errno != EEXIST)
			break;
	}
	return error_set(err, errno, "cannot move %s/%s up to be removed", path, name);
}

/* Empties the directory open at fd (which it closes). A directory without
 * write or search permission for us is opened up first: a sandbox may leave
 * chmod 000 directories behind, and they are ours to delete. */
static bool empty_dir(struct removal *r, int fd, const char *path, unsigned depth,
		      struct error *err)
{
	DIR *dir = fdopendir(fd);
	if (!dir) {
		int saved = errno;
		close(fd);
		return error_set(err, saved, "cannot list %s", path);
	}
	bool ok = true;
	struct dirent *d;
	while (ok && (d = readdir(dir))) {
		if (is_dot(d->d_name))
			continue;
		if (unlinkat(dirfd(dir), d->d_name, 0) == 0 || errno == ENOENT)
			continue;
		if (errno != EISDIR && errno != EPERM) {
			ok = error_set(err, errno, "cannot remove %s/%s", path, d->d_name);
			break;
		}
		/* A directory (Linux says EISDIR; POSIX allows EPERM). */
		if (depth + 1 >= SANDBOX_TREE_MAX_DEPTH) {
			ok = move_to_top(r, dirfd(dir), d->d_name, path, err);
			continue;
		}
		int child = open_dir_at(dirfd(dir), d->d_name);
		if (child < 0 && errno == EACCES &&
		    fchmodat(dirfd(dir), d->d_name, 0700, AT_SYMLINK_NOFOLLOW) == 0)
			child = open_dir_at(dirfd(dir), d->d_name);
		if (child < 0) {
			ok = error_set(err, errno, "cannot open %s/%s", path, d->d_name);
			break;
		}
		fchmod(child, 0700);
		char child_path[4096];
		snprintf(child_path, sizeof(child_path), "%s/%s", path, d->d_name);
		if (!empty_dir(r, child, child_path, depth + 1, err)) {
			ok = false;
			break;
		}
		if (unlinkat(dirfd(dir), d->d_name, AT_REMOVEDIR) != 0 && errno != ENOENT)
			ok = error_set(err, errno, "cannot remove %s", child_path);
	}
	closedir(dir);
	return ok;
}

bool sandbox_tree_remove(const char *path, struct error *err)
{
	struct removal r = { .top = open_dir_at(AT_FDCWD, path) };
	if (r.top < 0) {
		if (errno == ENOENT)
			return true;
		return error_set(err, errno, "cannot open %s", path);
	}
	fchmod(r.top, 0700);
	bool ok = true;
	/* A pass that moved nothing up saw every entry (none were added while it
	 * listed) and removed them all. Each pass takes SANDBOX_TREE_MAX_DEPTH
	 * levels off the deepest branch, so the count of passes is bounded by
	 * the tree; the cap is only a backstop. */
	for (unsigned pass = 0; ok; pass++) {
		if (pass == 1u << 20) {
			ok = error_set(err, 0, "cannot remove %s: it keeps growing", path);
			break;
		}
		int fd = dup(r.top);
		if (fd < 0) {
			ok = error_set(err, errno, "cannot remove %s", path);
			break;
		}
		/* fdopendir shares the file offset of r.top: rewind for each pass. */
		lseek(fd, 0, SEEK_SET);
		r.moved = 0;
		ok = empty_dir(&r, fd, path, 0, err);
		if (ok && r.moved == 0)
			break;
	}
	close(r.top);
	if (ok && rmdir(path) != 0 && errno != ENOENT)
		ok = error_set(err, errno, "cannot remove %s", path);
	return ok;
}
