/* SPDX-License-Identifier: MIT */
#include "sandbox/snapshot.h"

#include "sandbox/command.h"
#include "sandbox/state.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A copy of gigabytes takes a while; a stuck one must not hold a worker. */
#define TOOL_TIMEOUT_MS 600000

/* Copies the contents of directory from into directory to (made when
 * missing, 0700), as they are. */
static bool copy_tree(const char *from, const char *to, struct error *err)
{
	if (mkdir(to, 0700) != 0 && errno != EEXIST)
		return error_set(err, errno, "cannot create %s", to);
	char source[600];
	snprintf(source, sizeof(source), "%s/.", from);
	const char *argv[] = { "/bin/cp", "-a", "--no-target-directory", source, to, NULL };
	return sandbox_command_run(argv, -1, TOOL_TIMEOUT_MS, "cp", err);
}

static bool chown_tree(const char *path, uid_t from, uid_t to, struct error *err)
{
	char from_owner[32], to_owner[32], from_group[32], to_group[32];
	snprintf(from_owner, sizeof(from_owner), "--from=%u", (unsigned)from);
	snprintf(to_owner, sizeof(to_owner), "%u", (unsigned)to);
	snprintf(from_group, sizeof(from_group), "--from=:%u", (unsigned)from);
	snprintf(to_group, sizeof(to_group), ":%u", (unsigned)to);
	const char *owners[] = { "/bin/chown", "-R", "-h", from_owner, to_owner, path, NULL };
	const char *groups[] = { "/bin/chown", "-R", "-h", from_group, to_group, path, NULL };
	return from == to || (sandbox_command_run(owners, -1, TOOL_TIMEOUT_MS, "chown", err) &&
			      sandbox_command_run(groups, -1, TOOL_TIMEOUT_MS, "chown", err));
}

/* What a snapshot holds: name in it, and where it is in the sandbox. */
struct part {
	const char *name;
	const char *path;
};

static size_t parts_of(const struct sandbox *s, struct part *parts)
{
	size_t n = 0;
	parts[n++] = (struct part){ "upper", NULL };
	parts[n++] = (struct part){ "rootfs", s->rootfs };
	parts[n++] = (struct part){ "home", s->home };
	if (s->on_disk)
		parts[n++] = (struct part){ "tmp", s->tmp_dir };
	/* A volume is the volume's, not the session's. */
	if (!s->has_volume)
		parts[n++] = (struct part){ "workspace", s->workspace };
	return n;
}

bool sandbox_snapshot_save(struct sandbox *s, const char *dest, struct error *err)
{
	if (!s->rootfs[0])
		return error_set(err, 0,
				 "snapshots need a writable root, which this session has not "
				 "(session_info's isolation text says why)");
	struct part parts[5];
	size_t n = parts_of(s, parts);
	char upper[300], path[700];
	snprintf(upper, sizeof(upper), "%s/upper", s->layers);
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dest, parts[i].name);
		if (!copy_tree(parts[i].path ? parts[i].path : upper, path, err))
			return false;
	}
	/* bwrap makes these links again at every start, and refuses to find
	 * them there. */
	static const char *const links[] = { "bin", "sbin", "lib", "lib32", "lib64", "libx32" };
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		struct stat st;
		snprintf(path, sizeof(path), "%s/rootfs/%s", dest, links[i]);
		if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
			unlink(path);
	}
	/* What it rests on, unless that is in dest itself (a template's
	 * build, whose image comes along with it). */
	size_t dest_len = strlen(dest);
	if (s->image_dir[0] &&
	    !(strncmp(s->image_dir, dest, dest_len) == 0 && s->image_dir[dest_len] == '/')) {
		snprintf(path, sizeof(path), "%s/lower", dest);
		FILE *lower = fopen(path, "wxe");
		bool written = lower && fprintf(lower, "%s\n", s->image_dir) > 0;
		if (lower && fclose(lower) != 0)
			written = false;
		if (!written)
			return error_set(err, errno, "cannot write %s", path);
	}
	snprintf(path, sizeof(path), "%s/uid", dest);
	FILE *f = fopen(path, "wxe");
	if (!f)
		return error_set(err, errno, "cannot create %s", path);
	fprintf(f, "%u\n", (unsigned)s->host_uid);
	return fclose(f) == 0 || error_set(err, errno, "cannot write %s", path);
}

void sandbox_snapshot_image(const char *dir, char *out, size_t size)
{
	out[0] = '\0';
	char path[700];
	struct stat st;
	snprintf(path, sizeof(path), "%s/image", dir);
	if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(out, size, "%s", path);
		return;
	}
	snprintf(path, sizeof(path), "%s/lower", dir);
	FILE *f = fopen(path, "re");
	if (f && fgets(out, (int)size, f))
		out[strcspn(out, "\n")] = '\0';
	else
		out[0] = '\0';
	if (f)
		fclose(f);
}

bool sandbox_snapshot_restore(struct sandbox *s, const char *dir, struct error *err)
{
	char path[700];
	snprintf(path, sizeof(path), "%s/uid", dir);
	FILE *f = fopen(path, "re");
	unsigned uid = 0;
	bool read = f && fscanf(f, "%u", &uid) == 1;
	if (f)
		fclose(f);
	if (!read)
		return error_set(err, errno, "cannot read %s", path);
	struct part parts[5];
	size_t n = parts_of(s, parts);
	char upper[300];
	snprintf(upper, sizeof(upper), "%s/upper", s->layers);
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, parts[i].name);
		struct stat st;
		if (stat(path, &st) != 0)
			continue; /* it had a volume there, or no disk */
		const char *to = parts[i].path ? parts[i].path : upper;
		if (!copy_tree(path, to, err) || !chown_tree(to, uid, s->host_uid, err))
			return false;
	}
	return true;
}
