/* SPDX-License-Identifier: MIT */
#include "test.h"

#include "vnc/keys.h"

#include <xkbcommon/xkbcommon-keysyms.h>

static void parses_keysym_names_in_any_case(void)
{
	ASSERT_EQ(vnc_keysym_from_name("Return"), XKB_KEY_Return);
	ASSERT_EQ(vnc_keysym_from_name("return"), XKB_KEY_Return);
	ASSERT_EQ(vnc_keysym_from_name("KP_Enter"), XKB_KEY_KP_Enter);
	ASSERT_EQ(vnc_keysym_from_name("F5"), XKB_KEY_F5);
	ASSERT_EQ(vnc_keysym_from_name("f12"), XKB_KEY_F12);
	ASSERT_EQ(vnc_keysym_from_name("Page_Down"), XKB_KEY_Page_Down);
	ASSERT_EQ(vnc_keysym_from_name("BackSpace"), XKB_KEY_BackSpace);
}

static void parses_common_aliases(void)
{
	ASSERT_EQ(vnc_keysym_from_name("enter"), XKB_KEY_Return);
	ASSERT_EQ(vnc_keysym_from_name("ESC"), XKB_KEY_Escape);
	ASSERT_EQ(vnc_keysym_from_name("ctrl"), XKB_KEY_Control_L);
	ASSERT_EQ(vnc_keysym_from_name("cmd"), XKB_KEY_Super_L);
	ASSERT_EQ(vnc_keysym_from_name("win"), XKB_KEY_Super_L);
	ASSERT_EQ(vnc_keysym_from_name("pgup"), XKB_KEY_Prior);
	ASSERT_EQ(vnc_keysym_from_name("del"), XKB_KEY_Delete);
	ASSERT_EQ(vnc_keysym_from_name("option"), XKB_KEY_Alt_L);
}

static void single_characters_keep_their_case(void)
{
	ASSERT_EQ(vnc_keysym_from_name("a"), XKB_KEY_a);
	ASSERT_EQ(vnc_keysym_from_name("A"), XKB_KEY_A);
	ASSERT_EQ(vnc_keysym_from_name("1"), XKB_KEY_1);
	ASSERT_EQ(vnc_keysym_from_name("é"), 0xe9);
	ASSERT_EQ(vnc_keysym_from_name("€"), 0x010020ac);
}

static void unknown_names_are_zero(void)
{
	ASSERT_EQ(vnc_keysym_from_name("nosuchkey"), 0);
	ASSERT_EQ(vnc_keysym_from_name(""), 0);
}

static void combos_press_in_order(void)
{
	struct vnc_key_combo combos[VNC_MAX_COMBOS];
	size_t count;
	struct error err;
	ASSERT(vnc_keys_parse("ctrl+alt+Delete  Return", combos, VNC_MAX_COMBOS, &count, &err));
	ASSERT_EQ(count, 2);
	ASSERT_EQ(combos[0].count, 3);
	ASSERT_EQ(combos[0].keysyms[0], XKB_KEY_Control_L);
	ASSERT_EQ(combos[0].keysyms[1], XKB_KEY_Alt_L);
	ASSERT_EQ(combos[0].keysyms[2], XKB_KEY_Delete);
	ASSERT_EQ(combos[1].count, 1);
	ASSERT_EQ(combos[1].keysyms[0], XKB_KEY_Return);
}

static void shift_sends_the_shifted_symbol(void)
{
	struct vnc_key_combo combos[4];
	size_t count;
	struct error err;
	ASSERT(vnc_keys_parse("ctrl+shift+t shift+1 shift+Tab", combos, 4, &count, &err));
	ASSERT_EQ(combos[0].keysyms[2], XKB_KEY_T);
	ASSERT_EQ(combos[1].keysyms[1], XKB_KEY_exclam);
	ASSERT_EQ(combos[2].keysyms[1], XKB_KEY_ISO_Left_Tab);
}

static void plus_key_is_reachable(void)
{
	struct vnc_key_combo combos[4];
	size_t count;
	struct error err;
	ASSERT(vnc_keys_parse("ctrl++ + ctrl+plus", combos, 4, &count, &err));
	ASSERT_EQ(count, 3);
	ASSERT_EQ(combos[0].count, 2);
	ASSERT_EQ(combos[0].keysyms[1], XKB_KEY_plus);
	ASSERT_EQ(combos[1].keysyms[0], XKB_KEY_plus);
	ASSERT_EQ(combos[2].keysyms[1], XKB_KEY_plus);
}

static void errors_name_the_part_not_understood(void)
{
	struct vnc_key_combo combos[4];
	size_t count;
	struct error err;
	ASSERT(!vnc_keys_parse("ctrl+shft+t", combos, 4, &count, &err));
	ASSERT_CONTAINS(err.message, "unknown key 'shft' in 'ctrl+shft+t'");
	ASSERT(!vnc_keys_parse("ctrl+", combos, 4, &count, &err));
	ASSERT_CONTAINS(err.message, "ends with '+'");
	ASSERT(!vnc_keys_parse("   ", combos, 4, &count, &err));
	ASSERT_CONTAINS(err.message, "no keys given");
	ASSERT(!vnc_keys_parse("a b c d e", combos, 4, &count, &err));
	ASSERT_CONTAINS(err.message, "too many");
	ASSERT(!vnc_keys_parse("a+b+c+d+e+f+g+h+i", combos, 4, &count, &err));
	ASSERT_CONTAINS(err.message, "more than 8 keys");
}

static void codepoints_map_to_keysyms(void)
{
	ASSERT_EQ(vnc_keysym_for_codepoint('a'), 'a');
	ASSERT_EQ(vnc_keysym_for_codepoint(0xf6), 0xf6);         /* ö: Latin-1 as is */
	ASSERT_EQ(vnc_keysym_for_codepoint(0x6f22), 0x01006f22); /* 漢 */
	ASSERT_EQ(vnc_keysym_for_codepoint(0x1f642), 0x0101f642);
}

int main(void)
{
	RUN_TEST(parses_keysym_names_in_any_case);
	RUN_TEST(parses_common_aliases);
	RUN_TEST(single_characters_keep_their_case);
	RUN_TEST(unknown_names_are_zero);
	RUN_TEST(combos_press_in_order);
	RUN_TEST(shift_sends_the_shifted_symbol);
	RUN_TEST(plus_key_is_reachable);
	RUN_TEST(errors_name_the_part_not_understood);
	RUN_TEST(codepoints_map_to_keysyms);
	TEST_EXIT();
}
