/* SPDX-License-Identifier: MIT */
/* The front door: every connection lws accepts goes to the port proxy
 * first, which gives back those that are not for an exposed port (see
 * port_proxy.h for why). The service thread only. */
#ifndef LIZARD_BRIDGE_PORT_FRONT_H
#define LIZARD_BRIDGE_PORT_FRONT_H

struct bridge_server;
struct lws_filter_network_conn_args;

/* LWS_CALLBACK_FILTER_NETWORK_CONNECTION, once the caps let the
 * connection in: nonzero when the proxy took it (lws then closes its own
 * descriptor of it, the proxy keeps a duplicate). */
int bridge_server_port_front_take(struct bridge_server *server,
				  const struct lws_filter_network_conn_args *filter);
/* LWS_CALLBACK_EVENT_WAIT_CANCELLED: connections the proxy gave back are
 * adopted by lws with the bytes already read, and counted as accepted. */
void bridge_server_port_front_adopt(struct bridge_server *server);

#endif
