/* SPDX-License-Identifier: MIT */
/* lizard-bridge call: a scripting client for a running daemon. */
#ifndef LIZARD_BRIDGE_CLIENT_H
#define LIZARD_BRIDGE_CLIENT_H

/* argv after "call". Returns the exit status: 0 on success, 1 when the tool
 * reported an error, 2 for usage, transport or protocol failures. */
int bridge_client_run(int argc, char **argv);

#endif
