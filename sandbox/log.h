/* SPDX-License-Identifier: MIT */
/* The sandbox log: where bwrap, the network helper and every program
 * without streams of its own write (their stdout and stderr). Programs
 * write into a pipe; a thread of the daemon moves what arrives into
 * sandbox.log in the private directory and keeps that file under
 * SANDBOX_LOG_MAX_BYTES by dropping its oldest half, so a program that
 * prints forever slows down to the pace of the copy but never fills the
 * disk. Readers drain the pipe first, so what a program wrote before it
 * exited is always there for an error message. Private to sandbox/. */
#ifndef LIZARD_SANDBOX_LOG_H
#define LIZARD_SANDBOX_LOG_H

#include "util/error.h"

#include <stddef.h>
#include <stdint.h>

#define SANDBOX_LOG_MAX_BYTES (256 * 1024)

struct sandbox_log;

struct sandbox_log *sandbox_log_create(const char *path, struct error *err);
/* Stops the copy and closes everything; the file stays. NULL is fine. */
void sandbox_log_destroy(struct sandbox_log *log);

/* The pipe's write end (O_CLOEXEC): hand it to programs as stdout/stderr. */
int sandbox_log_fd(const struct sandbox_log *log);
/* Bytes written to the log so far, dropped ones included. */
uint64_t sandbox_log_position(struct sandbox_log *log);
/* What was written since position from (its end when more than fits),
 * NUL-terminated. */
void sandbox_log_since(struct sandbox_log *log, uint64_t from, char *out, size_t size);
/* The last non-empty line, without its newline. */
void sandbox_log_last_line(struct sandbox_log *log, char *out, size_t size);

#endif
