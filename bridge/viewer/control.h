/* SPDX-License-Identifier: MIT */
/* What a viewer page asks of the desktop: pointer, key, "release" and
 * clipboard messages (JSON), checked here and turned into input events
 * that the caller passes on, for control viewers only: a view-only
 * viewer's input is dropped whatever its page sends. */
#ifndef LIZARD_BRIDGE_VIEWER_CONTROL_H
#define LIZARD_BRIDGE_VIEWER_CONTROL_H

#include <stdbool.h>
#include <stddef.h>

struct bridge_viewer;
struct vnc_input_event;

/* Where a viewer's input goes (the session's desktop), from the network
 * loop: must not wait. */
struct bridge_viewer_sink {
	void (*post)(void *context, const struct vnc_input_event *events, size_t count);
	/* Text pasted into the page (UTF-8, at most BRIDGE_VIEWER_MAX_CLIPBOARD
	 * bytes) for the desktop's clipboard. */
	void (*paste)(void *context, const char *utf8, size_t len);
	void *context;
};

/* Handles one message of viewer's page that is not about the viewer itself
 * (ack, quality). False when the viewer must go: its link was revoked or its
 * session ended, which takes effect at once. */
bool bridge_viewer_handle_input(struct bridge_viewer *viewer, const char *json, size_t len,
				const struct bridge_viewer_sink *sink);
/* Releases every key and button the viewer holds (it lost focus, hid or
 * went away). */
void bridge_viewer_release_held(struct bridge_viewer *viewer,
				const struct bridge_viewer_sink *sink);

#endif
