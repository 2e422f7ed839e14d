/* SPDX-License-Identifier: MIT */
/* Tools that need the desktop itself: open_url, launch, clipboard_get,
 * clipboard_set. The first two work on local desktops only; the clipboard
 * goes through X (any Unicode) on local desktops and through RFB cut text
 * (Latin-1) on attached ones. */
#ifndef LIZARD_BRIDGE_TOOLS_DESKTOP_H
#define LIZARD_BRIDGE_TOOLS_DESKTOP_H

#include "bridge/tools/context.h"

tools_handler tools_open_url, tools_launch, tools_clipboard_get, tools_clipboard_set;

#endif
