/* SPDX-License-Identifier: MIT */
/* Persistent volumes: create_volume, list_volumes, delete_volume. A
 * session mounts one with create_session's volume argument. */
#ifndef LIZARD_BRIDGE_TOOLS_VOLUMES_H
#define LIZARD_BRIDGE_TOOLS_VOLUMES_H

#include "bridge/tools/context.h"

tools_handler tools_create_volume, tools_list_volumes, tools_delete_volume;

#endif
