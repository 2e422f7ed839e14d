/* SPDX-License-Identifier: MIT */
/* What a viewer is and what it is sent, for the hub's callers and its own
 * files: types and bounds only. */
#ifndef LIZARD_BRIDGE_VIEWER_TYPES_H
#define LIZARD_BRIDGE_VIEWER_TYPES_H

#include <stdbool.h>
#include <stddef.h>

enum bridge_viewer_role { BRIDGE_VIEWER_NONE, BRIDGE_VIEWER_CONTROL, BRIDGE_VIEWER_VIEW };

/* A message for viewers: data[headroom .. headroom + len), shared. */
struct bridge_viewer_message {
	int refs; /* under the hub lock */
	bool text;
	size_t len;
	unsigned char data[];
};

/* Clipboard text a control viewer may be sent or may paste, in bytes. */
#define BRIDGE_VIEWER_MAX_CLIPBOARD (1024 * 1024)
/* Keys and buttons one viewer may hold down at once. */
#define BRIDGE_VIEWER_MAX_HELD 32

#endif
