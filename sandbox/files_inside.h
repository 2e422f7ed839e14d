/* SPDX-License-Identifier: MIT */
/* File operations that run inside the sandbox, in a child of its init, as
 * the user the call asked for: paths resolve in the sandbox's view, so
 * "..", absolute paths and symlinks can reach nothing of the host beyond
 * it. Private to sandbox/; sandbox.h has the daemon's side. */
#ifndef LIZARD_SANDBOX_FILES_INSIDE_H
#define LIZARD_SANDBOX_FILES_INSIDE_H

/* argv: "@read" PATH OFFSET LENGTH   stdout: "SIZE\n" then the bytes, or for
 *                                    a file the kernel says is empty
 *                                    "?\n" then up to LENGTH + 1 bytes
 *       "@write" PATH MODE           stdin: the bytes; parents are created
 *       "@list" PATH                 stdout: "TYPE SIZE MTIME NAME\0" records
 * Errors: a sentence on stderr, exit status 1. */
int sandbox_files_inside_run(char **argv);

#endif
