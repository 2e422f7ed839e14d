/* SPDX-License-Identifier: MIT */
/* Replies on their way from worker threads to the network loop: a locked
 * queue the loop drains when lws_cancel_service() wakes it, handing each
 * reply to its connection, or dropping it when the connection went. */
#ifndef LIZARD_BRIDGE_SERVER_OUTBOX_H
#define LIZARD_BRIDGE_SERVER_OUTBOX_H

#include <stdint.h>
#include <sys/uio.h>

struct bridge_server;

/* Queues a message (its parts copied, joined) for a connection and wakes
 * the loop. Any thread. */
void bridge_server_post(struct bridge_server *server, uint64_t connection,
			const struct iovec *parts, int count);
/* An mcp_send_fn over bridge_server_post; context is a struct peer_link. */
void bridge_server_send_to_peer(void *context, const struct iovec *parts, int count);

/* The service thread: hands what waits to its connections. */
void bridge_server_drain_outbox(struct bridge_server *server);
/* At the end, once the loop is gone: drops what is left. */
void bridge_server_drop_outbox(struct bridge_server *server);

#endif
