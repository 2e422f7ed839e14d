/* A local desktop the bridge runs itself: TigerVNC Xvnc on a free display,
 * reachable only through a private UNIX socket, with an X cookie of its own,
 * plus openbox for template "desktop". */
#ifndef LIZARD_BRIDGE_DESKTOP_H
#define LIZARD_BRIDGE_DESKTOP_H

#include <stdbool.h>
#include <stddef.h>

struct bridge_desktop;

struct bridge_desktop_options {
	int width, height;
	bool window_manager; /* openbox; false for template "bare" */
};

struct bridge_desktop *bridge_desktop_start(const struct bridge_desktop_options *options,
					    char *err, size_t err_size);
/* Kills every process of the desktop and removes its private files. */
void bridge_desktop_destroy(struct bridge_desktop *desktop);

const char *bridge_desktop_vnc_socket(const struct bridge_desktop *desktop);
int bridge_desktop_display(const struct bridge_desktop *desktop);
const char *bridge_desktop_xauthority(const struct bridge_desktop *desktop);
bool bridge_desktop_running(struct bridge_desktop *desktop);

/* Runs argv inside the desktop (DISPLAY, cookie, private HOME and TMPDIR).
 * The process is stopped with the desktop. */
bool bridge_desktop_launch(struct bridge_desktop *desktop, const char *name, char *const *argv,
			   char *err, size_t err_size);

/* Runs argv in the desktop to completion, collecting its output. */
bool bridge_desktop_run(struct bridge_desktop *desktop, const char *name, char *const *argv,
			char **output, size_t max_output, int timeout_ms, char *err,
			size_t err_size);
/* The desktop's private TMPDIR. */
const char *bridge_desktop_tmp_dir(const struct bridge_desktop *desktop);
/* Shows url in the desktop's Chromium, starting it on first use (then
 * *started is true) and opening a new tab after. */
bool bridge_desktop_open_url(struct bridge_desktop *desktop, const char *url, bool *started,
			     char *err, size_t err_size);

#endif
