/* SPDX-License-Identifier: MIT */
/* Copies of what others may read of the host's secret-holding directories
 * (see root_copy.h). */
#include "sandbox/root_copy.h"

#include "sandbox/tree.h"
#include "util/clock.h"
#include "util/io.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_ENTRIES 200000
#define MAX_BYTES (256ull << 20)
/* Copies held at once: a version of /etc and of debconf's database for
 * every change of the host's while older sessions still run. */
#define MAX_COPIES 32

struct copy {
	char path[400];
	char host[200];
	unsigned refs;
	bool current; /* the newest of its host directory: kept when unheld */
};

static struct copy copies[MAX_COPIES];
static pthread_mutex_t copies_lock = PTHREAD_MUTEX_INITIALIZER;

struct walk {
	dev_t device;
	unsigned long entries;
	uint64_t bytes;
	uint64_t hash;
	int inotify;    /* a fingerprint's: each directory walked is watched; or -1 */
	bool unwatched; /* a watch could not be added */
	struct error *err;
};

/* What tells that a host directory is as it was at its last fingerprint,
 * without walking it again: an inotify watch on each directory the walk
 * went through, made before it listed them, and no event since. A change
 * through a hard link from elsewhere (which only the file's own watches
 * would see) is caught by walking again when the last walk is older than
 * WATCH_TRUSTED_MS. */
#define MAX_WATCHED 4
#define WATCH_TRUSTED_MS 10000
#define WATCH_EVENTS                                                                       \
	(IN_ATTRIB | IN_CLOSE_WRITE | IN_MODIFY | IN_CREATE | IN_DELETE | IN_DELETE_SELF | \
	 IN_MOVE_SELF | IN_MOVED_FROM | IN_MOVED_TO | IN_ONLYDIR)

struct watched {
	char host[200];
	int fd;         /* inotify; -1 when none */
	uint64_t hash;  /* the fingerprint it watches since */
	int64_t walked; /* when, in ms */
};

static struct watched watches[MAX_WATCHED];
static pthread_mutex_t watches_lock = PTHREAD_MUTEX_INITIALIZER;

/* What a copy holds: what others may read, or enter (a directory); a
 * symlink is only a name. */
static bool public(const struct stat *st)
{
	if (S_ISLNK(st->st_mode))
		return true;
	mode_t need = S_ISDIR(st->st_mode) ? (S_IROTH | S_IXOTH) : S_IROTH;
	return (st->st_mode & need) == need;
}

static uint64_t fnv(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

/* An entry's part of the directory's fingerprint: its place, name and
 * everything a change to it moves (ctime moves with any write, chmod or
 * chown). Summed, so the order of a listing does not matter. */
static uint64_t entry_hash(ino_t parent, const char *name, const struct stat *st)
{
	uint64_t h = 14695981039346656037ull;
	h = fnv(h, &parent, sizeof(parent));
	h = fnv(h, name, strlen(name) + 1);
	const uint64_t fields[] = {
		st->st_ino,
		st->st_mode,
		st->st_uid,
		st->st_gid,
		(uint64_t)st->st_size,
		(uint64_t)st->st_mtim.tv_sec,
		(uint64_t)st->st_mtim.tv_nsec,
		(uint64_t)st->st_ctim.tv_sec,
		(uint64_t)st->st_ctim.tv_nsec,
	};
	return fnv(h, fields, sizeof(fields));
}

/* Calls visit for each entry of dir but . and .., with its lstat; stops
 * at the entries' ceiling or when visit says so. */
static bool each_entry(int dir, struct walk *w,
		       bool (*visit)(int dir, const char *name, const struct stat *st,
				     struct walk *w, void *data),
		       void *data)
{
	int listing = fcntl(dir, F_DUPFD_CLOEXEC, 3); /* bwrap may start meanwhile */
	DIR *d = listing >= 0 ? fdopendir(listing) : NULL;
	if (!d) {
		if (listing >= 0)
			close(listing);
		return error_set(w->err, errno, "cannot list a directory");
	}
	/* The duplicate shares the offset of dir, which another walk may
	 * have left at its end. */
	rewinddir(d);
	bool ok = true;
	for (struct dirent *e; ok && (e = readdir(d));) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		struct stat st;
		if (++w->entries > MAX_ENTRIES) {
			ok = error_set(w->err, 0, "over %d entries", MAX_ENTRIES);
			break;
		}
		if (fstatat(dir, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			if (errno == ENOENT)
				continue; /* removed while we looked */
			ok = error_set(w->err, errno, "cannot look at %s", e->d_name);
			break;
		}
		ok = visit(dir, e->d_name, &st, w, data);
	}
	closedir(d);
	return ok;
}

/* A public directory of the same file system, not too deep: walked. */
static bool descends(const struct stat *st, const struct walk *w, int depth)
{
	return S_ISDIR(st->st_mode) && public(st) && st->st_dev == w->device &&
	       depth + 1 < SANDBOX_TREE_MAX_DEPTH;
}

/* Where a walk is: its depth, and the inode of the directory it lists. */
struct place {
	int depth;
	ino_t dir;
};

static bool fingerprint_in(int dir, struct place here, struct walk *w);

static bool fingerprint_entry(int dir, const char *name, const struct stat *st, struct walk *w,
			      void *data)
{
	const struct place *here = data;
	w->hash += entry_hash(here->dir, name, st);
	if (!descends(st, w, here->depth))
		return true;
	int below = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (below < 0)
		return true; /* gone, or replaced: the parent's ctime says so */
	bool ok = fingerprint_in(below, (struct place){ here->depth + 1, st->st_ino }, w);
	close(below);
	return ok;
}

static bool fingerprint_in(int dir, struct place here, struct walk *w)
{
	char path[32];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", dir);
	if (w->inotify >= 0 && inotify_add_watch(w->inotify, path, WATCH_EVENTS) < 0)
		w->unwatched = true;
	return each_entry(dir, w, fingerprint_entry, &here);
}

/* Whether something happened under an inotify descriptor (which it
 * empties); an error counts as something. */
static bool events_since(int fd)
{
	char buffer[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool seen = false;
	for (;;) {
		ssize_t n = read(fd, buffer, sizeof(buffer));
		if (n > 0) {
			seen = true;
			continue;
		}
		return seen || n == 0 || errno != EAGAIN;
	}
}

/* The fingerprint of host (open at fd, top its stat) in w->hash: the
 * watched one when nothing changed since, else a new walk under new
 * watches. */
static bool fingerprint(const char *host_path, int fd, const struct stat *top, struct walk *w)
{
	pthread_mutex_lock(&watches_lock);
	struct watched *found = NULL, *empty = NULL;
	for (size_t i = 0; i < MAX_WATCHED; i++) {
		if (!watches[i].host[0])
			empty = empty ? empty : &watches[i];
		else if (strcmp(watches[i].host, host_path) == 0)
			found = &watches[i];
	}
	int64_t now = clock_monotonic_ms();
	if (found && found->fd >= 0 && now - found->walked < WATCH_TRUSTED_MS &&
	    !events_since(found->fd)) {
		w->hash = found->hash;
		pthread_mutex_unlock(&watches_lock);
		return true;
	}
	struct watched *slot = found ? found : empty;
	if (found && found->fd >= 0)
		close(found->fd); /* an empty slot's 0 is no descriptor */
	w->inotify = slot ? inotify_init1(IN_NONBLOCK | IN_CLOEXEC) : -1;
	w->hash = entry_hash(0, host_path, top);
	bool ok = fingerprint_in(fd, (struct place){ 0, top->st_ino }, w);
	if (slot) {
		bool trusted = ok && w->inotify >= 0 && !w->unwatched;
		if (!trusted && w->inotify >= 0)
			close(w->inotify);
		*slot = (struct watched){ .fd = trusted ? w->inotify : -1,
					  .hash = w->hash,
					  .walked = now };
		snprintf(slot->host, sizeof(slot->host), "%s", host_path);
	}
	pthread_mutex_unlock(&watches_lock);
	return ok;
}

/* A daemon that is not root keeps the copies its own, without set-id bits
 * (its sandboxes show every file as root's: root_fuse.h). */
static bool keeps_owners(void)
{
	return geteuid() == 0;
}

/* Gives a copied entry the host's owner, mode and times (the owner first:
 * chown clears set-id bits). */
static bool same_as_host(int fd, const struct stat *st, struct walk *w, const char *name)
{
	const struct timespec times[2] = { st->st_atim, st->st_mtim };
	bool owners = keeps_owners();
	if ((owners && fchown(fd, st->st_uid, st->st_gid) != 0) ||
	    fchmod(fd, st->st_mode & (owners ? 07777 : 01777)) != 0 || futimens(fd, times) != 0)
		return error_set(w->err, errno,
				 "cannot give the copy of %s the host's owner and mode", name);
	return true;
}

/* Copies size bytes (fewer if the file shrank meanwhile) from in to out:
 * in the kernel where it can (copy_file_range refuses some pairs of file
 * systems, tmpfs and ext4 among them), else through a buffer. */
static bool copy_bytes(int in, int out, off_t size)
{
	bool kernel = true;
	char buffer[65536];
	for (off_t left = size; left > 0;) {
		ssize_t n = -1;
		if (kernel) {
			n = copy_file_range(in, NULL, out, NULL, (size_t)left, 0);
			if (n < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS ||
				      errno == EOPNOTSUPP)) {
				kernel = false;
				continue;
			}
		} else {
			n = read(in, buffer,
				 left < (off_t)sizeof(buffer) ? (size_t)left : sizeof(buffer));
			if (n > 0 && !io_write_all(out, buffer, (size_t)n))
				return false;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return false;
		if (n == 0)
			break; /* shrank while we copied */
		left -= n;
	}
	return true;
}

static bool copy_file(int dir, const char *name, int dest, struct walk *w)
{
	int in = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (in < 0)
		return errno == ENOENT || errno == ELOOP ||
		       error_set(w->err, errno, "cannot open %s", name);
	struct stat st;
	int out = -1;
	bool ok = false;
	/* Looked at again through the descriptor: what is copied is what
	 * was public when it was opened. */
	if (fstat(in, &st) != 0 || !S_ISREG(st.st_mode) || !public(&st)) {
		ok = true;
		goto out;
	}
	if ((w->bytes += (uint64_t)st.st_size) > MAX_BYTES) {
		error_set(w->err, 0, "over %llu MiB", MAX_BYTES >> 20);
		goto out;
	}
	out = openat(dest, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0) {
		error_set(w->err, errno, "cannot create the copy of %s", name);
		goto out;
	}
	if (!copy_bytes(in, out, st.st_size)) {
		error_set(w->err, errno, "cannot copy %s", name);
		goto out;
	}
	ok = same_as_host(out, &st, w, name);
out:
	close(in);
	if (out >= 0)
		close(out);
	return ok;
}

static bool copy_link(int dir, const char *name, const struct stat *st, int dest, struct walk *w)
{
	char target[PATH_MAX];
	ssize_t n = readlinkat(dir, name, target, sizeof(target) - 1);
	if (n < 0)
		return errno == ENOENT || error_set(w->err, errno, "cannot read the link %s", name);
	target[n] = '\0';
	const struct timespec times[2] = { st->st_atim, st->st_mtim };
	if (symlinkat(target, dest, name) != 0 ||
	    (keeps_owners() &&
	     fchownat(dest, name, st->st_uid, st->st_gid, AT_SYMLINK_NOFOLLOW) != 0) ||
	    utimensat(dest, name, times, AT_SYMLINK_NOFOLLOW) != 0)
		return error_set(w->err, errno, "cannot copy the link %s", name);
	return true;
}

struct copy_ctx {
	int dest;
	int depth;
};

static bool copy_in(int dir, int dest, struct walk *w, int depth);

static bool copy_entry(int dir, const char *name, const struct stat *st, struct walk *w, void *data)
{
	const struct copy_ctx *c = data;
	if (!public(st))
		return true;
	if (S_ISREG(st->st_mode))
		return copy_file(dir, name, c->dest, w);
	if (S_ISLNK(st->st_mode))
		return copy_link(dir, name, st, c->dest, w);
	if (!descends(st, w, c->depth))
		return true; /* devices, FIFOs, sockets, other file systems */
	int below = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (below < 0)
		return true;
	int made = -1;
	bool ok = false;
	if (mkdirat(c->dest, name, 0700) != 0 ||
	    (made = openat(c->dest, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		error_set(w->err, errno, "cannot create the copy of %s", name);
	else
		/* Its times last, as filling it moved them. */
		ok = copy_in(below, made, w, c->depth + 1) && same_as_host(made, st, w, name);
	close(below);
	if (made >= 0)
		close(made);
	return ok;
}

static bool copy_in(int dir, int dest, struct walk *w, int depth)
{
	struct copy_ctx c = { .dest = dest, .depth = depth };
	return each_entry(dir, w, copy_entry, &c);
}

/* Makes the copy at path (through path.part, so that a copy cut short is
 * never taken for one). */
static bool make_copy(int host, const struct stat *top, const char *path, struct error *err)
{
	char part[420];
	snprintf(part, sizeof(part), "%s.part", path);
	struct error ignored;
	sandbox_tree_remove(part, &ignored);
	sandbox_tree_remove(path, &ignored);
	if (mkdir(part, 0700) != 0)
		return error_set(err, errno, "cannot create %s", part);
	int dest = open(part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct walk w = { .device = top->st_dev, .err = err };
	bool ok = dest >= 0 ? copy_in(host, dest, &w, 0) && same_as_host(dest, top, &w, "the top")
			    : error_set(err, errno, "cannot open %s", part);
	if (dest >= 0)
		close(dest);
	if (ok && rename(part, path) != 0)
		ok = error_set(err, errno, "cannot rename %s", part);
	if (!ok)
		sandbox_tree_remove(part, &ignored);
	return ok;
}

/* Under copies_lock. */
static void forget(struct copy *c)
{
	struct error ignored;
	sandbox_tree_remove(c->path, &ignored);
	memset(c, 0, sizeof(*c));
}

bool sandbox_root_copy_take(const char *daemon_dir, const char *host_path, char *out, size_t size,
			    struct error *err)
{
	int host = open(host_path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat top;
	if (host < 0 || fstat(host, &top) != 0) {
		error_set(err, errno, "cannot open %s", host_path);
		if (host >= 0)
			close(host);
		return false;
	}
	struct walk w = { .device = top.st_dev, .inotify = -1, .err = err };
	if (!fingerprint(host_path, host, &top, &w)) {
		close(host);
		return error_prefix(err, "in %s", host_path);
	}
	char flat[64];
	snprintf(flat, sizeof(flat), "%s", host_path + (host_path[0] == '/'));
	for (char *c = flat; *c; c++)
		if (*c == '/')
			*c = '-';
	char lowers[300];
	snprintf(lowers, sizeof(lowers), "%s/lowers", daemon_dir);
	if (mkdir(lowers, 0700) != 0 && errno != EEXIST) {
		close(host);
		return error_set(err, errno, "cannot create %s", lowers);
	}
	int n = snprintf(out, size, "%s/%s-%016llx", lowers, flat, (unsigned long long)w.hash);
	if (n < 0 || (size_t)n >= size || (size_t)n >= sizeof(copies[0].path)) {
		close(host);
		return error_set(err, ENAMETOOLONG, "cannot name a copy of %s", host_path);
	}
	pthread_mutex_lock(&copies_lock);
	struct copy *found = NULL, *empty = NULL;
	for (size_t i = 0; i < MAX_COPIES; i++) {
		if (!copies[i].path[0])
			empty = empty ? empty : &copies[i];
		else if (strcmp(copies[i].path, out) == 0)
			found = &copies[i];
	}
	bool ok = true;
	if (found) {
		found->refs++;
	} else if (!empty) {
		ok = error_set(err, 0, "cannot copy %s: %d versions of it are in use", host_path,
			       MAX_COPIES);
	} else if ((ok = make_copy(host, &top, out, err))) {
		/* The newest: older ones go once no session holds them. */
		for (size_t i = 0; i < MAX_COPIES; i++) {
			if (!copies[i].path[0] || strcmp(copies[i].host, host_path) != 0)
				continue;
			copies[i].current = false;
			if (copies[i].refs == 0)
				forget(&copies[i]);
		}
		snprintf(empty->path, sizeof(empty->path), "%s", out);
		snprintf(empty->host, sizeof(empty->host), "%s", host_path);
		empty->refs = 1;
		empty->current = true;
	} else {
		error_prefix(err, "cannot copy %s", host_path);
	}
	pthread_mutex_unlock(&copies_lock);
	close(host);
	return ok;
}

void sandbox_root_copy_release(const char *path)
{
	if (!path || !path[0])
		return;
	pthread_mutex_lock(&copies_lock);
	for (size_t i = 0; i < MAX_COPIES; i++) {
		struct copy *c = &copies[i];
		if (!c->path[0] || strcmp(c->path, path) != 0)
			continue;
		if (c->refs > 0)
			c->refs--;
		if (c->refs == 0 && !c->current)
			forget(c);
		break;
	}
	pthread_mutex_unlock(&copies_lock);
}
