/* SPDX-License-Identifier: MIT */
/* The system call filter every sandbox runs under (seccomp.c): a BPF
 * program that bubblewrap loads (`--seccomp FD`) right before it starts the
 * sandbox's init, so the init and every program it starts inherit it and
 * cannot drop it. The daemon builds it, never loads it itself. Private to
 * sandbox/. */
#ifndef LIZARD_SANDBOX_SECCOMP_H
#define LIZARD_SANDBOX_SECCOMP_H

#include "util/error.h"

/* A close-on-exec descriptor of the filter's BPF program (a memfd, read
 * from its start to its end, so no pipe's capacity bounds it); the caller
 * owns it. -1 with err set when libseccomp could not build it: the
 * sandbox must then not start. Safe from any thread; the program is built
 * once per process. */
int sandbox_seccomp_filter_fd(struct error *err);

#endif
