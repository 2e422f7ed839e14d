/* SPDX-License-Identifier: MIT */
/* Key names and text to X keysyms, as RFB key events carry them. */
#ifndef LIZARD_VNC_KEYS_H
#define LIZARD_VNC_KEYS_H

#include "util/error.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VNC_MAX_COMBO_KEYS 8
#define VNC_MAX_COMBOS 64

/* Keys pressed together, in order, released in reverse: "ctrl+shift+t". */
struct vnc_key_combo {
	uint32_t keysyms[VNC_MAX_COMBO_KEYS];
	int count;
};

/* Parses combos separated by white space ("ctrl+a Delete"). Each part is an
 * X keysym name (any case), a common alias (enter, esc, ctrl, cmd, pgup, ...)
 * or a single character. On failure the message names the part that was
 * not understood. */
bool vnc_keys_parse(const char *text, struct vnc_key_combo *combos, size_t max_combos,
		    size_t *count, struct error *err);

/* One key name to its keysym; 0 when unknown. */
uint32_t vnc_keysym_from_name(const char *name);

/* Latin-1 code points are their own keysyms; others are 0x01000000 + cp. */
uint32_t vnc_keysym_for_codepoint(uint32_t codepoint);

/* utf8_decode (util/utf8.h), for callers that only include vnc/. */
size_t vnc_utf8_decode(const char *s, size_t len, uint32_t *codepoint);

#endif
