/* SPDX-License-Identifier: MIT */
/* A local session's snapshot (the sandbox's snapshot.h holds the files). */
#ifndef LIZARD_BRIDGE_SESSION_SNAPSHOT_H
#define LIZARD_BRIDGE_SESSION_SNAPSHOT_H

#include "util/error.h"

#include <stdbool.h>

struct bridge_session;

/* Copies a ready local session's files into dest, a new directory of the
 * daemon's, with its processes frozen for the copy, and writes
 * dest/meta.json: session_info's answer plus its envs. */
bool bridge_session_snapshot(struct bridge_session *session, const char *dest, struct error *err);

#endif
