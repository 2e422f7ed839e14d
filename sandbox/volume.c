/* SPDX-License-Identifier: MIT */
#include "sandbox/name.h"
#include "sandbox/volume.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/disk.h"
#include "sandbox/size.h"
#include "sandbox/subid.h"
#include "sandbox/tree.h"

#define LOCKS_DIR ".locks"
#define IMAGES_DIR ".images"

struct holder {
	char name[SANDBOX_NAME_MAX + 1];
	char session[SANDBOX_NAME_MAX + 1];
	int lock_fd; /* holds the OFD write lock on the volume's lock file */
};

struct sandbox_volumes {
	pthread_mutex_t lock;
	char *dir;        /* <data>/volumes */
	char *locks_dir;  /* <data>/volumes/.locks */
	char *images_dir; /* <data>/volumes/.images */
	int images_fd;
	struct holder *holders;
	size_t count, capacity;
};

bool sandbox_data_dir_default(char *out, size_t size, struct error *err)
{
	const char *xdg = getenv("XDG_DATA_HOME");
	int n;
	/* The XDG spec says to ignore a relative XDG_DATA_HOME. */
	if (xdg && xdg[0] == '/') {
		n = snprintf(out, size, "%s/lizard-bridge", xdg);
	} else {
		const char *home = getenv("HOME");
		if (!home || home[0] != '/') {
			struct passwd *pw = getpwuid(getuid());
			home = pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : NULL;
		}
		if (!home)
			return error_set(err, 0,
					 "no data directory: HOME is not set and uid %d "
					 "has no home directory; pass --data-dir",
					 (int)getuid());
		n = snprintf(out, size, "%s/.local/share/lizard-bridge", home);
	}
	if (n < 0 || (size_t)n >= size)
		return error_set(err, ENAMETOOLONG, "the default data directory path");
	return true;
}

/* mkdir -p with mode 0700 for what it creates. */
static bool make_dirs(const char *path, struct error *err)
{
	char buf[4096];
	if ((size_t)snprintf(buf, sizeof(buf), "%s", path) >= sizeof(buf))
		return error_set(err, ENAMETOOLONG, "data directory %.64s...", path);
	for (char *p = buf + 1;; p++) {
		if (*p != '/' && *p)
			continue;
		char saved = *p;
		*p = '\0';
		struct stat st;
		if (mkdir(buf, 0700) != 0 && errno != EEXIST)
			return error_set(err, errno, "cannot create directory %s", buf);
		if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode))
			return error_set(err, ENOTDIR, "%s", buf);
		if (!saved)
			return true;
		*p = saved;
	}
}

static char *join(const char *dir, const char *name)
{
	size_t a = strlen(dir), b = strlen(name);
	char *path = malloc(a + b + 2);
	if (path) {
		memcpy(path, dir, a);
		path[a] = '/';
		memcpy(path + a + 1, name, b + 1);
	}
	return path;
}

struct sandbox_volumes *sandbox_volumes_open(const char *data_dir, struct error *err)
{
	if (!data_dir || !data_dir[0])
		return error_null(err, 0, "the data directory is empty");
	struct sandbox_volumes *v = calloc(1, sizeof(*v));
	if (!v)
		return error_null(err, ENOMEM, "volumes");
	pthread_mutex_init(&v->lock, NULL);
	v->images_fd = -1;
	v->dir = join(data_dir, "volumes");
	v->locks_dir = v->dir ? join(v->dir, LOCKS_DIR) : NULL;
	v->images_dir = v->dir ? join(v->dir, IMAGES_DIR) : NULL;
	if (!v->locks_dir || !v->images_dir) {
		error_set(err, ENOMEM, "volumes");
		goto failed;
	}
	if (!make_dirs(v->locks_dir, err) || !make_dirs(v->images_dir, err))
		goto failed;
	v->images_fd = open(v->images_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (v->images_fd < 0) {
		error_set(err, errno, "cannot open %s", v->images_dir);
		goto failed;
	}
	return v;

failed:
	sandbox_volumes_close(v);
	return NULL;
}

void sandbox_volumes_close(struct sandbox_volumes *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->count; i++)
		close(v->holders[i].lock_fd);
	free(v->holders);
	free(v->dir);
	free(v->locks_dir);
	free(v->images_dir);
	if (v->images_fd >= 0)
		close(v->images_fd);
	pthread_mutex_destroy(&v->lock);
	free(v);
}

static struct holder *find_holder(struct sandbox_volumes *v, const char *name)
{
	for (size_t i = 0; i < v->count; i++)
		if (strcmp(v->holders[i].name, name) == 0)
			return &v->holders[i];
	return NULL;
}

/* Whether name is a volume with a disk image. */
static bool is_image(struct sandbox_volumes *v, const char *name)
{
	struct stat st;
	return fstatat(v->images_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

static bool volume_exists(struct sandbox_volumes *v, const char *name)
{
	struct stat st;
	char *path = join(v->dir, name);
	bool exists = path && lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
	free(path);
	return exists || is_image(v, name);
}

/* The session named in a lock file another daemon holds; "" when unreadable. */
static void read_holder(int fd, char *session, size_t size)
{
	char text[128];
	ssize_t n = pread(fd, text, sizeof(text) - 1, 0);
	text[n > 0 ? n : 0] = '\0';
	session[0] = '\0';
	if (size >= SANDBOX_NAME_MAX + 1 && sscanf(text, "session %64s", session) != 1)
		session[0] = '\0';
}

static struct flock whole_file(short type)
{
	struct flock l = { .l_type = type, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0 };
	return l;
}

/* Opens name's lock file and takes its write lock without waiting. On
 * EAGAIN the other holder's session is in *holder. The file may have been
 * unlinked by a delete between open and lock: then try the new one. */
static int take_lock(struct sandbox_volumes *v, const char *name, char *holder, struct error *err)
{
	char *path = join(v->locks_dir, name);
	if (!path)
		return error_set(err, ENOMEM, "volume %s", name), -1;
	for (int attempt = 0; attempt < 8; attempt++) {
		int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0) {
			error_set(err, errno, "cannot open %s", path);
			break;
		}
		struct flock l = whole_file(F_WRLCK);
		if (fcntl(fd, F_OFD_SETLK, &l) != 0) {
			int saved = errno;
			if (saved == EAGAIN || saved == EACCES)
				read_holder(fd, holder, SANDBOX_NAME_MAX + 1);
			close(fd);
			error_set(err, saved == EACCES ? EAGAIN : saved, "cannot lock %s", path);
			break;
		}
		struct stat opened, current;
		if (fstat(fd, &opened) == 0 && stat(path, &current) == 0 &&
		    opened.st_ino == current.st_ino && opened.st_dev == current.st_dev) {
			free(path);
			return fd;
		}
		close(fd);
	}
	free(path);
	if (!err->code)
		error_set(err, EAGAIN, "volume %s kept changing", name);
	return -1;
}

static bool in_use_error(const char *name, const char *session, bool other_daemon,
			 const char *doing, struct error *err)
{
	if (!other_daemon)
		return error_set(err, 0, "volume %s is in use by session %s; %s", name, session,
				 doing);
	return error_set(err, 0,
			 "volume %s is in use by session %s of another "
			 "lizard-bridge on the same data directory; %s",
			 name, session[0] ? session : "(unknown)", doing);
}

bool sandbox_volume_create(struct sandbox_volumes *v, const char *name, uint64_t limit_bytes,
			   struct error *err)
{
	if (!sandbox_name_check("volume", name, err))
		return false;
	if (limit_bytes && (limit_bytes < SANDBOX_DISK_MIN || limit_bytes > SANDBOX_DISK_MAX))
		return error_set(err, 0, "a volume's size must be from 64M to 16T");
	char *path = join(v->dir, name);
	if (!path)
		return error_set(err, ENOMEM, "volume %s", name);
	pthread_mutex_lock(&v->lock);
	bool ok = true;
	/* One name, one volume, of either kind. */
	if (volume_exists(v, name)) {
		ok = error_set(err, EEXIST, "volume %s already exists", name);
	} else if (limit_bytes) {
		ok = sandbox_disk_available(err) &&
		     sandbox_disk_make(v->images_fd, v->images_dir, name, limit_bytes, geteuid(),
				       true, err);
	} else if (mkdir(path, 0755) != 0) {
		ok = error_set(err, errno,
			       errno == EEXIST ? "volume %s already exists (%s)"
					       : "cannot create volume %s at %s",
			       name, path);
	}
	pthread_mutex_unlock(&v->lock);
	free(path);
	return ok;
}

bool sandbox_volume_delete(struct sandbox_volumes *v, const char *name, struct error *err)
{
	if (!sandbox_name_check("volume", name, err))
		return false;
	pthread_mutex_lock(&v->lock);
	bool ok = false;
	struct holder *h = find_holder(v, name);
	if (h) {
		in_use_error(name, h->session, false, "kill that session first", err);
		goto done;
	}
	if (!volume_exists(v, name)) {
		error_set(err, 0, "there is no volume %s", name);
		goto done;
	}
	char holder[SANDBOX_NAME_MAX + 1] = "";
	int fd = take_lock(v, name, holder, err);
	if (fd < 0) {
		if (err->code == EAGAIN)
			in_use_error(name, holder, true, "it cannot be deleted while mounted", err);
		goto done;
	}
	char *path = join(v->dir, name), *lock_path = join(v->locks_dir, name);
	if (is_image(v, name))
		ok = lock_path &&
		     (unlinkat(v->images_fd, name, 0) == 0 ||
		      error_set(err, errno, "cannot remove %s/%s", v->images_dir, name));
	else
		ok = path && lock_path && sandbox_subid_remove(path, err);
	/* Unlink the lock file while holding it, so whoever opened it before
	 * sees (in take_lock) that it is no longer the current one. */
	if (ok)
		unlink(lock_path);
	free(path);
	free(lock_path);
	close(fd);
done:
	pthread_mutex_unlock(&v->lock);
	return ok;
}

/* For a volume this daemon does not hold: the other daemon's session, if any. */
static bool held_elsewhere(struct sandbox_volumes *v, const char *name, char *session)
{
	session[0] = '\0';
	char *path = join(v->locks_dir, name);
	int fd = path ? open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) : -1;
	free(path);
	if (fd < 0)
		return false;
	struct flock l = whole_file(F_WRLCK);
	bool held = fcntl(fd, F_OFD_GETLK, &l) == 0 && l.l_type != F_UNLCK;
	if (held)
		read_holder(fd, session, SANDBOX_NAME_MAX + 1);
	close(fd);
	return held;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct sandbox_volume_info *)a)->name,
		      ((const struct sandbox_volume_info *)b)->name);
}

struct listing {
	struct sandbox_volume_info *list;
	size_t count, capacity;
};

static struct sandbox_volume_info *list_add(struct listing *l, const char *name)
{
	if (l->count == l->capacity) {
		size_t grown = l->capacity ? l->capacity * 2 : 16;
		struct sandbox_volume_info *bigger = realloc(l->list, grown * sizeof(*bigger));
		if (!bigger)
			return NULL;
		l->list = bigger;
		l->capacity = grown;
	}
	struct sandbox_volume_info *info = &l->list[l->count++];
	memset(info, 0, sizeof(*info));
	snprintf(info->name, sizeof(info->name), "%.*s", SANDBOX_NAME_MAX, name);
	return info;
}

/* The volumes of one kind: directories in dir, or images in .images. */
static bool list_kind(struct sandbox_volumes *v, bool images, struct listing *l, struct error *err)
{
	const char *where = images ? v->images_dir : v->dir;
	DIR *dir = opendir(where);
	if (!dir)
		return error_set(err, errno, "cannot list %s", where);
	bool ok = true;
	struct dirent *d;
	while (ok && (d = readdir(dir))) {
		struct stat st;
		if (!sandbox_name_check("volume", d->d_name, NULL) ||
		    fstatat(dirfd(dir), d->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    (images ? !S_ISREG(st.st_mode) : !S_ISDIR(st.st_mode)))
			continue; /* .locks, .images, and anything that is not a volume */
		struct sandbox_volume_info *info = list_add(l, d->d_name);
		if (!info) {
			ok = error_set(err, ENOMEM, "listing %s", where);
			break;
		}
		if (images) {
			info->bytes = (uint64_t)st.st_blocks * 512;
			info->bytes_complete = true;
			info->limit_bytes = (uint64_t)st.st_size;
			continue;
		}
		char *path = join(v->dir, d->d_name);
		if (!path || !sandbox_tree_size(path, SANDBOX_VOLUME_SIZE_MAX_ENTRIES, &info->bytes,
						&info->bytes_complete, NULL))
			info->bytes_complete = false;
		free(path);
	}
	closedir(dir);
	return ok;
}

bool sandbox_volume_list(struct sandbox_volumes *v, struct sandbox_volume_info **list_out,
			 size_t *count_out, struct error *err)
{
	struct listing l = { .list = NULL };
	if (!list_kind(v, false, &l, err) || !list_kind(v, true, &l, err)) {
		free(l.list);
		return false;
	}
	struct sandbox_volume_info *list = l.list;
	size_t count = l.count;
	pthread_mutex_lock(&v->lock);
	for (size_t i = 0; i < count; i++) {
		struct holder *h = find_holder(v, list[i].name);
		if (h)
			snprintf(list[i].session, sizeof(list[i].session), "%s", h->session);
		else
			list[i].other_daemon = held_elsewhere(v, list[i].name, list[i].session);
	}
	pthread_mutex_unlock(&v->lock);
	if (count)
		qsort(list, count, sizeof(*list), by_name);
	*list_out = list;
	*count_out = count;
	return true;
}

bool sandbox_volume_acquire(struct sandbox_volumes *v, const char *name, const char *session,
			    char *path, size_t path_size, bool *image, struct error *err)
{
	if (!sandbox_name_check("volume", name, err) ||
	    !sandbox_name_check("session", session, err))
		return false;
	pthread_mutex_lock(&v->lock);
	bool ok = false;
	int fd = -1;
	struct holder *h = find_holder(v, name);
	if (h) {
		error_set(err, 0,
			  "volume %s is already mounted by session %s; one volume "
			  "serves one session at a time",
			  name, h->session);
		goto done;
	}
	if (!volume_exists(v, name)) {
		error_set(err, 0, "there is no volume %s; create it with create_volume", name);
		goto done;
	}
	*image = is_image(v, name);
	if ((size_t)snprintf(path, path_size, "%s/%s", *image ? v->images_dir : v->dir, name) >=
	    path_size) {
		error_set(err, ENAMETOOLONG, "volume %s path", name);
		goto done;
	}
	char holder[SANDBOX_NAME_MAX + 1] = "";
	fd = take_lock(v, name, holder, err);
	if (fd < 0) {
		if (err->code == EAGAIN)
			in_use_error(name, holder, true, "one volume serves one session at a time",
				     err);
		goto done;
	}
	/* A delete by another daemon may have finished between the checks and the lock. */
	if (!volume_exists(v, name)) {
		error_set(err, 0, "there is no volume %s; create it with create_volume", name);
		goto done;
	}
	/* Mounted twice at once, an ext4 image is lost: the last session's
	 * mount must be gone (it goes with that session's sandbox). */
	if (*image && sandbox_disk_attached(path)) {
		error_set(err, EBUSY,
			  "volume %s is still being let go of by the session "
			  "that had it; try again in a moment",
			  name);
		goto done;
	}
	if (v->count == v->capacity) {
		size_t grown = v->capacity ? v->capacity * 2 : 8;
		struct holder *bigger = realloc(v->holders, grown * sizeof(*bigger));
		if (!bigger) {
			error_set(err, ENOMEM, "volume %s", name);
			goto done;
		}
		v->holders = bigger;
		v->capacity = grown;
	}
	char text[128];
	int len = snprintf(text, sizeof(text), "session %s pid %d\n", session, (int)getpid());
	if (ftruncate(fd, 0) != 0 || pwrite(fd, text, (size_t)len, 0) != len) {
		error_set(err, errno, "cannot write the lock file of volume %s", name);
		goto done;
	}
	h = &v->holders[v->count++];
	snprintf(h->name, sizeof(h->name), "%s", name);
	snprintf(h->session, sizeof(h->session), "%s", session);
	h->lock_fd = fd;
	fd = -1;
	ok = true;
done:
	if (fd >= 0)
		close(fd);
	pthread_mutex_unlock(&v->lock);
	return ok;
}

bool sandbox_volume_release(struct sandbox_volumes *v, const char *name, const char *session,
			    struct error *err)
{
	pthread_mutex_lock(&v->lock);
	struct holder *h = name ? find_holder(v, name) : NULL;
	bool ok = h && session && strcmp(h->session, session) == 0;
	if (!h)
		error_set(err, 0, "volume %s is not mounted", name ? name : "(null)");
	else if (!ok)
		error_set(err, 0, "volume %s is mounted by session %s, not %s", name, h->session,
			  session ? session : "(null)");
	if (ok) {
		/* Clear the text so a stale file never names a session; closing drops the lock. */
		if (ftruncate(h->lock_fd, 0) != 0) {
			/* Harmless: list and errors only trust the text while the lock is held. */
		}
		close(h->lock_fd);
		*h = v->holders[--v->count];
	}
	pthread_mutex_unlock(&v->lock);
	return ok;
}
