/* SPDX-License-Identifier: MIT */
/* What a writable root (root.h) must not show of the host, besides what
 * root_copy.h leaves out of its copies: a whiteout for an entry of a live
 * lower the sandbox must make afresh, and users and groups that are the
 * host's system accounts (ids below 1000, without their members, who are
 * the host's people) and the sandbox's user, with no password anywhere. */

#include "sandbox/root_private.h"

#include "sandbox/protocol.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

struct walk {
	uid_t host_uid;
	struct error *err;
};

/* The upper directory name (made when missing, owned and moded as the
 * host's), for whiteouts below it. */
static int upper_dir(int upper, const char *name, const struct stat *st, struct walk *w)
{
	if (mkdirat(upper, name, st->st_mode & 07777) != 0 && errno != EEXIST)
		return error_set(w->err, errno, "cannot create the upper directory %s", name), -1;
	int fd = openat(upper, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	uid_t owner = st->st_uid == 0 ? w->host_uid : st->st_uid;
	gid_t group = st->st_gid == 0 ? w->host_uid : st->st_gid;
	if (fd < 0 || fchown(fd, owner, group) != 0 || fchmod(fd, st->st_mode & 07777) != 0) {
		error_set(w->err, errno, "cannot prepare the upper directory %s", name);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

bool sandbox_root_hide_one(const char *host_path, int upper, const char *relative, uid_t host_uid,
			   struct error *err)
{
	char path[700], dir[200];
	struct stat st, entry;
	const char *slash = strchr(relative, '/');
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - relative) : 0, relative);
	snprintf(path, sizeof(path), "%s/%s", host_path, relative);
	if (lstat(path, &entry) != 0)
		return true;
	snprintf(path, sizeof(path), "%s/%s", host_path, dir);
	if (slash && (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode)))
		return true;
	struct walk w = { .host_uid = host_uid, .err = err };
	int up = slash ? upper_dir(upper, dir, &st, &w) : fcntl(upper, F_DUPFD_CLOEXEC, 3);
	if (up < 0)
		return false;
	/* A whiteout: a character device 0:0, which needs no privilege. */
	bool ok = mknodat(up, slash ? slash + 1 : relative, S_IFCHR, makedev(0, 0)) == 0 ||
		  errno == EEXIST;
	close(up);
	return ok || error_set(err, errno, "cannot hide the host's %s/%s", host_path, relative);
}

/* Appends the lines of the host's file whose third field (the id) is
 * below 1000 and whose name is not taken by the sandbox, cut to their
 * first `fields` fields (the rest: empty), to out. */
static void system_lines(const char *etc, const char *file, int fields, FILE *out, FILE *names)
{
	char path[700];
	snprintf(path, sizeof(path), "%s/%s", etc, file);
	FILE *in = fopen(path, "re");
	if (!in)
		return;
	char line[1024];
	while (fgets(line, sizeof(line), in)) {
		char *field[8] = { 0 };
		int n = 0;
		for (char *p = line; n < 8;) {
			field[n++] = p;
			char *colon = strchr(p, ':');
			if (!colon)
				break;
			*colon = '\0';
			p = colon + 1;
		}
		if (n < 4)
			continue;
		field[n - 1][strcspn(field[n - 1], "\n")] = '\0';
		char *end;
		long id = strtol(field[2], &end, 10);
		if (*end || end == field[2] || id < 0 || (id >= 1000 && id != 65534) ||
		    strcmp(field[0], "user") == 0 || id == SANDBOX_USER_ID)
			continue;
		for (int i = 0; i < fields; i++)
			fprintf(out, "%s%s", i ? ":" : "", i < n ? field[i] : "");
		/* group: no members; passwd: all seven fields */
		fputs(fields == 3 ? ":\n" : "\n", out);
		if (names)
			fprintf(names, "%s\n", field[0]);
	}
	fclose(in);
}

static bool write_file(int dir, const char *name, const char *text, size_t len, mode_t mode,
		       uid_t owner, struct error *err)
{
	int fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	bool ok = fd >= 0 && write(fd, text, len) == (ssize_t)len &&
		  fchown(fd, owner, owner) == 0 && fchmod(fd, mode) == 0;
	if (!ok)
		error_set(err, errno, "cannot write %s in the root's layer", name);
	if (fd >= 0)
		close(fd);
	return ok;
}

bool sandbox_root_write_users(int upper_etc, uid_t host_uid, const char *home,
			      const char *source_etc, struct error *err)
{
	/* A restored snapshot's (snapshot.h), with the users it added. */
	if (faccessat(upper_etc, "passwd", F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		return true;
	char *users = NULL, *groups = NULL, *shadow = NULL, *gshadow = NULL, *names = NULL;
	size_t users_len = 0, groups_len = 0, shadow_len = 0, gshadow_len = 0, names_len = 0;
	FILE *u = open_memstream(&users, &users_len), *g = open_memstream(&groups, &groups_len);
	FILE *n = open_memstream(&names, &names_len);
	bool ok = false;
	if (!u || !g || !n)
		goto out;
	system_lines(source_etc, "passwd", 7, u, n);
	fprintf(u, "user:x:%d:%d:user:%s:/bin/sh\n", SANDBOX_USER_ID, SANDBOX_USER_ID, home);
	fprintf(n, "user\n");
	system_lines(source_etc, "group", 3, g, NULL);
	fprintf(g, "user:x:%d:\n", SANDBOX_USER_ID);
	fclose(n);
	n = NULL;
	FILE *s = open_memstream(&shadow, &shadow_len),
	     *gs = open_memstream(&gshadow, &gshadow_len);
	for (char *name = names, *next; s && gs && name && *name; name = next + 1) {
		next = strchr(name, '\n');
		*next = '\0';
		fprintf(s, "%s:*:19000:0:99999:7:::\n", name);
	}
	fclose(g);
	g = NULL;
	/* gshadow: every group, locked */
	for (char *line = groups, *next; gs && line && *line; line = next + 1) {
		next = strchr(line, '\n');
		fprintf(gs, "%.*s:*::\n", (int)strcspn(line, ":"), line);
	}
	if (s)
		fclose(s);
	if (gs)
		fclose(gs);
	fclose(u);
	u = NULL;
	/* apt would drop to _apt, which the sandbox cannot become (one uid,
	 * no setgroups): it fetches as root instead, as in containers. */
	static const char apt_conf[] = "APT::Sandbox::User \"root\";\n";
	int apt = openat(upper_etc, "apt", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int conf = -1;
	if (apt < 0 && mkdirat(upper_etc, "apt", 0755) == 0)
		apt = openat(upper_etc, "apt", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (apt >= 0 && (mkdirat(apt, "apt.conf.d", 0755) == 0 || errno == EEXIST))
		conf = openat(apt, "apt.conf.d", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (apt >= 0) {
		if (fchown(apt, host_uid, host_uid) != 0)
			conf = conf >= 0 ? (close(conf), -1) : -1;
		close(apt);
	}
	bool apt_ok = conf >= 0 && fchown(conf, host_uid, host_uid) == 0 &&
		      write_file(conf, "00lizard-sandbox", apt_conf, sizeof(apt_conf) - 1, 0644,
				 host_uid, err);
	if (conf >= 0)
		close(conf);
	ok = apt_ok && users && groups && shadow && gshadow &&
	     write_file(upper_etc, "passwd", users, users_len, 0644, host_uid, err) &&
	     write_file(upper_etc, "group", groups, groups_len, 0644, host_uid, err) &&
	     write_file(upper_etc, "shadow", shadow, shadow_len, 0640, host_uid, err) &&
	     write_file(upper_etc, "gshadow", gshadow, gshadow_len, 0640, host_uid, err);
out:
	if (u)
		fclose(u);
	if (g)
		fclose(g);
	if (n)
		fclose(n);
	free(users);
	free(groups);
	free(shadow);
	free(gshadow);
	free(names);
	if (!ok && err && !err->message[0])
		error_set(err, ENOMEM, "cannot make the users and groups of the root");
	return ok;
}
