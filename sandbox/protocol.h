/* SPDX-License-Identifier: MIT */
/* What the daemon and the sandbox's init say to each other. Private to
 * sandbox/.
 *
 * The daemon holds one end of a SOCK_SEQPACKET control socket; the init
 * inside the sandbox holds the other. Each request to start a program
 * travels as one message on it, carrying (SCM_RIGHTS) a fresh channel
 * socket for that program followed by the program's stdin, stdout, stderr
 * and optionally a fourth descriptor that becomes its fd 3. Everything
 * about that program then goes over its channel: the init answers
 * STARTED (pid) or FAILED (errno and a sentence), later EXITED (wait
 * status); the daemon may send SIGNAL. When the daemon closes a channel
 * the program is killed, unless it was started detached. When the control
 * socket closes, the init exits and the sandbox's PID namespace, with
 * every process in it, goes with it. */
#ifndef LIZARD_SANDBOX_PROTOCOL_H
#define LIZARD_SANDBOX_PROTOCOL_H

#include <stdint.h>

#define SANDBOX_MAX_REQUEST (96 * 1024)
#define SANDBOX_REQUEST_FDS 5 /* channel, stdin, stdout, stderr, fd 3 (optional) */

/* The uid and gid programs run as inside when they are not root. */
#define SANDBOX_USER_ID 1000

enum sandbox_request_flags {
	SANDBOX_REQUEST_AS_ROOT = 1 << 0,  /* root of the sandbox, not the user */
	SANDBOX_REQUEST_OWN_TREE = 1 << 1, /* under a reaper of its own (reaper.c):
						 * killing it or its end kills all it started */
	SANDBOX_REQUEST_DETACHED = 1 << 2, /* lives on when its channel closes */
	SANDBOX_REQUEST_BUILTIN = 1 << 3,  /* argv[0] names a built-in file operation */
	SANDBOX_REQUEST_OOM_LAST = 1 << 4, /* the OOM killer takes it after every other
						 * program (the desktop's own: Xvnc, openbox) */
};

struct sandbox_request {
	uint32_t flags;
	uint32_t fd_count; /* 4 or 5 */
	uint32_t argc;
	uint32_t envc;
	/* then: cwd, argv[0..argc), envp[0..envc), each NUL-terminated */
};

enum sandbox_reply_type {
	SANDBOX_REPLY_STARTED = 1, /* value: pid inside the sandbox */
	SANDBOX_REPLY_FAILED,      /* value: errno; text says what failed */
	SANDBOX_REPLY_EXITED,      /* value: wait status */
	SANDBOX_SIGNAL,            /* daemon to init: value is the signal to send */
};

struct sandbox_reply {
	uint32_t type;
	int32_t value;
	char text[200];
};

#endif
