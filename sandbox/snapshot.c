/* SPDX-License-Identifier: MIT */
#include "sandbox/snapshot.h"

#include "sandbox/command.h"
#include "sandbox/state.h"
#include "sandbox/tree.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A copy of gigabytes takes a while; a stuck one must not hold a worker. */
#define TOOL_TIMEOUT_MS 600000

/* A snapshot's files: a whole system's, with room to spare. */
#define SNAPSHOT_MAX_ENTRIES 20000000u

/* Copies the contents of each directory pairs[2i] into pairs[2i + 1]
 * (made when missing), as they are: one shell that runs cp for them all,
 * since every program the daemon starts itself costs it far more than one
 * a small shell starts. The paths travel as arguments, never inside the
 * script. A daemon that is not root copies as root of the session's user
 * namespace when its sandboxes map its subordinate ids (subid.h): files
 * root inside gave to those ids are theirs to read, and cp keeps their
 * owners only as a root that maps them. */
static bool copy_trees(const struct sandbox *s, const char *const *pairs, size_t count,
		       struct error *err)
{
	static const char script[] = "while [ $# -gt 1 ]; do\n"
				     "  mkdir -p -m 0700 -- \"$2\" &&\n"
				     "  cp -a --no-target-directory -- \"$1/.\" \"$2\" || exit 1\n"
				     "  shift 2\n"
				     "done\n";
	const char *argv[8 + 2 * 8] = { "/bin/sh", "-c", script, "sh" };
	size_t n = 4;
	for (size_t i = 0; i < 2 * count && n < sizeof(argv) / sizeof(argv[0]) - 1; i++)
		argv[n++] = pairs[i];
	argv[n] = NULL;
	int userns = geteuid() != 0 ? s->userns_fd : -1; /* a root daemon's is the block's */
	return sandbox_command_run_in(argv, -1, userns, TOOL_TIMEOUT_MS,
				      "copying the snapshot's files", err);
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
	char upper[300], path[700], targets[5][700];
	const char *pairs[10];
	snprintf(upper, sizeof(upper), "%s/upper", s->layers);
	for (size_t i = 0; i < n; i++) {
		snprintf(targets[i], sizeof(targets[i]), "%s/%s", dest, parts[i].name);
		pairs[2 * i] = parts[i].path ? parts[i].path : upper;
		pairs[2 * i + 1] = targets[i];
	}
	if (!copy_trees(s, pairs, n, err))
		return false;
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
	/* The ids its files have: the sandbox's, which a restore shifts to its
	 * own. */
	fprintf(f, "%u %u\n", (unsigned)s->host_uid, (unsigned)s->id_count);
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
	unsigned uid = 0, ids = 1;
	int fields = f ? fscanf(f, "%u %u", &uid, &ids) : 0;
	bool read = fields >= 1 && ids >= 1;
	if (fields == 1)
		ids = 1; /* written before sandboxes had blocks of ids */
	if (f)
		fclose(f);
	if (!read)
		return error_set(err, errno, "cannot read %s", path);
	struct part parts[5];
	size_t n = parts_of(s, parts), count = 0;
	char upper[300], sources[5][700];
	const char *pairs[10];
	snprintf(upper, sizeof(upper), "%s/upper", s->layers);
	for (size_t i = 0; i < n; i++) {
		snprintf(sources[count], sizeof(sources[count]), "%s/%s", dir, parts[i].name);
		struct stat st;
		if (stat(sources[count], &st) != 0)
			continue; /* it had a volume there, or no disk */
		pairs[2 * count] = sources[count];
		pairs[2 * count + 1] = parts[i].path ? parts[i].path : upper;
		count++;
	}
	if (!copy_trees(s, pairs, count, err))
		return false;
	/* Ids the new sandbox does not have stay as they were: unmapped in
	 * its namespace, they show as nobody. */
	uint32_t shifted = ids < s->id_count ? ids : s->id_count;
	for (size_t i = 0; i < count && uid != s->host_uid; i++)
		if (!sandbox_tree_shift(pairs[2 * i + 1], uid, s->host_uid, shifted,
					SNAPSHOT_MAX_ENTRIES, err))
			return false;
	return true;
}
