/* SPDX-License-Identifier: MIT */
#include "vnc/relay.h"

#include <rfb/rfbclient.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libvncclient 0.9.14 exports this (VNC authentication's DES step) but
 * declares it in no public header. */
extern void rfbClientEncryptBytes(unsigned char *bytes, char *passwd);

#define MAX_CUT_TEXT (1u << 20)
/* No buffer grows past this; the caller stops reading a side long before. */
#define MAX_BUFFERED (8u << 20)

enum server_state {
	S_VERSION,
	S_TYPE_COUNT,
	S_TYPES,
	S_CHALLENGE,
	S_RESULT,
	S_REASON_LEN,
	S_REASON,
	S_INIT,
	S_NAME,
	S_DONE,
};
enum client_state { C_VERSION, C_SECURITY, C_INIT, C_WAIT, C_RELAY };

struct vnc_relay {
	bool view_only;
	char *password;
	enum server_state server;
	enum client_state client;
	size_t want;                               /* bytes the server state needs */
	struct vnc_bytes from_server, from_client; /* collected, not yet used */
	struct vnc_bytes to_server, to_client;
	struct vnc_bytes server_init; /* kept until the client asks */
	bool failed_auth;
	unsigned long dropped;
};

static bool append(struct vnc_bytes *b, const void *data, size_t len)
{
	return len <= MAX_BUFFERED && b->len + len <= MAX_BUFFERED &&
	       vnc_bytes_append(b, data, len);
}

void vnc_relay_sent(struct vnc_bytes *b, size_t n)
{
	if (n > b->len)
		n = b->len;
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

struct vnc_relay *vnc_relay_create(bool view_only, const char *password)
{
	struct vnc_relay *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->view_only = view_only;
	r->password = password ? strdup(password) : NULL;
	r->want = 12;
	if ((password && !r->password) || !append(&r->to_client, "RFB 003.008\n", 12)) {
		vnc_relay_destroy(r);
		return NULL;
	}
	return r;
}

void vnc_relay_destroy(struct vnc_relay *r)
{
	if (!r)
		return;
	if (r->password) {
		memset(r->password, 0, strlen(r->password));
		free(r->password);
	}
	vnc_bytes_finish(&r->from_server);
	vnc_bytes_finish(&r->from_client);
	vnc_bytes_finish(&r->to_server);
	vnc_bytes_finish(&r->to_client);
	vnc_bytes_finish(&r->server_init);
	free(r);
}

struct vnc_bytes *vnc_relay_to_server(struct vnc_relay *r)
{
	return &r->to_server;
}

struct vnc_bytes *vnc_relay_to_client(struct vnc_relay *r)
{
	return &r->to_client;
}

unsigned long vnc_relay_dropped(const struct vnc_relay *r)
{
	return r->dropped;
}

/* Both handshakes done: the client gets the server's ServerInit. */
static bool maybe_start(struct vnc_relay *r)
{
	if (r->server != S_DONE || r->client != C_WAIT)
		return true;
	r->client = C_RELAY;
	bool ok = append(&r->to_client, r->server_init.data, r->server_init.len);
	vnc_bytes_finish(&r->server_init);
	return ok;
}

/* One step of the server handshake on msg (r->want bytes). */
static bool server_step(struct vnc_relay *r, const uint8_t *msg, struct error *err)
{
	switch (r->server) {
	case S_VERSION: {
		int major = 0, minor = 0;
		if (memcmp(msg, "RFB ", 4) != 0 ||
		    sscanf((const char *)msg + 4, "%3d.%3d", &major, &minor) != 2 || major != 3 ||
		    minor < 7) {
			error_set(err, 0, "the VNC server speaks no RFB version 3.7 or later");
			return false;
		}
		r->server = S_TYPE_COUNT;
		r->want = 1;
		return append(&r->to_server, "RFB 003.008\n", 12);
	}
	case S_TYPE_COUNT:
		if (msg[0] == 0) {
			r->server = S_REASON_LEN;
			r->want = 4;
			return true;
		}
		r->server = S_TYPES;
		r->want = msg[0];
		return true;
	case S_TYPES: {
		bool none = memchr(msg, rfbNoAuth, r->want) != NULL;
		bool vnc = memchr(msg, rfbVncAuth, r->want) != NULL && r->password;
		if (!none && !vnc) {
			error_set(err, 0,
				  "the VNC server offers no security type the relay can "
				  "use (None, or VNC authentication with a password)");
			return false;
		}
		uint8_t choice = none ? rfbNoAuth : rfbVncAuth;
		r->server = none ? S_RESULT : S_CHALLENGE;
		r->want = none ? 4 : 16;
		return append(&r->to_server, &choice, 1);
	}
	case S_CHALLENGE: {
		unsigned char response[16];
		memcpy(response, msg, 16);
		rfbClientEncryptBytes(response, r->password);
		r->server = S_RESULT;
		r->want = 4;
		return append(&r->to_server, response, 16);
	}
	case S_RESULT:
		if (be32(msg) != 0) {
			r->failed_auth = true;
			r->server = S_REASON_LEN;
			r->want = 4;
			return true;
		}
		r->server = S_INIT;
		r->want = 24;
		return append(&r->to_server, "\1", 1); /* ClientInit: shared */
	case S_REASON_LEN:
		r->server = S_REASON;
		r->want = be32(msg) > 200 ? 200 : be32(msg);
		if (r->want == 0) {
			error_set(err, 0, "the VNC server refused the relay");
			return false;
		}
		return true;
	case S_REASON:
		error_set(err, 0, "the VNC server refused the relay%s: %.*s",
			  r->failed_auth ? " (wrong password?)" : "", (int)r->want,
			  (const char *)msg);
		return false;
	case S_INIT:
		if (!append(&r->server_init, msg, 24))
			return false;
		r->server = S_NAME;
		r->want = be32(msg + 20);
		if (r->want > 4096) {
			error_set(err, 0, "the VNC server sent a desktop name of %zu bytes",
				  r->want);
			return false;
		}
		if (r->want == 0) {
			r->server = S_DONE;
			return maybe_start(r);
		}
		return true;
	case S_NAME:
		if (!append(&r->server_init, msg, r->want))
			return false;
		r->server = S_DONE;
		return maybe_start(r);
	case S_DONE:
		break;
	}
	return false;
}

bool vnc_relay_from_server(struct vnc_relay *r, const uint8_t *data, size_t len, struct error *err)
{
	if (r->server == S_DONE) {
		if (!append(&r->to_client, data, len)) {
			error_set(err, 0, "out of memory (or the viewer is not reading)");
			return false;
		}
		return true;
	}
	if (!append(&r->from_server, data, len)) {
		error_set(err, 0, "out of memory");
		return false;
	}
	size_t used = 0;
	while (r->server != S_DONE && r->from_server.len - used >= r->want) {
		size_t want = r->want;
		if (!server_step(r, r->from_server.data + used, err)) {
			if (err && !err->message[0])
				error_set(err, 0, "out of memory");
			return false;
		}
		used += want;
	}
	vnc_relay_sent(&r->from_server, used);
	if (r->server == S_DONE && r->from_server.len) {
		/* The server spoke first after ServerInit: that is relayed. */
		bool ok = append(&r->to_client, r->from_server.data, r->from_server.len);
		vnc_relay_sent(&r->from_server, r->from_server.len);
		return ok;
	}
	return true;
}

/* The length of the client message at p (have bytes there), 0 when more
 * bytes are needed to tell, or -1 when it cannot be checked. *input says
 * whether it acts on the desktop (dropped for view-only). */
static long message_length(const uint8_t *p, size_t have, bool *input)
{
	*input = false;
	switch (p[0]) {
	case rfbSetPixelFormat:
		return 20;
	case rfbSetEncodings:
		return have < 4 ? 0 : 4 + 4L * ((p[2] << 8) | p[3]);
	case rfbFramebufferUpdateRequest:
		return 10;
	case rfbKeyEvent:
		*input = true;
		return 8;
	case rfbPointerEvent:
		*input = true;
		return 6;
	case rfbClientCutText: {
		*input = true;
		if (have < 8)
			return 0;
		int32_t n = (int32_t)be32(p + 4); /* negative: extended clipboard */
		uint32_t len = n < 0 ? (uint32_t)0 - (uint32_t)n : (uint32_t)n;
		return len > MAX_CUT_TEXT ? -1 : 8 + (long)len;
	}
	case 150: /* EnableContinuousUpdates */
		return 10;
	case 248: /* ClientFence */
		return have < 9 ? 0 : (p[8] > 64 ? -1 : 9 + p[8]);
	case 250: /* xvp: shut down, reboot */
		*input = true;
		return 4;
	case 251: /* SetDesktopSize */
		*input = true;
		return have < 8 ? 0 : 8 + 16L * p[6];
	case 255: /* QEMU: extended key event */
		*input = true;
		return have < 2 ? 0 : p[1] == 0 ? 12 : -1;
	default:
		return -1;
	}
}

static bool client_relay(struct vnc_relay *r, struct error *err)
{
	size_t used = 0;
	while (used < r->from_client.len) {
		const uint8_t *p = r->from_client.data + used;
		size_t have = r->from_client.len - used;
		bool input;
		long len = message_length(p, have, &input);
		if (len < 0) {
			error_set(err, 0,
				  "the viewer sent an RFB message the relay cannot check "
				  "(type %u)",
				  p[0]);
			return false;
		}
		if (len == 0 || (size_t)len > have)
			break;
		if (input && r->view_only)
			r->dropped++;
		else if (!append(&r->to_server, p, (size_t)len)) {
			error_set(err, 0, "out of memory");
			return false;
		}
		used += (size_t)len;
	}
	vnc_relay_sent(&r->from_client, used);
	return true;
}

bool vnc_relay_from_client(struct vnc_relay *r, const uint8_t *data, size_t len, struct error *err)
{
	if (!append(&r->from_client, data, len)) {
		error_set(err, 0, "the viewer sent more than the relay holds");
		return false;
	}
	for (;;) {
		struct vnc_bytes *in = &r->from_client;
		if (r->client == C_VERSION && in->len >= 12) {
			if (memcmp(in->data, "RFB 003.", 8) != 0) {
				error_set(err, 0, "the viewer does not speak RFB");
				return false;
			}
			vnc_relay_sent(in, 12);
			r->client = C_SECURITY;
			if (!append(&r->to_client, "\1\1", 2)) /* one type: None */
				return false;
		} else if (r->client == C_SECURITY && in->len >= 1) {
			if (in->data[0] != rfbNoAuth) {
				error_set(err, 0, "the viewer chose a security type not offered");
				return false;
			}
			vnc_relay_sent(in, 1);
			r->client = C_INIT;
			if (!append(&r->to_client, "\0\0\0\0", 4)) /* SecurityResult: OK */
				return false;
		} else if (r->client == C_INIT && in->len >= 1) {
			vnc_relay_sent(in, 1); /* shared or not: the relay always shares */
			r->client = C_WAIT;
			if (!maybe_start(r))
				return false;
		} else if (r->client == C_RELAY) {
			return client_relay(r, err);
		} else {
			return true; /* more bytes, or the server, needed */
		}
	}
}
