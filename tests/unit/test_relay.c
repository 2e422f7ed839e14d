/* SPDX-License-Identifier: MIT */
/* The RFB relay: both handshakes, and view-only dropping input messages. */
#include "vnc/relay.h"
#include "test.h"

#include <stdint.h>

static struct error err;

/* Drives a relay through the handshakes against a server offering None. */
static struct vnc_relay *ready_relay(bool view_only)
{
	struct vnc_relay *r = vnc_relay_create(view_only, NULL);
	if (!r)
		return NULL;
	static const uint8_t server[] = {
		'R', 'F', 'B', ' ', '0', '0', '3', '.', '0', '0', '8', '\n', /* version */
		2,   2,   1,                                                 /* VncAuth, None */
		0,   0,   0,   0,                                            /* result OK */
		0,   4,   0,   3,   32,  24,  0,   1,   0,   255, 0,   255,  0,
		255, 16,  8,   0,   0,   0,   0,   0,   0,   0,   2,   'h',  'i', /* ServerInit */
	};
	static const uint8_t client[] = { 'R', 'F', 'B', ' ', '0',  '0', '3',
					  '.', '0', '0', '8', '\n', 1,   1 };
	/* Split arbitrarily: the relay collects what it needs. */
	if (!vnc_relay_from_client(r, client, 5, &err) ||
	    !vnc_relay_from_server(r, server, 13, &err) ||
	    !vnc_relay_from_server(r, server + 13, sizeof(server) - 13, &err) ||
	    !vnc_relay_from_client(r, client + 5, sizeof(client) - 5, &err)) {
		vnc_relay_destroy(r);
		return NULL;
	}
	return r;
}

static void handshakes(void)
{
	struct vnc_relay *r = ready_relay(false);
	ASSERT(r);
	struct vnc_bytes *to_server = vnc_relay_to_server(r), *to_client = vnc_relay_to_client(r);
	/* Our version, None chosen, ClientInit shared. */
	ASSERT_EQ(to_server->len, 14);
	ASSERT(memcmp(to_server->data, "RFB 003.008\n\1\1", 14) == 0);
	/* Version, [None], OK, then the ServerInit (24 + 2). */
	ASSERT_EQ(to_client->len, 12 + 2 + 4 + 26);
	ASSERT(memcmp(to_client->data + 12, "\1\1\0\0\0\0", 6) == 0);
	ASSERT(memcmp(to_client->data + 12 + 6 + 24, "hi", 2) == 0);
	vnc_relay_destroy(r);
}

static const uint8_t messages[] = {
	3,   1, 0, 0,  0, 0,  0, 16,  0,   16,         /* FramebufferUpdateRequest: kept */
	4,   1, 0, 0,  0, 0,  0, 'a',                  /* KeyEvent */
	5,   1, 0, 10, 0, 10,                          /* PointerEvent */
	6,   0, 0, 0,  0, 0,  0, 2,   'h', 'i',        /* ClientCutText */
	255, 0, 0, 1,  0, 0,  0, 'a', 0,   0,   0, 30, /* QEMU extended key */
	2,   0, 0, 1,  0, 0,  0, 1,                    /* SetEncodings [CopyRect]: kept */
};

static void view_only_drops_input(void)
{
	struct vnc_relay *r = ready_relay(true);
	ASSERT(r);
	struct vnc_bytes *to_server = vnc_relay_to_server(r);
	vnc_relay_sent(to_server, to_server->len);
	/* Byte by byte: messages split anywhere are still recognised. */
	for (size_t i = 0; i < sizeof(messages); i++)
		ASSERT(vnc_relay_from_client(r, messages + i, 1, &err));
	ASSERT_EQ(to_server->len, 10 + 8);
	ASSERT(memcmp(to_server->data, messages, 10) == 0);
	ASSERT(memcmp(to_server->data + 10, messages + sizeof(messages) - 8, 8) == 0);
	ASSERT_EQ(vnc_relay_dropped(r), 4);
	vnc_relay_destroy(r);
}

static void control_passes_everything(void)
{
	struct vnc_relay *r = ready_relay(false);
	ASSERT(r);
	struct vnc_bytes *to_server = vnc_relay_to_server(r);
	vnc_relay_sent(to_server, to_server->len);
	ASSERT(vnc_relay_from_client(r, messages, sizeof(messages), &err));
	ASSERT_EQ(to_server->len, sizeof(messages));
	vnc_relay_destroy(r);
}

static void unknown_messages_end_it(void)
{
	struct vnc_relay *r = ready_relay(true);
	ASSERT(r);
	static const uint8_t odd[] = { 77, 0, 0, 0 };
	ASSERT(!vnc_relay_from_client(r, odd, sizeof(odd), &err));
	ASSERT_CONTAINS(err.message, "type 77");
	vnc_relay_destroy(r);
	r = ready_relay(true);
	ASSERT(r);
	static const uint8_t huge_cut[] = { 6, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff };
	ASSERT(!vnc_relay_from_client(r, huge_cut, sizeof(huge_cut), &err));
	vnc_relay_destroy(r);
}

static void server_without_usable_security(void)
{
	struct vnc_relay *r = vnc_relay_create(false, NULL);
	static const uint8_t server[] = { 'R', 'F', 'B', ' ', '0',  '0', '3',
					  '.', '0', '0', '8', '\n', 1,   2 };
	ASSERT(!vnc_relay_from_server(r, server, sizeof(server), &err));
	ASSERT_CONTAINS(err.message, "no security type");
	vnc_relay_destroy(r);
	r = vnc_relay_create(false, NULL);
	static const uint8_t refused[] = { 'R',  'F', 'B', ' ', '0', '0', '3', '.', '0', '0', '8',
					   '\n', 0,   0,   0,   0,   4,   'b', 'u', 's', 'y' };
	ASSERT(!vnc_relay_from_server(r, refused, sizeof(refused), &err));
	ASSERT_CONTAINS(err.message, "busy");
	vnc_relay_destroy(r);
}

int main(void)
{
	RUN_TEST(handshakes);
	RUN_TEST(view_only_drops_input);
	RUN_TEST(control_passes_everything);
	RUN_TEST(unknown_messages_end_it);
	RUN_TEST(server_without_usable_security);
	TEST_EXIT();
}
