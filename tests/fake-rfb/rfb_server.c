/* SPDX-License-Identifier: MIT */
#include "rfb_server.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Moves all len bytes in one direction, waiting when the socket is
 * non-blocking and not ready. */
static bool transfer(int fd, uint8_t *p, size_t len, bool writing)
{
	while (len > 0) {
		ssize_t n = writing ? write(fd, p, len) : read(fd, p, len);
		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			struct pollfd ready = { .fd = fd, .events = writing ? POLLOUT : POLLIN };
			poll(&ready, 1, -1);
			continue;
		}
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

bool rfb_write_all(int fd, const void *data, size_t len)
{
	return transfer(fd, (uint8_t *)data, len, true);
}

static bool read_exact(int fd, void *data, size_t len)
{
	return transfer(fd, data, len, false);
}

bool rfb_handshake(int fd, uint32_t width, uint32_t height, const char *name)
{
	uint8_t version[12];
	if (!rfb_write_all(fd, "RFB 003.008\n", 12) || !read_exact(fd, version, sizeof(version)))
		return false;
	const uint8_t security[2] = { 1, 1 }; /* one type: None */
	uint8_t chosen, shared;
	const uint8_t ok[4] = { 0, 0, 0, 0 };
	if (!rfb_write_all(fd, security, sizeof(security)) || !read_exact(fd, &chosen, 1) ||
	    !rfb_write_all(fd, ok, sizeof(ok)) || !read_exact(fd, &shared, 1))
		return false;
	size_t name_len = strlen(name);
	uint8_t init[24] = { 0 };
	/* Sides are 16 bits on the wire: 16384 fits, more wraps. */
	put16(init, (uint16_t)width);
	put16(init + 2, (uint16_t)height);
	uint8_t *format = init + 4;
	format[0] = 32; /* bits per pixel */
	format[1] = 24; /* depth */
	format[2] = 0;  /* little endian */
	format[3] = 1;  /* true colour */
	put16(format + 4, 255);
	put16(format + 6, 255);
	put16(format + 8, 255);
	format[10] = 16;
	format[11] = 8;
	format[12] = 0;
	put32(init + 20, (uint32_t)name_len);
	return rfb_write_all(fd, init, sizeof(init)) && rfb_write_all(fd, name, name_len);
}

bool rfb_update_header(int fd, uint16_t rects)
{
	uint8_t header[4] = { 0, 0 };
	put16(header + 2, rects);
	return rfb_write_all(fd, header, sizeof(header));
}

bool rfb_rect_header(int fd, uint16_t x, uint16_t y, uint16_t w, uint16_t h, int32_t encoding)
{
	uint8_t header[12];
	put16(header, x);
	put16(header + 2, y);
	put16(header + 4, w);
	put16(header + 6, h);
	put32(header + 8, (uint32_t)encoding);
	return rfb_write_all(fd, header, sizeof(header));
}

bool rfb_raw_update(int fd, uint16_t x, uint16_t y, uint16_t w, uint16_t h, uint32_t seed)
{
	if (!rfb_update_header(fd, 1) || !rfb_rect_header(fd, x, y, w, h, 0))
		return false;
	size_t row_len = (size_t)w * 4;
	uint8_t *row = malloc(row_len > 0 ? row_len : 1);
	if (!row)
		return false;
	bool ok = true;
	for (uint16_t r = 0; ok && r < h; r++) {
		for (size_t i = 0; i < row_len; i++)
			row[i] = (uint8_t)(seed + r * 7 + i * 13);
		ok = rfb_write_all(fd, row, row_len);
	}
	free(row);
	return ok;
}

bool rfb_cut_text_header(int fd, uint32_t length)
{
	uint8_t message[8] = { 3, 0, 0, 0 };
	put32(message + 4, length);
	return rfb_write_all(fd, message, sizeof(message));
}
