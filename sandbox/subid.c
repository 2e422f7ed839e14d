/* SPDX-License-Identifier: MIT */
#include "sandbox/subid.h"

#include "sandbox/child.h"
#include "sandbox/command.h"
#include "sandbox/tree.h"
#include "sandbox/uid.h"
#include "sandbox/userns.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <pwd.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define NEWUIDMAP "/usr/bin/newuidmap"
#define NEWGIDMAP "/usr/bin/newgidmap"
/* Both read two small files and the user database. */
#define MAP_TOOL_DEADLINE_MS 5000
/* A layer may hold a whole installed system. */
#define REMOVE_DEADLINE_MS 120000

bool sandbox_subid_pick(const struct sandbox_id_spans *spans, uint32_t *start)
{
	for (size_t i = 0; i < spans->count; i++) {
		const struct sandbox_id_span *span = &spans->items[i];
		if (span->end - span->first >= SANDBOX_SUBID_COUNT && span->end <= UINT32_MAX) {
			*start = (uint32_t)span->first;
			return true;
		}
	}
	return false;
}

/* The start of a range of owner's in file, if it has one. */
static bool find_in(const char *file, const struct sandbox_subid_owner *owner, uint32_t *start)
{
	struct sandbox_id_spans spans = { 0 };
	bool found = sandbox_subid_load(file, owner, &spans, NULL) &&
		     sandbox_subid_pick(&spans, start);
	sandbox_id_spans_finish(&spans);
	return found;
}

static struct {
	pthread_once_t once;
	bool found;
	struct sandbox_subids ids;
} daemon_ids = { .once = PTHREAD_ONCE_INIT };

static void find_once(void)
{
	struct sandbox_subids *ids = &daemon_ids.ids;
	ids->uid = geteuid();
	ids->gid = getegid();
	if (ids->uid == 0 || access(NEWUIDMAP, X_OK) != 0 || access(NEWGIDMAP, X_OK) != 0)
		return;
	char buffer[4096];
	struct passwd user, *found = NULL;
	getpwuid_r(ids->uid, &user, buffer, sizeof(buffer), &found);
	struct sandbox_subid_owner owner = { found ? found->pw_name : NULL, ids->uid };
	if (!find_in("/etc/subuid", &owner, &ids->uid_start) ||
	    !find_in("/etc/subgid", &owner, &ids->gid_start))
		return;
	/* Once, for real: newuidmap may be there and still refuse (not setuid,
	 * a nosuid mount), and then every session would fail to start. */
	struct error why;
	int ns = sandbox_subid_userns(ids, &why);
	daemon_ids.found = ns >= 0;
	if (ns >= 0)
		close(ns);
}

bool sandbox_subids(struct sandbox_subids *out)
{
	pthread_once(&daemon_ids.once, find_once);
	if (daemon_ids.found && out)
		*out = daemon_ids.ids;
	return daemon_ids.found;
}

/* Waits for pid until the deadline, then kills it: its exit code, 128
 * when a signal ended it, -1 when it had to be killed. */
static int wait_until(pid_t pid, int deadline_ms)
{
	int status = sandbox_reap(pid, deadline_ms);
	return status < 0 ? -1 : WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* tool PID 0 OWN 1 1 START COUNT, for the process in the new namespace. */
static bool run_map_tool(const char *tool, pid_t pid, unsigned own, uint32_t start,
			 struct error *err)
{
	char pid_text[16], own_text[16], start_text[16], count_text[16];
	snprintf(pid_text, sizeof(pid_text), "%d", (int)pid);
	snprintf(own_text, sizeof(own_text), "%u", own);
	snprintf(start_text, sizeof(start_text), "%u", (unsigned)start);
	snprintf(count_text, sizeof(count_text), "%u", SANDBOX_SUBID_COUNT);
	char *argv[] = { (char *)tool, pid_text,   "0",        own_text, "1",
			 "1",          start_text, count_text, NULL };
	char *envp[] = { NULL };
	pid_t child;
	int rc = posix_spawn(&child, tool, NULL, NULL, argv, envp);
	if (rc != 0)
		return error_set(err, rc, "cannot start %s", tool);
	int status = wait_until(child, MAP_TOOL_DEADLINE_MS);
	if (status != 0)
		return error_set(err, 0, "%s failed (%s) for the range %u-%u of /etc/sub%cid", tool,
				 status < 0 ? "no answer in time" : "exit status not 0",
				 (unsigned)start, (unsigned)(start + SANDBOX_SUBID_COUNT - 1),
				 strcmp(tool, NEWUIDMAP) == 0 ? 'u' : 'g');
	return true;
}

static bool write_maps(pid_t pid, void *arg, struct error *err)
{
	const struct sandbox_subids *ids = arg;
	return run_map_tool(NEWUIDMAP, pid, ids->uid, ids->uid_start, err) &&
	       run_map_tool(NEWGIDMAP, pid, ids->gid, ids->gid_start, err);
}

int sandbox_subid_userns(const struct sandbox_subids *ids, struct error *err)
{
	return sandbox_userns_make_own(write_maps, (void *)ids, err);
}

bool sandbox_subid_remove(const char *path, struct error *err)
{
	struct sandbox_subids ids;
	if (sandbox_tree_remove(path, err))
		return true;
	if (!sandbox_subids(&ids))
		return false;
	/* err keeps what the plain removal met, unless this one succeeds.
	 * Never into another file system: nothing of the daemon's is mounted
	 * below a session's directory, and nothing else may be removed. */
	struct error why;
	int userns = sandbox_subid_userns(&ids, &why);
	if (userns < 0)
		return false;
	const char *argv[] = { "/usr/bin/rm", "-rf", "--one-file-system", "--", path, NULL };
	bool removed = sandbox_command_run_in(argv, -1, userns, REMOVE_DEADLINE_MS, "rm -rf", &why);
	close(userns);
	struct stat st;
	if (!removed || lstat(path, &st) == 0 || errno != ENOENT)
		return error_prefix(err, "%s (and as root of the subordinate ids' namespace: %s)",
				    path, removed ? "it is still there" : why.message);
	if (err)
		error_clear(err);
	return true;
}
