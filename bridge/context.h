/* SPDX-License-Identifier: MIT */
/* What the server and the tools share: types only. main fills them before
 * either starts, and nothing writes them later. */
#ifndef LIZARD_BRIDGE_CONTEXT_H
#define LIZARD_BRIDGE_CONTEXT_H

#include <stddef.h>

/* How start_stream's links reach the server's viewers. */
struct bridge_viewer_links {
	char base_url[192];   /* "http://127.0.0.1:7070"; "" without a server (stdio) */
	size_t headroom;      /* bytes each viewer message keeps free before its data */
	void (*wake)(void *); /* any thread: a session's viewers have news */
	void *wake_context;
};

#endif
