/* SPDX-License-Identifier: MIT */
/* A service inside a session: expose_port, get_host and unexpose_port.
 * The session keeps which ports are exposed and its access token
 * (session/ports.h); the server's port proxy routes the host names made
 * here to them. */
#ifndef LIZARD_BRIDGE_TOOLS_PORTS_H
#define LIZARD_BRIDGE_TOOLS_PORTS_H

#include "bridge/tools/context.h"

tools_handler tools_expose_port, tools_get_host, tools_unexpose_port;

#endif
