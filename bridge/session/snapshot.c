/* SPDX-License-Identifier: MIT */
/* A session's snapshot: its sandbox's files (the sandbox's snapshot.h),
 * copied while its processes are frozen, and how it was made. */
#include "bridge/session/snapshot.h"

#include "bridge/session/info.h"
#include "bridge/session/resources.h"
#include "bridge/session/session.h"
#include "bridge/session/state.h"

#include "sandbox/snapshot.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a restore needs besides the files: how the session was made. */
static bool write_meta(struct bridge_session *s, const char *dest, struct error *err)
{
	cJSON *meta = bridge_session_describe(s);
	cJSON *envs = meta ? cJSON_AddObjectToObject(meta, "envs") : NULL;
	for (size_t i = 0; envs && s->envs[i]; i++) {
		const char *equals = strchr(s->envs[i], '=');
		char name[256];
		snprintf(name, sizeof(name), "%.*s", (int)(equals - s->envs[i]), s->envs[i]);
		cJSON_AddStringToObject(envs, name, equals + 1);
	}
	char *text = envs ? cJSON_PrintUnformatted(meta) : NULL;
	cJSON_Delete(meta);
	char path[700];
	snprintf(path, sizeof(path), "%s/meta.json", dest);
	FILE *f = text ? fopen(path, "wxe") : NULL;
	bool ok = f && fputs(text, f) >= 0;
	ok = f && fclose(f) == 0 && ok;
	free(text);
	return ok || error_set(err, errno, "cannot write %s", path);
}

static bool save(struct bridge_session *s, void *dest, struct error *err)
{
	return sandbox_snapshot_save(bridge_session_sandbox(s), dest, err) &&
	       write_meta(s, dest, err);
}

bool bridge_session_snapshot(struct bridge_session *s, const char *dest, struct error *err)
{
	return bridge_session_while_frozen(s, save, (void *)dest, err);
}
