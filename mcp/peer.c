/* SPDX-License-Identifier: MIT */
#include "mcp/peer.h"

#include "mcp/state.h"
#include "util/clock.h"
#include "util/log.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct mcp_peer *mcp_peer_create(struct mcp_server *server, mcp_send_fn send, void *context)
{
	struct mcp_peer *peer = calloc(1, sizeof(*peer));
	if (!peer)
		return NULL;
	peer->server = server;
	peer->send = send;
	peer->context = context;
	peer->refs = 1;
	peer->log_level = MCP_LOG_WARNING;
	pthread_mutex_init(&peer->lock, NULL);
	clock_cond_init(&peer->idle);
	pthread_mutex_lock(&server->peers_lock);
	peer->next = server->peers;
	server->peers = peer;
	pthread_mutex_unlock(&server->peers_lock);
	return peer;
}

void mcp_peer_unref(struct mcp_peer *peer)
{
	pthread_mutex_lock(&peer->lock);
	bool last = --peer->refs == 0;
	bool listed = !peer->unlisted;
	pthread_mutex_unlock(&peer->lock);
	if (last && listed) {
		struct mcp_server *server = peer->server;
		pthread_mutex_lock(&server->peers_lock);
		for (struct mcp_peer **p = &server->peers; *p; p = &(*p)->next) {
			if (*p == peer) {
				*p = peer->next;
				break;
			}
		}
		pthread_mutex_unlock(&server->peers_lock);
	}
	if (last) {
		pthread_cond_destroy(&peer->idle);
		pthread_mutex_destroy(&peer->lock);
		free(peer->scope);
		free(peer);
	}
}

void mcp_peer_set_scope(struct mcp_peer *peer, const char *scope)
{
	char *copy = scope ? strdup(scope) : NULL;
	pthread_mutex_lock(&peer->lock);
	free(peer->scope);
	peer->scope = copy;
	pthread_mutex_unlock(&peer->lock);
}

void mcp_peer_close(struct mcp_peer *peer)
{
	if (!peer)
		return;
	pthread_mutex_lock(&peer->lock);
	peer->closed = true;
	pthread_mutex_unlock(&peer->lock);
	mcp_peer_unref(peer);
}

/* Holding the lock across send lets close wait for a send in progress. */
void mcp_peer_send_parts(struct mcp_peer *peer, const struct iovec *parts, int count)
{
	pthread_mutex_lock(&peer->lock);
	if (!peer->closed)
		peer->send(peer->context, parts, count);
	pthread_mutex_unlock(&peer->lock);
}

/* Sends and frees text. */
void mcp_peer_send(struct mcp_peer *peer, char *text)
{
	if (!text) {
		log_error("out of memory building a reply");
		return;
	}
	struct iovec part = { text, strlen(text) };
	mcp_peer_send_parts(peer, &part, 1);
	free(text);
}

bool mcp_peer_wait_idle(struct mcp_peer *peer, int timeout_ms)
{
	struct timespec until = clock_deadline_ms(timeout_ms);
	pthread_mutex_lock(&peer->lock);
	int rc = 0;
	while (peer->calls_running > 0 && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&peer->idle, &peer->lock, &until);
	bool idle = peer->calls_running == 0;
	pthread_mutex_unlock(&peer->lock);
	return idle;
}
