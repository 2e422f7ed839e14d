/* SPDX-License-Identifier: MIT */
/* The computer tool: Anthropic's computer-use action schema (action,
 * coordinate, start_coordinate, text, scroll_direction, scroll_amount,
 * duration, region), so agent loops written for it work unchanged. Every
 * action runs through the same code as the named tools (input.h). Like the
 * reference implementation, actions answer with a screenshot of the
 * settled screen unless screenshot is false. */
#ifndef LIZARD_BRIDGE_TOOLS_COMPUTER_H
#define LIZARD_BRIDGE_TOOLS_COMPUTER_H

#include "bridge/tools/context.h"

tools_handler tools_computer;

#endif
