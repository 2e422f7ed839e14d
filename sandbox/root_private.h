/* SPDX-License-Identifier: MIT */
/* What a writable root (root.h) keeps of the host's to itself besides
 * the copies' omissions (root_copy.h): whiteouts in a session's upper
 * layer, and users and groups without the host's people or passwords.
 * Private to sandbox/. */
#ifndef LIZARD_SANDBOX_ROOT_PRIVATE_H
#define LIZARD_SANDBOX_ROOT_PRIVATE_H

#include "util/error.h"

#include <stdbool.h>
#include <sys/types.h>

/* A whiteout in upper for the host's host_path/relative ("name" or
 * "dir/name", its directory made in upper as the host has it); nothing
 * when the host has no such entry. */
bool sandbox_root_hide_one(const char *host_path, int upper, const char *relative, uid_t host_uid,
			   struct error *err);

/* Writes passwd, group, shadow and gshadow into upper_etc (the layer over
 * /etc): the system accounts and groups (ids below 1000) of source_etc
 * (the host's /etc, or an image's) without members or passwords, and the
 * sandbox's user with HOME home. */
bool sandbox_root_write_users(int upper_etc, uid_t host_uid, const char *home,
			      const char *source_etc, struct error *err);

#endif
