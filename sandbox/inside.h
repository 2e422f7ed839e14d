/* SPDX-License-Identifier: MIT */
/* Paths inside every sandbox: where its user's home, the workspace and the
 * bridge's run directory (sockets) appear. */
#ifndef LIZARD_SANDBOX_INSIDE_H
#define LIZARD_SANDBOX_INSIDE_H

#define SANDBOX_HOME "/home/user"
#define SANDBOX_WORKSPACE "/workspace"
#define SANDBOX_RUN_DIR "/run/lizard"

#endif
