/* SPDX-License-Identifier: MIT */
/* Host programs the daemon runs for itself (mke2fs, cp, chown), never in a
 * sandbox: to their end within a deadline, killed past it, with the start
 * of what they said kept for the message. Private to sandbox/. */
#ifndef LIZARD_SANDBOX_COMMAND_H
#define LIZARD_SANDBOX_COMMAND_H

#include "util/error.h"

#include <stdbool.h>
#include <stddef.h>

/* Runs argv (argv[0] an absolute path) with stdin on /dev/null and a
 * fixed PATH; keep_fd (or -1) is the one descriptor it inherits. True when
 * it exited with status 0; otherwise false with a sentence in err that
 * names what, says what it printed (its first line) or that it did not
 * finish within timeout_ms. */
bool sandbox_command_run(const char *const *argv, int keep_fd, int timeout_ms, const char *what,
			 struct error *err);

/* The same, run as root of the user namespace userns (a descriptor; -1:
 * as the daemon, as above), which the daemon must own; keep_fd is not
 * passed then. */
bool sandbox_command_run_in(const char *const *argv, int keep_fd, int userns, int timeout_ms,
			    const char *what, struct error *err);

#endif
