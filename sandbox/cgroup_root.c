/* SPDX-License-Identifier: MIT */
/* Finding where this daemon may create cgroups, and its own directory there.
 *
 * /proc/self/mountinfo says where each hierarchy is mounted (and which part
 * of it the mount shows: inside a cgroup namespace or a container the mount
 * root is not "/"); /proc/self/cgroup says which cgroup we are in, in each.
 * Together they give our own cgroup's directory, under which everything of
 * this daemon goes: <own>/lizard-bridge/<pid>-<start time>/<session>. */
#include "sandbox/name.h"
#include "sandbox/cgroup_state.h"
#include "sandbox/cgroup_files.h"
#include "sandbox/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_MOUNTS 32

struct cgroup_mount {
	bool v2;
	unsigned controllers; /* v1: CGROUP_* bits in its options */
	char root[1024];
	char point[1024];
};

static const struct {
	const char *name;
	unsigned bit;
} controller_names[] = {
	{ "cpu", CGROUP_CPU },   { "cpuacct", CGROUP_CPUACCT }, { "memory", CGROUP_MEMORY },
	{ "pids", CGROUP_PIDS }, { "freezer", CGROUP_FREEZER },
};
#define CONTROLLER_COUNT (sizeof(controller_names) / sizeof(controller_names[0]))

/* The bits of the controllers named in a list separated by sep (",", " "). */
static unsigned controllers_in(const char *list, char sep)
{
	unsigned bits = 0;
	const char *p = list;
	while (*p) {
		const char *end = strchr(p, sep);
		size_t len = end ? (size_t)(end - p) : strlen(p);
		while (len > 0 && (p[len - 1] == '\n' || p[len - 1] == ' '))
			len--;
		for (size_t i = 0; i < CONTROLLER_COUNT; i++)
			if (strlen(controller_names[i].name) == len &&
			    strncmp(p, controller_names[i].name, len) == 0)
				bits |= controller_names[i].bit;
		if (!end)
			break;
		p = end + 1;
	}
	return bits;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape_octal(char *s)
{
	char *out = s;
	for (char *p = s; *p; p++) {
		if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' &&
		    p[3] >= '0' && p[3] <= '7') {
			*out++ = (char)((p[1] - '0') << 6 | (p[2] - '0') << 3 | (p[3] - '0'));
			p += 3;
		} else {
			*out++ = *p;
		}
	}
	*out = '\0';
}

static size_t read_mounts(struct cgroup_mount *mounts, struct error *err, bool *ok)
{
	*ok = false;
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f) {
		error_set(err, errno, "cannot open /proc/self/mountinfo");
		return 0;
	}
	size_t count = 0;
	char line[4096];
	while (count < MAX_MOUNTS && fgets(line, sizeof(line), f)) {
		/* id parent major:minor root point options [optional...] - type source super */
		char root[1024], point[1024];
		if (sscanf(line, "%*s %*s %*s %1023s %1023s", root, point) != 2)
			continue;
		const char *dash = strstr(line, " - ");
		if (!dash)
			continue;
		char type[32], source[256], super[1024];
		if (sscanf(dash + 3, "%31s %255s %1023s", type, source, super) != 3)
			continue;
		bool v2 = strcmp(type, "cgroup2") == 0;
		if (!v2 && strcmp(type, "cgroup") != 0)
			continue;
		struct cgroup_mount *m = &mounts[count];
		m->v2 = v2;
		m->controllers = v2 ? 0 : controllers_in(super, ',');
		if (!v2 && !m->controllers)
			continue; /* name=systemd, cpuset, devices...: nothing we use */
		unescape_octal(root);
		unescape_octal(point);
		snprintf(m->root, sizeof(m->root), "%s", root);
		snprintf(m->point, sizeof(m->point), "%s", point);
		count++;
	}
	fclose(f);
	*ok = true;
	return count;
}

/* Our cgroup's directory in mount m, given our path in its hierarchy. */
static char *own_dir(const struct cgroup_mount *m, const char *path)
{
	size_t root_len = strcmp(m->root, "/") == 0 ? 0 : strlen(m->root);
	if (strncmp(path, m->root, root_len) != 0 || (path[root_len] && path[root_len] != '/'))
		return NULL; /* this mount shows another part of the tree */
	const char *rest = path + root_len;
	if (strcmp(rest, "/") == 0)
		rest = "";
	size_t a = strlen(m->point), b = strlen(rest);
	char *dir = malloc(a + b + 1);
	if (dir) {
		memcpy(dir, m->point, a);
		memcpy(dir + a, rest, b + 1);
	}
	return dir;
}

/* Our path in the hierarchy holding controller bit (v1), or the unified one
 * (bit 0), from /proc/self/cgroup lines "id:controllers:path". */
static bool own_path(unsigned bit, char *path, size_t size)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	if (!f)
		return false;
	char line[4096];
	bool found = false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *first = strchr(line, ':');
		char *second = first ? strchr(first + 1, ':') : NULL;
		if (!second)
			continue;
		*second = '\0';
		const char *list = first + 1;
		bool match = bit ? (controllers_in(list, ',') & bit) != 0
				 : (!*list && line[0] == '0');
		if (!match)
			continue;
		char *p = second + 1;
		p[strcspn(p, "\n")] = '\0';
		found = (size_t)snprintf(path, size, "%s", p) < size;
	}
	fclose(f);
	return found;
}

/* "<pid>-<start time in clock ticks since boot>" of pid, which tells a live
 * daemon from a dead one whose pid was reused. */
static bool process_id(pid_t pid, char *out, size_t size)
{
	char path[64], stat[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	size_t n = fread(stat, 1, sizeof(stat) - 1, f);
	fclose(f);
	stat[n] = '\0';
	/* The command name may hold spaces and parentheses; fields resume after the last ')'. */
	char *p = strrchr(stat, ')');
	if (!p)
		return false;
	unsigned long long start = 0;
	/* After ')': state (field 3) ... starttime is field 22. */
	if (sscanf(p + 1,
		   " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
		   "%*d %*d %llu",
		   &start) != 1)
		return false;
	return (size_t)snprintf(out, size, "%d-%llu", (int)pid, start) < size;
}

static bool make_dir(const char *path, bool may_exist, struct error *err)
{
	if (mkdir(path, 0755) == 0 || (may_exist && errno == EEXIST))
		return true;
	if (errno == EACCES || errno == EPERM || errno == EROFS)
		return error_set(err, errno,
				 "cannot create cgroup %s (the daemon needs root, "
				 "or a cgroup delegated to its user)",
				 path);
	return error_set(err, errno, "cannot create cgroup %s", path);
}

static bool add_hierarchy(struct sandbox_cgroup_root *root, char *own, unsigned controllers,
			  struct error *err)
{
	struct cgroup_hierarchy *h = &root->hierarchy[root->count];
	h->parent = cgroup_path_join(own, CGROUP_PARENT_NAME);
	h->dir = h->parent ? cgroup_path_join(h->parent, root->id) : NULL;
	h->controllers = controllers;
	free(own);
	if (!h->dir) {
		free(h->parent);
		h->parent = NULL;
		return error_set(err, ENOMEM, "cgroup paths");
	}
	root->count++;
	root->controllers |= controllers;
	return true;
}

static bool setup_v1(struct sandbox_cgroup_root *root, const struct cgroup_mount *mounts,
		     size_t mount_count, struct error *err)
{
	for (size_t i = 0; i < mount_count; i++) {
		const struct cgroup_mount *m = &mounts[i];
		if (m->v2)
			continue;
		/* A hierarchy mounted twice (bind mounts) counts once. */
		bool seen = false;
		for (size_t j = 0; j < i; j++)
			seen |= !mounts[j].v2 && mounts[j].controllers == m->controllers;
		if (seen || root->count == SANDBOX_CGROUP_MAX_HIERARCHIES)
			continue;
		unsigned first = m->controllers & -m->controllers;
		char path[2048];
		if (!own_path(first, path, sizeof(path)))
			continue;
		char *own = own_dir(m, path);
		if (!own)
			continue;
		if (!add_hierarchy(root, own, m->controllers, err))
			return false;
	}
	if (root->count == 0)
		return error_set(err, 0,
				 "no cgroup v1 hierarchy with cpu, memory, pids or "
				 "freezer is mounted where this process can reach it");
	for (size_t i = 0; i < root->count; i++) {
		if (!make_dir(root->hierarchy[i].parent, true, err) ||
		    !make_dir(root->hierarchy[i].dir, false, err))
			return false;
	}
	return true;
}

/* v2 allows controllers in a cgroup's subtree only when that cgroup holds
 * no processes (the root excepted). A delegated cgroup (systemd
 * Delegate=yes) usually holds the daemon itself, so the daemon moves into a
 * leaf of its own; any other process there is somebody else's, and we stop. */
static bool enable_v2(struct sandbox_cgroup_root *root, const char *own, const char *enable,
		      struct error *err)
{
	struct cgroup_hierarchy *h = &root->hierarchy[0];
	if (cgroup_write(own, "cgroup.subtree_control", enable, err))
		return true;
	if (err->code != EBUSY)
		return false;
	pid_t *pids;
	size_t count;
	if (!cgroup_read_pids(own, &pids, &count, err))
		return false;
	pid_t other = 0;
	for (size_t i = 0; i < count; i++)
		if (pids[i] != getpid())
			other = pids[i];
	free(pids);
	if (other)
		return error_set(err, EBUSY,
				 "cgroup v2: %s also holds process %d, so no "
				 "controller can be enabled below it; start the daemon in a "
				 "cgroup of its own (e.g. systemd-run --scope -p Delegate=yes)",
				 own, (int)other);
	char *leaf = cgroup_path_join(h->dir, CGROUP_DAEMON_LEAF);
	if (!leaf)
		return error_set(err, ENOMEM, "cgroup paths");
	char pid[24];
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	bool moved = make_dir(leaf, false, err) && cgroup_write(leaf, "cgroup.procs", pid, err);
	free(leaf);
	if (!moved)
		return false;
	root->moved_into_leaf = true;
	return cgroup_write(own, "cgroup.subtree_control", enable, err);
}

static bool setup_v2(struct sandbox_cgroup_root *root, const struct cgroup_mount *mounts,
		     size_t mount_count, struct error *err)
{
	char path[2048];
	if (!own_path(0, path, sizeof(path)))
		return error_set(err, 0, "/proc/self/cgroup has no cgroup v2 entry");
	char *own = NULL;
	for (size_t i = 0; i < mount_count && !own; i++)
		if (mounts[i].v2)
			own = own_dir(&mounts[i], path);
	if (!own)
		return error_set(err, 0, "no cgroup v2 mount shows this process's cgroup %s", path);
	/* Opened before in this process (a probe, then the real one): we sit in
	 * our own leaf already, and our cgroup is the one above it. */
	char leaf[160];
	snprintf(leaf, sizeof(leaf), "/%s/%s/%s", CGROUP_PARENT_NAME, root->id, CGROUP_DAEMON_LEAF);
	size_t own_len = strlen(own), leaf_len = strlen(leaf);
	if (own_len > leaf_len && strcmp(own + own_len - leaf_len, leaf) == 0) {
		own[own_len - leaf_len] = '\0';
		root->moved_into_leaf = true;
	}
	char available[256];
	if (!cgroup_read(own, "cgroup.controllers", available, sizeof(available), err)) {
		free(own);
		return false;
	}
	/* cpu.stat (usage) exists without the cpu controller, cgroup.freeze in
	 * every non-root cgroup: both are core v2. */
	unsigned controllers = (controllers_in(available, ' ') &
				(CGROUP_CPU | CGROUP_MEMORY | CGROUP_PIDS)) |
			       CGROUP_CPUACCT | CGROUP_FREEZER;
	if (!add_hierarchy(root, own, controllers, err))
		return false;
	struct cgroup_hierarchy *h = &root->hierarchy[0];
	char *own_again = strndup(h->parent, strlen(h->parent) - strlen("/" CGROUP_PARENT_NAME));
	if (!own_again)
		return error_set(err, ENOMEM, "cgroup paths");
	char enable[64] = "";
	if (controllers & CGROUP_CPU)
		strcat(enable, "+cpu ");
	if (controllers & CGROUP_MEMORY)
		strcat(enable, "+memory ");
	if (controllers & CGROUP_PIDS)
		strcat(enable, "+pids ");
	bool ok = make_dir(h->parent, true, err) && make_dir(h->dir, root->moved_into_leaf, err);
	if (ok && enable[0])
		ok = enable_v2(root, own_again, enable, err) &&
		     cgroup_write(h->parent, "cgroup.subtree_control", enable, err) &&
		     cgroup_write(h->dir, "cgroup.subtree_control", enable, err);
	free(own_again);
	return ok;
}

static void free_root(struct sandbox_cgroup_root *root)
{
	for (size_t i = 0; i < root->count; i++) {
		free(root->hierarchy[i].dir);
		free(root->hierarchy[i].parent);
	}
	free(root);
}

/* Removes what open made; quietly, since it runs after another error. */
static void remove_dirs(struct sandbox_cgroup_root *root)
{
	for (size_t i = 0; i < root->count; i++) {
		if (!root->moved_into_leaf)
			rmdir(root->hierarchy[i].dir);
		rmdir(root->hierarchy[i].parent); /* fails while other daemons use it: fine */
	}
}

static bool v2_has_memory(const struct cgroup_mount *mounts, size_t count)
{
	char path[2048], available[256];
	if (!own_path(0, path, sizeof(path)))
		return false;
	for (size_t i = 0; i < count; i++) {
		if (!mounts[i].v2)
			continue;
		char *own = own_dir(&mounts[i], path);
		bool has = own &&
			   cgroup_read(own, "cgroup.controllers", available, sizeof(available),
				       NULL) &&
			   (controllers_in(available, ' ') & CGROUP_MEMORY);
		free(own);
		if (has)
			return true;
	}
	return false;
}

struct sandbox_cgroup_root *sandbox_cgroup_root_open(enum sandbox_cgroup_version version,
						     struct error *err)
{
	struct cgroup_mount *mounts = calloc(MAX_MOUNTS, sizeof(*mounts));
	struct sandbox_cgroup_root *root = calloc(1, sizeof(*root));
	if (!mounts || !root) {
		free(mounts);
		free(root);
		return error_null(err, ENOMEM, "cgroup discovery");
	}
	bool ok;
	size_t count = read_mounts(mounts, err, &ok);
	if (!ok)
		goto failed;
	bool any_v1 = false, any_v2 = false;
	for (size_t i = 0; i < count; i++) {
		any_v1 |= !mounts[i].v2;
		any_v2 |= mounts[i].v2;
	}
	if (version == SANDBOX_CGROUP_AUTO) {
		if (any_v2 && (v2_has_memory(mounts, count) || !any_v1))
			version = SANDBOX_CGROUP_V2;
		else if (any_v1)
			version = SANDBOX_CGROUP_V1;
	}
	if (version == SANDBOX_CGROUP_AUTO || (version == SANDBOX_CGROUP_V1 && !any_v1) ||
	    (version == SANDBOX_CGROUP_V2 && !any_v2)) {
		error_set(err, 0, "no %scgroup file system is mounted (see /proc/self/mountinfo)",
			  version == SANDBOX_CGROUP_V1   ? "v1 "
			  : version == SANDBOX_CGROUP_V2 ? "v2 "
							 : "");
		goto failed;
	}
	root->version = version;
	if (!process_id(getpid(), root->id, sizeof(root->id))) {
		error_set(err, errno, "cannot read /proc/%d/stat", (int)getpid());
		goto failed;
	}
	if (!(version == SANDBOX_CGROUP_V1 ? setup_v1 : setup_v2)(root, mounts, count, err)) {
		remove_dirs(root);
		goto failed;
	}
	free(mounts);
	return root;

failed:
	free(mounts);
	free_root(root);
	return NULL;
}

enum sandbox_cgroup_version sandbox_cgroup_root_version(const struct sandbox_cgroup_root *root)
{
	return root->version;
}

const char *sandbox_cgroup_root_dir(const struct sandbox_cgroup_root *root, size_t index)
{
	return index < root->count ? root->hierarchy[index].dir : NULL;
}

void sandbox_cgroup_root_describe(const struct sandbox_cgroup_root *root, char *out, size_t size)
{
	snprintf(out, size, "cgroup v%d under %s:%s%s%s%s",
		 root->version == SANDBOX_CGROUP_V1 ? 1 : 2,
		 root->count ? root->hierarchy[0].dir : "?",
		 root->controllers & CGROUP_CPU ? " cpu" : "",
		 root->controllers & CGROUP_MEMORY ? " memory" : "",
		 root->controllers & CGROUP_PIDS ? " pids" : "",
		 root->controllers & CGROUP_FREEZER ? " freezer" : "");
}

void sandbox_cgroup_root_close(struct sandbox_cgroup_root *root, struct error *err)
{
	if (!root)
		return;
	for (size_t i = 0; i < root->count; i++) {
		/* A v2 daemon sits in its own leaf and cannot leave it (its old cgroup
		 * now has controllers enabled): the next start removes the leaf. */
		if (!root->moved_into_leaf && rmdir(root->hierarchy[i].dir) != 0 && errno != ENOENT)
			error_set(err, errno, "cannot remove cgroup %s", root->hierarchy[i].dir);
		rmdir(root->hierarchy[i].parent);
	}
	free_root(root);
}

bool sandbox_cgroup_available(struct error *err)
{
	error_clear(err);
	struct sandbox_cgroup_root *root = sandbox_cgroup_root_open(SANDBOX_CGROUP_AUTO, err);
	if (!root)
		return false;
	bool limits = (root->controllers & (CGROUP_CPU | CGROUP_MEMORY | CGROUP_PIDS)) ==
		      (CGROUP_CPU | CGROUP_MEMORY | CGROUP_PIDS);
	char found[256];
	if (!limits)
		sandbox_cgroup_root_describe(root, found, sizeof(found));
	sandbox_cgroup_root_close(root, NULL);
	if (!limits)
		return error_set(err, 0,
				 "the cpu, memory and pids controllers are not all "
				 "available (%s)",
				 found);
	return true;
}

/* A session cgroup of a dead daemon: its directory in every hierarchy. */
static unsigned remove_stale_group(struct sandbox_cgroup_root *root, const char *id,
				   const char *name, struct error *err)
{
	struct sandbox_cgroup cg = { .version = root->version };
	/* Names in messages only; a foreign directory name may be longer. */
	snprintf(cg.name, sizeof(cg.name), "%.*s", SANDBOX_NAME_MAX, name);
	for (size_t i = 0; i < root->count; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s/%s", root->hierarchy[i].parent, id, name);
		struct stat st;
		if (stat(path, &st) != 0)
			continue;
		cg.dir[cg.count] = strdup(path);
		cg.controllers[cg.count] = root->hierarchy[i].controllers;
		if (cg.dir[cg.count])
			cg.count++;
	}
	bool removed = cgroup_kill_and_remove(&cg, 2000, err);
	for (size_t i = 0; i < cg.count; i++)
		free(cg.dir[i]);
	return removed && strcmp(name, CGROUP_DAEMON_LEAF) != 0 ? 1 : 0;
}

static bool stale_id(const struct sandbox_cgroup_root *root, const char *name)
{
	int pid;
	unsigned long long start;
	char tail;
	if (strcmp(name, root->id) == 0 || sscanf(name, "%d-%llu%c", &pid, &start, &tail) != 2 ||
	    pid <= 0)
		return false; /* ours, or not a daemon directory */
	char live[48];
	return !process_id(pid, live, sizeof(live)) || strcmp(live, name) != 0;
}

bool sandbox_cgroup_root_remove_stale(struct sandbox_cgroup_root *root, unsigned *removed,
				      struct error *err)
{
	*removed = 0;
	bool ok = true;
	for (size_t i = 0; i < root->count; i++) {
		DIR *parent = opendir(root->hierarchy[i].parent);
		if (!parent)
			return error_set(err, errno, "cannot list %s", root->hierarchy[i].parent);
		struct dirent *d;
		while ((d = readdir(parent))) {
			if (d->d_type != DT_DIR || !stale_id(root, d->d_name))
				continue;
			char id[256];
			snprintf(id, sizeof(id), "%s", d->d_name);
			char path[4096];
			snprintf(path, sizeof(path), "%s/%s", root->hierarchy[i].parent, id);
			DIR *daemon = opendir(path);
			if (!daemon)
				continue;
			struct dirent *s;
			while ((s = readdir(daemon))) {
				if (s->d_type == DT_DIR && strcmp(s->d_name, ".") != 0 &&
				    strcmp(s->d_name, "..") != 0) {
					struct error group_err;
					unsigned n = remove_stale_group(root, id, s->d_name,
									&group_err);
					*removed += n;
					if (!n && strcmp(s->d_name, CGROUP_DAEMON_LEAF) != 0) {
						ok = false;
						*err = group_err;
					}
				}
			}
			closedir(daemon);
			for (size_t j = 0; j < root->count; j++) {
				snprintf(path, sizeof(path), "%s/%s", root->hierarchy[j].parent,
					 id);
				if (rmdir(path) != 0 && errno != ENOENT && ok) {
					ok = false;
					error_set(err, errno, "cannot remove stale cgroup %s",
						  path);
				}
			}
		}
		closedir(parent);
	}
	return ok;
}
