/* SPDX-License-Identifier: MIT */
/* fuzz-rfb: libFuzzer target for the RFB messages the VNC client parses.
 *
 * Each input is what a server sends after the handshake. A thread plays
 * the server on a UNIX socket (tests/fake-rfb's RFB code: version 3.8,
 * security None, a 64x48 screen), writes the input and closes; the real
 * vnc_conn (libvncclient underneath, our callbacks, the framebuffer) reads
 * it until the input runs out, then is destroyed. So framing, sizes,
 * encodings, cut text, cursor shapes and resizes all come from the fuzzer.
 *
 * scripts/fuzz.sh builds and runs it with the other targets; alone:
 *   build-fuzz/tests/fuzz/fuzz-rfb SCRATCH_DIR tests/fuzz/corpus/rfb
 * (libvncclient is the system library: its own code is exercised but not
 * instrumented for coverage). */
#include "../fake-rfb/rfb_server.h"
#include "util/log.h"
#include "vnc/conn.h"
#include "vnc/framebuffer.h"
#include "vnc/target.h"

#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char socket_path[108];
static int listener = -1;

struct feed {
	const uint8_t *data;
	size_t size;
};

/* The server: handshake, the input, then EOF; reads what the client says
 * until it hangs up (bounded, so a stuck client cannot hold the run). */
static void *serve_one(void *arg)
{
	const struct feed *feed = arg;
	struct pollfd p = { .fd = listener, .events = POLLIN };
	if (poll(&p, 1, 5000) <= 0)
		return NULL;
	int fd = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (rfb_handshake(fd, 64, 48, "fuzz") && rfb_write_all(fd, feed->data, feed->size)) {
		shutdown(fd, SHUT_WR);
		char sink[4096];
		struct pollfd r = { .fd = fd, .events = POLLIN };
		while (poll(&r, 1, 5000) > 0 && read(fd, sink, sizeof(sink)) > 0)
			;
	}
	close(fd);
	return NULL;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	log_set_level(getenv("FUZZ_RFB_VERBOSE") ? LOG_DEBUG : LOG_ERROR);
	vnc_conn_global_init();
	char dir[] = "/tmp/fuzz-rfb-XXXXXX";
	if (!mkdtemp(dir))
		abort();
	snprintf(socket_path, sizeof(socket_path), "%s/rfb.sock", dir);
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	memcpy(addr.sun_path, socket_path, strlen(socket_path) + 1);
	listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listener < 0 || bind(listener, (struct sockaddr *)&addr, sizeof(addr)) != 0 ||
	    listen(listener, 4) != 0)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct feed feed = { data, size };
	pthread_t server;
	if (pthread_create(&server, NULL, serve_one, &feed) != 0)
		abort();
	struct vnc_framebuffer *fb = vnc_framebuffer_create();
	struct vnc_target target = { .host = socket_path, .is_unix = true };
	struct error err;
	struct vnc_conn *conn = vnc_conn_open(&target, fb, 5, NULL, &err);
	if (conn) {
		/* Until the connection has read everything and failed at EOF. */
		uint64_t seen = 0;
		while (vnc_framebuffer_wait_frame_after(fb, seen, 5000) == VNC_WAIT_OK)
			seen = vnc_framebuffer_sequence(fb);
		vnc_conn_destroy(conn);
	}
	pthread_join(server, NULL);
	vnc_framebuffer_destroy(fb);
	return 0;
}
