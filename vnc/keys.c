/* SPDX-License-Identifier: MIT */
#include "vnc/keys.h"

#include "util/utf8.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <xkbcommon/xkbcommon.h>

struct alias {
	const char *name;
	const char *keysym_name;
};

/* The names agents commonly use that are not X keysym names (or differ
 * from them only in more than case). */
static const struct alias aliases[] = {
	{ "enter", "Return" },
	{ "return", "Return" },
	{ "esc", "Escape" },
	{ "escape", "Escape" },
	{ "ctrl", "Control_L" },
	{ "control", "Control_L" },
	{ "lctrl", "Control_L" },
	{ "rctrl", "Control_R" },
	{ "alt", "Alt_L" },
	{ "option", "Alt_L" },
	{ "lalt", "Alt_L" },
	{ "ralt", "Alt_R" },
	{ "altgr", "ISO_Level3_Shift" },
	{ "shift", "Shift_L" },
	{ "lshift", "Shift_L" },
	{ "rshift", "Shift_R" },
	{ "super", "Super_L" },
	{ "cmd", "Super_L" },
	{ "command", "Super_L" },
	{ "win", "Super_L" },
	{ "windows", "Super_L" },
	{ "meta", "Meta_L" },
	{ "pgup", "Prior" },
	{ "pageup", "Prior" },
	{ "pgdn", "Next" },
	{ "pagedown", "Next" },
	{ "del", "Delete" },
	{ "delete", "Delete" },
	{ "bksp", "BackSpace" },
	{ "backspace", "BackSpace" },
	{ "ins", "Insert" },
	{ "insert", "Insert" },
	{ "space", "space" },
	{ "spacebar", "space" },
	{ "tab", "Tab" },
	{ "caps", "Caps_Lock" },
	{ "capslock", "Caps_Lock" },
	{ "printscreen", "Print" },
	{ "prtsc", "Print" },
	{ "up", "Up" },
	{ "down", "Down" },
	{ "left", "Left" },
	{ "right", "Right" },
	{ "arrowup", "Up" },
	{ "arrowdown", "Down" },
	{ "arrowleft", "Left" },
	{ "arrowright", "Right" },
	{ "home", "Home" },
	{ "end", "End" },
	{ "menu", "Menu" },
	{ "plus", "plus" },
	{ "minus", "minus" },
};

uint32_t vnc_keysym_for_codepoint(uint32_t codepoint)
{
	if ((codepoint >= 0x20 && codepoint <= 0x7e) || (codepoint >= 0xa0 && codepoint <= 0xff))
		return codepoint;
	return 0x01000000u + codepoint;
}

size_t vnc_utf8_decode(const char *s, size_t len, uint32_t *codepoint)
{
	return utf8_decode(s, len, codepoint);
}

uint32_t vnc_keysym_from_name(const char *name)
{
	if (!name || !*name)
		return 0;
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (strcasecmp(name, aliases[i].name) == 0)
			return xkb_keysym_from_name(aliases[i].keysym_name, XKB_KEYSYM_NO_FLAGS);

	/* One character stands for itself, case kept: "a" and "A" differ. */
	uint32_t cp;
	size_t len = strlen(name);
	if (vnc_utf8_decode(name, len, &cp) == len)
		return cp >= 0x20 && cp != 0x7f ? vnc_keysym_for_codepoint(cp) : 0;

	xkb_keysym_t sym = xkb_keysym_from_name(name, XKB_KEYSYM_NO_FLAGS);
	if (sym == XKB_KEY_NoSymbol)
		sym = xkb_keysym_from_name(name, XKB_KEYSYM_CASE_INSENSITIVE);
	return sym;
}

/* With Shift held, a real keyboard sends the shifted symbol: shift+t is
 * "T" and shift+1 is "!" (US layout). Servers like Xvnc pick keycodes and
 * modifiers from the symbol, so sending "t" under Shift makes them toggle
 * Caps Lock to honour the lower case, and the application never sees the
 * shortcut it expects. */
static uint32_t shifted_keysym(uint32_t sym)
{
	static const char unshifted[] = "1234567890-=[]\\;',./`";
	static const char shifted[] = "!@#$%^&*()_+{}|:\"<>?~";
	if (sym < 0x80) {
		const char *at = strchr(unshifted, (int)sym);
		if (at && sym != 0)
			return (uint32_t)(unsigned char)shifted[at - unshifted];
	}
	if (sym == XKB_KEY_Tab)
		return XKB_KEY_ISO_Left_Tab;
	return xkb_keysym_to_upper(sym);
}

static void apply_shift(struct vnc_key_combo *combo)
{
	bool shift = false;
	for (int i = 0; i < combo->count; i++)
		if (combo->keysyms[i] == XKB_KEY_Shift_L || combo->keysyms[i] == XKB_KEY_Shift_R)
			shift = true;
	if (!shift)
		return;
	for (int i = 0; i < combo->count; i++)
		combo->keysyms[i] = shifted_keysym(combo->keysyms[i]);
}

/* Splits one combo at '+' into keysyms. A '+' that would leave an empty
 * part is the plus key itself: "ctrl++" and "+" both name it. */
static bool parse_combo(const char *start, size_t len, struct vnc_key_combo *combo,
			struct error *err)
{
	combo->count = 0;
	size_t pos = 0;
	while (pos < len) {
		size_t end = pos;
		if (start[end] == '+')
			end++; /* a part that is just "+" */
		while (end < len && start[end] != '+')
			end++;
		char part[64];
		size_t part_len = end - pos;
		/* The combination as quoted in messages: whole characters. */
		char shown[65];
		utf8_excerpt_len(shown, sizeof(shown), start, len);
		if (part_len == 0 || part_len >= sizeof(part)) {
			error_set(err, 0, "key combination '%s' has an empty or overlong part",
				  shown);
			return false;
		}
		memcpy(part, start + pos, part_len);
		part[part_len] = '\0';
		uint32_t sym = vnc_keysym_from_name(part);
		if (!sym) {
			char part_shown[sizeof(part)];
			error_set(
				err, 0,
				"unknown key '%s' in '%s'; use X keysym names (Return, Tab, "
				"Escape, F5, Page_Up, a, A, 1) or aliases (enter, esc, ctrl, alt, "
				"shift, super/cmd/win, pgup, pgdn, del, backspace, up, down, left, "
				"right), joined with '+' as in ctrl+shift+t",
				utf8_excerpt(part_shown, sizeof(part_shown), part), shown);
			return false;
		}
		if (combo->count == VNC_MAX_COMBO_KEYS) {
			error_set(err, 0, "key combination '%s' has more than %d keys", shown,
				  VNC_MAX_COMBO_KEYS);
			return false;
		}
		combo->keysyms[combo->count++] = sym;
		pos = end;
		if (pos < len && start[pos] == '+') {
			pos++;
			if (pos == len) { /* trailing '+' after a key: "ctrl+" */
				error_set(err, 0,
					  "key combination '%s' ends with '+'; write ctrl+plus "
					  "or ctrl++ for the plus key",
					  shown);
				return false;
			}
		}
	}
	apply_shift(combo);
	return true;
}

bool vnc_keys_parse(const char *text, struct vnc_key_combo *combos, size_t max_combos,
		    size_t *count, struct error *err)
{
	*count = 0;
	const char *p = text;
	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (!*p)
			break;
		const char *end = p;
		while (*end && *end != ' ' && *end != '\t' && *end != '\n')
			end++;
		if (*count == max_combos) {
			error_set(err, 0, "too many key combinations (at most %zu)", max_combos);
			return false;
		}
		if (!parse_combo(p, (size_t)(end - p), &combos[*count], err))
			return false;
		(*count)++;
		p = end;
	}
	if (*count == 0) {
		error_set(err, 0, "no keys given; pass names such as \"Return\" or \"ctrl+c\"");
		return false;
	}
	return true;
}
