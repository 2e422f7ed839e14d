/* SPDX-License-Identifier: MIT */
/* The front door (see port_front.h). */
#include "bridge/server/port_front.h"

#include "bridge/server/port_proxy.h"
#include "bridge/server/state.h"
#include "util/log.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int bridge_server_port_front_take(struct bridge_server *server,
				  const struct lws_filter_network_conn_args *filter)
{
	if (!server->ports)
		return 0;
	int fd = fcntl(filter->accept_fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return 0; /* out of descriptors: lws serves it as before */
	/* Counted by the proxy from here, not as an lws connection. */
	server->accept_pending = false;
	port_proxy_take(server->ports, fd, &server->pending_peer);
	return 1;
}

void bridge_server_port_front_adopt(struct bridge_server *server)
{
	if (!server->ports)
		return;
	struct lws_vhost *vhost = lws_get_vhost_by_name(server->lws, "lizard-bridge");
	for (struct port_handoff *h; (h = port_proxy_next_handoff(server->ports));) {
		/* Counted for its address as if accepted now (limits.c). */
		server->pending_peer = h->peer;
		server->accept_pending = true;
		if (!vhost || !lws_adopt_socket_vhost(vhost, h->fd))
			log_debug("lws did not take a connection back from the port proxy");
		server->accept_pending = false;
		port_proxy_handed_over(server->ports, &h->peer);
		free(h);
	}
}
