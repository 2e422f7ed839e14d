/* SPDX-License-Identifier: MIT */
/* A local desktop in a sandbox of its own: TigerVNC Xvnc on a free
 * display, reachable from the daemon only through a UNIX socket in the
 * sandbox's run directory, with an X cookie of its own, plus openbox for
 * template "desktop". Chromium and launched programs start in the same
 * sandbox, as its unprivileged user. Templates without a screen (base,
 * interpreter) are the same sandbox with no X server at all: then the
 * desktop's end is its init's. */
#ifndef LIZARD_SANDBOX_DESKTOP_H
#define LIZARD_SANDBOX_DESKTOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

struct sandbox;
struct sandbox_cgroup;
struct sandbox_desktop;
struct sandbox_uid_range;

struct sandbox_desktop_options {
	int width, height;
	bool window_manager;           /* openbox; false for template "bare" */
	bool no_x_server;              /* no Xvnc, no display: templates base, interpreter */
	bool network;                  /* false: loopback only */
	const char *const *envs;       /* NAME=value for every program; may be NULL */
	struct sandbox_cgroup *cgroup; /* as in sandbox_options; may be NULL */
	const char *workspace_dir;     /* likewise */
	const char *workspace_image;   /* likewise */
	uint64_t disk_bytes;           /* likewise */
	const struct sandbox_uid_range *uid_range; /* likewise */
	const char *restore_dir;                   /* likewise */
};

struct sandbox_desktop *sandbox_desktop_start(const struct sandbox_desktop_options *options,
					      struct error *err);
/* Kills every process of the desktop and removes its private files
 * (sandbox_destroy: false with the first failure in err, which may be
 * NULL). NULL is fine. */
bool sandbox_desktop_destroy(struct sandbox_desktop *desktop, struct error *err);
/* Its X display number (":N" inside the sandbox). */
int sandbox_desktop_display(const struct sandbox_desktop *desktop);

/* Waits up to timeout_ms, or until stop_fd (may be -1) is readable, for
 * the desktop to end by itself: Xvnc exits or the sandbox's init is gone
 * (the OOM killer, a kill from the host). True when it has, with what
 * happened in *why, as the error that ended it. One thread only, once
 * started. */
bool sandbox_desktop_wait_ended(struct sandbox_desktop *desktop, int timeout_ms, int stop_fd,
				struct error *why);
/* sandbox_end for the desktop's sandbox: for a desktop that failed. */
void sandbox_desktop_end(struct sandbox_desktop *desktop);
/* sandbox_kill for the desktop's sandbox. NULL is fine. */
void sandbox_desktop_kill(struct sandbox_desktop *desktop);

/* A path that names Xvnc's RFB socket by inode ("/proc/self/fd/N", see
 * sandbox_run_open_socket), valid while the desktop lives: whoever
 * connects through it holds the desktop. "" without an X server. */
const char *sandbox_desktop_vnc_socket(const struct sandbox_desktop *desktop);
struct sandbox *sandbox_desktop_sandbox(struct sandbox_desktop *desktop);
bool sandbox_desktop_running(struct sandbox_desktop *desktop);

/* Shows url in the desktop's Chromium, starting it on first use (then
 * *started is true) and opening a new tab after. */
bool sandbox_desktop_open_url(struct sandbox_desktop *desktop, const char *url, bool *started,
			      struct error *err);

#endif
