/* SPDX-License-Identifier: MIT */
/* A noVNC viewer's relay in bytes (see novnc.h). */
#include "bridge/viewer/novnc.h"

#include "vnc/relay.h"
#include "vnc/target.h"

#include <stdlib.h>
#include <string.h>

struct bridge_novnc {
	struct vnc_relay *relay;
	struct vnc_target target;
};

struct bridge_novnc *bridge_novnc_create(const struct vnc_target *target, bool view_only)
{
	struct bridge_novnc *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->target = *target;
	r->target.host = strdup(target->host);
	r->target.password = target->password ? strdup(target->password) : NULL;
	r->relay = vnc_relay_create(view_only, target->password);
	if (!r->target.host || (target->password && !r->target.password) || !r->relay) {
		bridge_novnc_destroy(r);
		return NULL;
	}
	return r;
}

void bridge_novnc_destroy(struct bridge_novnc *r)
{
	if (!r)
		return;
	vnc_relay_destroy(r->relay);
	vnc_target_finish(&r->target);
	free(r);
}

bool bridge_novnc_is_unix(const struct bridge_novnc *r)
{
	return r->target.is_unix;
}

const char *bridge_novnc_host(const struct bridge_novnc *r)
{
	return r->target.host;
}

int bridge_novnc_port(const struct bridge_novnc *r)
{
	return r->target.port;
}

bool bridge_novnc_from_client(struct bridge_novnc *r, const uint8_t *data, size_t len,
			      struct error *err)
{
	return vnc_relay_from_client(r->relay, data, len, err);
}

bool bridge_novnc_from_server(struct bridge_novnc *r, const uint8_t *data, size_t len,
			      struct error *err)
{
	return vnc_relay_from_server(r->relay, data, len, err);
}

const uint8_t *bridge_novnc_to_client(struct bridge_novnc *r, size_t *len)
{
	struct vnc_bytes *out = vnc_relay_to_client(r->relay);
	*len = out->len;
	return out->data;
}

const uint8_t *bridge_novnc_to_server(struct bridge_novnc *r, size_t *len)
{
	struct vnc_bytes *out = vnc_relay_to_server(r->relay);
	*len = out->len;
	return out->data;
}

void bridge_novnc_client_sent(struct bridge_novnc *r, size_t n)
{
	vnc_relay_sent(vnc_relay_to_client(r->relay), n);
}

void bridge_novnc_server_sent(struct bridge_novnc *r, size_t n)
{
	vnc_relay_sent(vnc_relay_to_server(r->relay), n);
}
