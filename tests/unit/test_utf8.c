/* SPDX-License-Identifier: MIT */
/* util/utf8: what is well-formed, how bad bytes are repaired, and where
 * excerpts are cut. */
#include "test.h"

#include "util/utf8.h"

static void decodes_each_length_and_refuses_malformed_forms(void)
{
	uint32_t cp;
	ASSERT_EQ(utf8_decode("A", 1, &cp), 1);
	ASSERT_EQ(cp, 'A');
	ASSERT_EQ(utf8_decode("\xc3\xa9", 2, &cp), 2);
	ASSERT_EQ(cp, 0xe9);
	ASSERT_EQ(utf8_decode("\xe6\xbc\xa2", 3, &cp), 3);
	ASSERT_EQ(cp, 0x6f22);
	ASSERT_EQ(utf8_decode("\xf0\x9f\x99\x82", 4, &cp), 4);
	ASSERT_EQ(cp, 0x1f642);
	ASSERT_EQ(utf8_decode("\xc0\xaf", 2, &cp), 0);         /* overlong */
	ASSERT_EQ(utf8_decode("\xe0\x80\xaf", 3, &cp), 0);     /* overlong */
	ASSERT_EQ(utf8_decode("\xed\xa0\x80", 3, &cp), 0);     /* surrogate */
	ASSERT_EQ(utf8_decode("\xe6\xbc", 2, &cp), 0);         /* truncated */
	ASSERT_EQ(utf8_decode("\x80", 1, &cp), 0);             /* stray continuation */
	ASSERT_EQ(utf8_decode("\xf4\x90\x80\x80", 4, &cp), 0); /* above U+10FFFF */
	ASSERT_EQ(utf8_decode("\xff", 1, &cp), 0);
	ASSERT_EQ(utf8_decode("", 0, &cp), 0);
}

static void validity_names_the_first_bad_byte(void)
{
	size_t bad = 99;
	ASSERT(utf8_valid("", 0, &bad));
	ASSERT(utf8_valid("plain \xc3\xa9t\xc3\xa9 \xf0\x9f\x99\x82", 16, &bad));
	ASSERT(!utf8_valid("ab\xffz", 4, &bad));
	ASSERT_EQ(bad, 2);
	/* A character cut by the length is not whole. */
	ASSERT(!utf8_valid("ab\xc3\xa9", 3, &bad));
	ASSERT_EQ(bad, 2);
	/* NUL is a character like any other. */
	ASSERT(utf8_valid("a\0b", 3, NULL));
}

static void repair_replaces_each_bad_byte(void)
{
	size_t len = 0;
	char *out = utf8_repair("a\xff\xc3\xa9\xe6\xbc"
				"b",
				7, &len);
	ASSERT_STR_EQ(out, "a\xef\xbf\xbd\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd"
			   "b");
	ASSERT_EQ(len, strlen(out));
	ASSERT(utf8_valid(out, len, NULL));
	free(out);
	out = utf8_repair("", 0, &len);
	ASSERT_STR_EQ(out, "");
	free(out);
}

static void excerpts_end_between_characters(void)
{
	char out[6];
	/* "ab" and two 2-byte characters would need 6 bytes: only one fits. */
	ASSERT_STR_EQ(utf8_excerpt(out, sizeof(out), "ab\xc3\xa9\xc3\xa9"), "ab\xc3\xa9");
	ASSERT_STR_EQ(utf8_excerpt(out, sizeof(out), "abcdefgh"), "abcde");
	ASSERT_STR_EQ(utf8_excerpt(out, sizeof(out), "\xf0\x9f\x99\x82\xf0\x9f\x99\x82"),
		      "\xf0\x9f\x99\x82");
	ASSERT_STR_EQ(utf8_excerpt(out, sizeof(out), "x\xffy"), "x?y");
	char one[1];
	ASSERT_STR_EQ(utf8_excerpt(one, sizeof(one), "abc"), "");
}

static void text_is_well_formed_and_free_of_nul(void)
{
	ASSERT(utf8_is_text("", 0));
	ASSERT(utf8_is_text("Gr\xc3\xbc\xc3\x9f"
			    "e \xe6\xbc\xa2 \xf0\x9f\x99\x82",
			    16));
	ASSERT(!utf8_is_text("a\0b", 3));
	ASSERT(!utf8_is_text("\xe6\xbc", 2));
}

static void complete_prefix_holds_back_a_cut_character(void)
{
	const char *s = "ab\xe6\xbc\xa2";
	ASSERT_EQ(utf8_complete_prefix(s, 5), 5);
	ASSERT_EQ(utf8_complete_prefix(s, 4), 2);
	ASSERT_EQ(utf8_complete_prefix(s, 3), 2);
	ASSERT_EQ(utf8_complete_prefix(s, 2), 2);
	ASSERT_EQ(utf8_complete_prefix("\xf0\x9f\x99", 3), 0);
	ASSERT_EQ(utf8_complete_prefix("\xf0\x9f\x99\x82", 4), 4);
	/* Stray continuation bytes are not held back forever. */
	ASSERT_EQ(utf8_complete_prefix("a\x80\x80\x80\x80", 5), 5);
}

static void sanitize_replaces_bad_bytes_and_nul(void)
{
	char *out = utf8_sanitize("a\xff"
				  "b\0c",
				  5);
	ASSERT_STR_EQ(out, "a\xef\xbf\xbd"
			   "b\xef\xbf\xbd"
			   "c");
	free(out);
	out = utf8_sanitize("ok \xe6\xbc\xa2", 6);
	ASSERT_STR_EQ(out, "ok \xe6\xbc\xa2");
	free(out);
}

static void latin1_keeps_what_it_can_and_marks_the_rest(void)
{
	char out[32];
	size_t replaced = 99, first = 99;
	/* é is U+00E9 (one Latin-1 byte); 漢 and 🙂 are beyond U+00FF. */
	const char *s = "caf\xc3\xa9 \xe6\xbc\xa2!\xf0\x9f\x99\x82";
	size_t n = utf8_to_latin1(s, strlen(s), out, &replaced, &first);
	ASSERT_EQ(n, 8);
	ASSERT(memcmp(out, "caf\xe9 ?!?", 8) == 0);
	ASSERT_EQ(replaced, 2);
	ASSERT_EQ(first, 6);
	/* A stray byte is one '?'; plain text passes unchanged. */
	n = utf8_to_latin1("a\xff"
			   "b",
			   3, out, &replaced, &first);
	ASSERT_EQ(n, 3);
	ASSERT(memcmp(out, "a?b", 3) == 0);
	ASSERT_EQ(replaced, 1);
	ASSERT_EQ(first, 1);
	n = utf8_to_latin1("plain\n", 6, out, &replaced, &first);
	ASSERT_EQ(n, 6);
	ASSERT_EQ(replaced, 0);
	ASSERT_EQ(first, 6);
}

int main(void)
{
	RUN_TEST(latin1_keeps_what_it_can_and_marks_the_rest);
	RUN_TEST(text_is_well_formed_and_free_of_nul);
	RUN_TEST(complete_prefix_holds_back_a_cut_character);
	RUN_TEST(sanitize_replaces_bad_bytes_and_nul);
	RUN_TEST(decodes_each_length_and_refuses_malformed_forms);
	RUN_TEST(validity_names_the_first_bad_byte);
	RUN_TEST(repair_replaces_each_bad_byte);
	RUN_TEST(excerpts_end_between_characters);
	TEST_EXIT();
}
