/* SPDX-License-Identifier: MIT */
/* Tools that look: screenshot, cursor_position, screen_size. A paused
 * session still gives its last frame. */
#ifndef LIZARD_BRIDGE_TOOLS_SCREEN_H
#define LIZARD_BRIDGE_TOOLS_SCREEN_H

#include "bridge/tools/context.h"

tools_handler tools_screenshot, tools_cursor_position, tools_screen_size;

#endif
