/* SPDX-License-Identifier: MIT */
/* Replies on their way to the loop (see outbox.h). */
#include "bridge/server/outbox.h"

#include "bridge/server/conn.h"
#include "util/log.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

void bridge_server_post(struct bridge_server *server, uint64_t connection,
			const struct iovec *parts, int count)
{
	size_t len = 0;
	for (int i = 0; i < count; i++)
		len += parts[i].iov_len;
	struct outgoing *o = calloc(1, sizeof(*o));
	char *copy = malloc(LWS_PRE + len + 1);
	if (!o || !copy) {
		free(o);
		free(copy);
		log_error("out of memory queueing a reply");
		return;
	}
	char *p = copy + LWS_PRE;
	for (int i = 0; i < count; i++) {
		memcpy(p, parts[i].iov_base, parts[i].iov_len);
		p += parts[i].iov_len;
	}
	*p = '\0';
	o->connection = connection;
	o->text = copy;
	o->len = len;
	pthread_mutex_lock(&server->outbox_lock);
	if (server->outbox_tail)
		server->outbox_tail->next = o;
	else
		server->outbox_head = o;
	server->outbox_tail = o;
	pthread_mutex_unlock(&server->outbox_lock);
	lws_cancel_service(server->lws);
}

void bridge_server_send_to_peer(void *context, const struct iovec *parts, int count)
{
	struct peer_link *link = context;
	bridge_server_post(link->server, link->connection, parts, count);
}

/* Takes the whole queue under the lock. */
static struct outgoing *take_all(struct bridge_server *server)
{
	pthread_mutex_lock(&server->outbox_lock);
	struct outgoing *o = server->outbox_head;
	server->outbox_head = server->outbox_tail = NULL;
	pthread_mutex_unlock(&server->outbox_lock);
	return o;
}

void bridge_server_drain_outbox(struct bridge_server *server)
{
	for (struct outgoing *o = take_all(server), *next; o; o = next) {
		next = o->next;
		o->next = NULL;
		struct server_conn *c = bridge_server_conn_find(server, o->connection);
		if (!c || c->kicked || !c->deliver)
			bridge_server_outgoing_free(o);
		else
			c->deliver(c, o);
	}
}

void bridge_server_drop_outbox(struct bridge_server *server)
{
	for (struct outgoing *o = take_all(server), *next; o; o = next) {
		next = o->next;
		bridge_server_outgoing_free(o);
	}
}
