/* SPDX-License-Identifier: MIT */
/* A peer: one client connection as the engine sees it, created by its
 * transport with the function that sends to it. Its replies may come from
 * worker threads, so each send holds the peer's lock, and closing takes
 * the lock too: after close returns nothing more is sent, and the peer is
 * freed once the last of its calls lets go of it (the peer counts its
 * references). Part of the public surface through server.h. */
#ifndef LIZARD_MCP_PEER_H
#define LIZARD_MCP_PEER_H

#include "mcp/types.h"

#include <stdbool.h>
#include <sys/uio.h>

struct mcp_server;
struct mcp_peer;

/* Sends one message given as parts to write back to back: a reply with
 * images comes in pieces, so image text is never copied to build it. */
typedef void (*mcp_send_fn)(void *context, const struct iovec *parts, int count);
#define MCP_MAX_SEND_PARTS (2 * MCP_MAX_CALL_IMAGES + 1)

struct mcp_peer *mcp_peer_create(struct mcp_server *server, mcp_send_fn send, void *context);
/* Waits up to timeout_ms for every tools/call this peer started to finish
 * (and its reply to be sent). True when none is left. */
bool mcp_peer_wait_idle(struct mcp_peer *peer, int timeout_ms);
/* After this no reply is sent; the peer is freed once its calls finish. */
void mcp_peer_close(struct mcp_peer *peer);
/* Names the client a message comes from when one client speaks through
 * several peers (Streamable HTTP: one POST, one connection, one peer), so
 * that notifications/cancelled reaches calls made in another request. NULL
 * (the default) scopes cancellation to this peer. The string is copied. */
void mcp_peer_set_scope(struct mcp_peer *peer, const char *scope);

/* Inside mcp/ only (server.c and call.c). */
/* Sends one message in parts, unless the peer is closed. */
void mcp_peer_send_parts(struct mcp_peer *peer, const struct iovec *parts, int count);
/* Sends text and frees it; NULL (a reply that could not be built) is
 * logged and sends nothing. */
void mcp_peer_send(struct mcp_peer *peer, char *text);
/* Lets go of a reference: the last one frees the peer. */
void mcp_peer_unref(struct mcp_peer *peer);

#endif
