/* SPDX-License-Identifier: MIT */
/* The server side of RFB 3.8 (security None, raw encoding), just enough to
 * play a VNC server that misbehaves on purpose: the fake-rfb test peer and
 * the fuzz-rfb harness build on it. Every call returns false when the
 * client has gone. */
#ifndef LIZARD_TESTS_RFB_SERVER_H
#define LIZARD_TESTS_RFB_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Writes all of data, waiting as long as it takes. */
bool rfb_write_all(int fd, const void *data, size_t len);
/* Version, security None, ServerInit announcing width x height (may be
 * anything, the point is to lie), with a 32-bit true-colour format. */
bool rfb_handshake(int fd, uint32_t width, uint32_t height, const char *name);
/* FramebufferUpdate header announcing rects rectangles. */
bool rfb_update_header(int fd, uint16_t rects);
/* Rectangle header: position, size, encoding (0 raw, -223 DesktopSize). */
bool rfb_rect_header(int fd, uint16_t x, uint16_t y, uint16_t w, uint16_t h, int32_t encoding);
/* A whole raw update of one w x h rectangle at (x, y), every pixel seed-derived. */
bool rfb_raw_update(int fd, uint16_t x, uint16_t y, uint16_t w, uint16_t h, uint32_t seed);
/* ServerCutText whose length field says length; no text follows. */
bool rfb_cut_text_header(int fd, uint32_t length);

#endif
