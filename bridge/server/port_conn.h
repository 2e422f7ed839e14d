/* SPDX-License-Identifier: MIT */
/* One client connection of the port proxy and its one connection into the
 * sandbox: fixed buffers both ways (a peer that stops reading stalls its
 * own connection and grows nothing), each request head parsed and
 * rewritten (port_head.h), each body forwarded by its framing
 * (port_body.h), answers relayed as they come, and after an Upgrade raw
 * bytes both ways. The proxy's thread only (port_proxy.c). */
#ifndef LIZARD_BRIDGE_PORT_CONN_H
#define LIZARD_BRIDGE_PORT_CONN_H

#include "bridge/server/forwarded.h"
#include "bridge/server/port_body.h"
#include "bridge/server/port_route.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Each direction's buffer. */
#define PORT_RELAY_BUFFER (64 * 1024)

struct port_buffer {
	char *data;
	size_t start, end, cap;
};

enum port_conn_state {
	PORT_PEEKING,   /* reading the first head (or the next, after a redirect) */
	PORT_DIALING,   /* waiting for the sandbox to connect */
	PORT_RELAYING,  /* connected: requests in, answers out */
	PORT_ANSWERING, /* our own answer goes out, then the connection closes */
};

enum port_upstream_flow {
	PORT_FLOW_HEAD,
	PORT_FLOW_BODY,
	PORT_FLOW_RAW,
	/* An Upgrade request went up: nothing more does until the service
	 * answers it; 101 makes the connection raw both ways, anything else
	 * CLOSING. */
	PORT_FLOW_UPGRADING,
	/* The service declined an upgrade: its answer goes through and the
	 * connection ends with it, since what the client sends next was never
	 * parsed for the token. */
	PORT_FLOW_CLOSING,
	/* A request this connection may not carry: nothing more goes up, the
	 * answers in flight are let through, then ours (refused_*). */
	PORT_FLOW_REFUSED,
};

struct port_conn {
	struct port_conn *next;
	int client, upstream, pending; /* -1 when none */
	enum port_conn_state state;
	enum port_upstream_flow flow;
	struct port_body body;
	struct port_buffer in;   /* from the client, not yet looked at */
	struct port_buffer up;   /* to the sandbox */
	struct port_buffer down; /* to the client */
	struct port_route route; /* once authorized */
	/* Every request on the connection must name the same port and carry
	 * the session's token (kept from the authorization), not only the
	 * first: a client may pool connections by address, not by host. */
	char token[48];
	const char *public_host;
	int refused_status;
	char refused_message[200];
	bool refused_html;
	char client_text[64]; /* its address, for X-Forwarded-For */
	struct bridge_address address;
	bool unauthorized; /* counts for its address's cap (port_proxy.h) */
	bool handed_off;   /* back to lws: still held until lws adopted it */
	bool peer_trusted; /* a --trusted-proxy: its X-Forwarded-For is kept */
	struct sockaddr_storage peer;
	socklen_t peer_len;
	int64_t last_activity_ms, state_since_ms;
	bool client_eof, upstream_eof, upstream_shut, client_shut;
	bool upgraded;
	/* Dialling, but the sandbox's init had no room for the request: it
	 * is tried again each turn until the dial's deadline. */
	bool redial;
	bool answer_html; /* the client takes HTML (its Accept) */
	bool dead;
	int poll_at[3];       /* the proxy's poll set: client, upstream, pending (-1: none) */
	const char *why_dead; /* for the log, when unusual */
};

/* A connection for client (taken: closed by port_conn_destroy unless
 * handed on). NULL when out of memory. */
struct port_conn *port_conn_create(int client);
void port_conn_destroy(struct port_conn *c);
/* Makes the buffers for relaying; false when out of memory. */
bool port_conn_relay_buffers(struct port_conn *c);

void port_buffer_consume(struct port_buffer *b, size_t n);
size_t port_buffer_len(const struct port_buffer *b);
size_t port_buffer_space(struct port_buffer *b); /* compacts first */
bool port_buffer_put(struct port_buffer *b, const char *data, size_t len);

/* Moves what the client sent into the sandbox's buffer as far as heads,
 * bodies and room allow (state RELAYING). Marks c dead on a malformed
 * request. */
void port_conn_forward(struct port_conn *c);
/* Reads the service's answers into down (and sees whether it took an
 * upgrade); false at its end or on an error (*eof says which). */
bool port_conn_read_answer(struct port_conn *c, bool *eof);
/* Reads what fd has into b; false at its end or on an error (*eof says
 * which). */
bool port_conn_read(int fd, struct port_buffer *b, bool *eof);
/* Writes what b holds to fd; false on an error. */
bool port_conn_write(int fd, struct port_buffer *b);

#endif
