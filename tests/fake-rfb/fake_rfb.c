/* SPDX-License-Identifier: MIT */
/* fake-rfb: a VNC server that misbehaves on purpose, for the tests.
 *
 *   fake-rfb --listen PATH --mode MODE [--size WxH] [--cut-length N]
 *
 * Listens on a UNIX socket, prints "ready" once it does, and serves every
 * client in a child process of its own (so a reconnecting bridge finds it
 * again). After an RFB 3.8 handshake (security None) and, except for huge,
 * one full raw update, each mode does this:
 *
 *   normal        a 32x32 update every 100 ms; reads everything
 *   stop-reading  never reads again, so the client's sends back up
 *   stall-update  300 ms later sends a FramebufferUpdate header and half of
 *                 a rectangle, then nothing (still reading)
 *   close-update  the same, then closes the connection
 *   flood         random raw rectangles as fast as the client takes them
 *   huge          announces a 16384x16384 screen
 *   resize        DesktopSize between 640x480 and 800x600 every 20 ms, each
 *                 followed by a full update
 *   resize-huge   300 ms later a DesktopSize to 16384x16384
 *   cut-text      300 ms later ServerCutText whose length field says N
 *                 (default 2^31), then junk
 */
#include "rfb_server.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

struct options {
	const char *path;
	const char *mode;
	int width, height;
	uint32_t cut_length;
};

static int64_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Reads and drops what the client sent; false once it has gone. */
static bool drain(int fd)
{
	char buffer[65536];
	for (;;) {
		ssize_t n = read(fd, buffer, sizeof(buffer));
		if (n > 0)
			continue;
		return n < 0 && (errno == EAGAIN || errno == EINTR);
	}
}

/* Reads for ms milliseconds (forever when ms < 0); false once the client
 * has gone. */
static bool read_for(int fd, int ms)
{
	int64_t until = now_ms() + ms;
	for (;;) {
		int left = ms < 0 ? 1000 : (int)(until - now_ms());
		if (ms >= 0 && left <= 0)
			return true;
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (poll(&p, 1, left) > 0 && !drain(fd))
			return false;
	}
}

static void never_read(void)
{
	for (;;)
		pause();
}

static void half_an_update(int fd, int width, int height, bool then_close)
{
	if (!read_for(fd, 300) || !rfb_update_header(fd, 1) ||
	    !rfb_rect_header(fd, 0, 0, (uint16_t)width, (uint16_t)height, 0))
		return;
	size_t half = (size_t)width * height * 2;
	uint8_t *pixels = calloc(half, 1);
	bool ok = pixels && rfb_write_all(fd, pixels, half);
	free(pixels);
	if (ok && !then_close)
		read_for(fd, -1);
}

static void flood(int fd, int width, int height)
{
	unsigned seed = (unsigned)getpid();
	for (;;) {
		if (!drain(fd))
			return;
		uint16_t w = (uint16_t)(1 + rand_r(&seed) % width);
		uint16_t h = (uint16_t)(1 + rand_r(&seed) % height);
		uint16_t x = (uint16_t)(rand_r(&seed) % (width - w + 1));
		uint16_t y = (uint16_t)(rand_r(&seed) % (height - h + 1));
		if (!rfb_raw_update(fd, x, y, w, h, (uint32_t)rand_r(&seed)))
			return;
	}
}

static void resize_forever(int fd)
{
	for (int i = 0;; i++) {
		uint16_t w = i % 2 ? 640 : 800, h = i % 2 ? 480 : 600;
		if (!read_for(fd, 20) || !rfb_update_header(fd, 1) ||
		    !rfb_rect_header(fd, 0, 0, w, h, -223) ||
		    !rfb_raw_update(fd, 0, 0, w, h, (uint32_t)i))
			return;
	}
}

static void serve(int fd, const struct options *o)
{
	bool huge = strcmp(o->mode, "huge") == 0;
	int width = huge ? 16384 : o->width, height = huge ? 16384 : o->height;
	if (!rfb_handshake(fd, (uint32_t)width, (uint32_t)height, "fake-rfb"))
		return;
	if (huge) {
		read_for(fd, -1);
		return;
	}
	if (!rfb_raw_update(fd, 0, 0, (uint16_t)width, (uint16_t)height, 1))
		return;
	/* From here on the socket is non-blocking, so reading can be drained. */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	const char *m = o->mode;
	if (strcmp(m, "stop-reading") == 0) {
		never_read();
	} else if (strcmp(m, "stall-update") == 0 || strcmp(m, "close-update") == 0) {
		half_an_update(fd, width, height, strcmp(m, "close-update") == 0);
	} else if (strcmp(m, "flood") == 0) {
		flood(fd, width, height);
	} else if (strcmp(m, "resize") == 0) {
		resize_forever(fd);
	} else if (strcmp(m, "resize-huge") == 0) {
		if (read_for(fd, 300) && rfb_update_header(fd, 1) &&
		    rfb_rect_header(fd, 0, 0, 16384, 16384, -223))
			read_for(fd, -1);
	} else if (strcmp(m, "cut-text") == 0) {
		if (!read_for(fd, 300) || !rfb_cut_text_header(fd, o->cut_length))
			return;
		char junk[65536];
		memset(junk, 'x', sizeof(junk));
		while (drain(fd) && rfb_write_all(fd, junk, sizeof(junk)))
			;
	} else {
		for (uint32_t i = 0;; i++)
			if (!read_for(fd, 100) ||
			    !rfb_raw_update(fd, (uint16_t)(i * 32 % (width - 32)), 0, 32, 32, i))
				return;
	}
}

static bool parse(int argc, char **argv, struct options *o)
{
	*o = (struct options){
		.mode = "normal", .width = 640, .height = 480, .cut_length = 1u << 31
	};
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--listen") == 0)
			o->path = argv[i + 1];
		else if (strcmp(argv[i], "--mode") == 0)
			o->mode = argv[i + 1];
		else if (strcmp(argv[i], "--size") == 0 &&
			 sscanf(argv[i + 1], "%dx%d", &o->width, &o->height) == 2)
			continue;
		else if (strcmp(argv[i], "--cut-length") == 0)
			o->cut_length = (uint32_t)strtoul(argv[i + 1], NULL, 10);
		else
			return false;
	}
	return o->path && o->width >= 64 && o->height >= 64 && o->width <= 8192 &&
	       o->height <= 8192;
}

int main(int argc, char **argv)
{
	struct options o;
	if (!parse(argc, argv, &o)) {
		fprintf(stderr, "usage: fake-rfb --listen PATH [--mode MODE] [--size WxH] "
				"[--cut-length N]\n");
		return 2;
	}
	signal(SIGCHLD, SIG_IGN); /* children reap themselves */
	signal(SIGPIPE, SIG_IGN);
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	if (strlen(o.path) >= sizeof(addr.sun_path))
		return 2;
	strcpy(addr.sun_path, o.path);
	int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	unlink(o.path);
	if (listener < 0 || bind(listener, (struct sockaddr *)&addr, sizeof(addr)) != 0 ||
	    listen(listener, 16) != 0) {
		perror("fake-rfb: listen");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		int fd = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR)
				continue;
			perror("fake-rfb: accept");
			return 1;
		}
		pid_t child = fork();
		if (child == 0) {
			close(listener);
			serve(fd, &o);
			_exit(0);
		}
		close(fd);
	}
}
