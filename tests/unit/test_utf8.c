#include "test.h"

#include "../../util/utf8.h"

static void text_is_valid_utf8_without_nul(void)
{
	ASSERT(utf8_is_text("", 0));
	ASSERT(utf8_is_text("plain ascii", 11));
	ASSERT(utf8_is_text("Gr\xc3\xbc\xc3\x9f" "e \xe6\xbc\xa2 \xf0\x9f\x99\x82", 16));
	ASSERT(!utf8_is_text("a\0b", 3));
	ASSERT(!utf8_is_text("\xff", 1));
	ASSERT(!utf8_is_text("\xc0\xaf", 2));         /* overlong '/' */
	ASSERT(!utf8_is_text("\xed\xa0\x80", 3));     /* a surrogate */
	ASSERT(!utf8_is_text("\xf4\x90\x80\x80", 4)); /* above U+10FFFF */
	ASSERT(!utf8_is_text("\xe6\xbc", 2));         /* cut short */
}

static void complete_prefix_holds_back_a_cut_sequence(void)
{
	const char *s = "ab\xe6\xbc\xa2";
	ASSERT_EQ(utf8_complete_prefix(s, 5), 5);
	ASSERT_EQ(utf8_complete_prefix(s, 4), 2);
	ASSERT_EQ(utf8_complete_prefix(s, 3), 2);
	ASSERT_EQ(utf8_complete_prefix(s, 2), 2);
	ASSERT_EQ(utf8_complete_prefix("\xf0\x9f\x99", 3), 0);
	ASSERT_EQ(utf8_complete_prefix("\xf0\x9f\x99\x82", 4), 4);
	/* Garbage is not held back forever: it is not a sequence start. */
	ASSERT_EQ(utf8_complete_prefix("a\x80\x80\x80\x80", 5), 5);
}

static void sanitize_replaces_bad_bytes_and_nul(void)
{
	char *out = utf8_sanitize("a\xff" "b\0c\xe6\xbc", 7);
	ASSERT_STR_EQ(out, "a\xef\xbf\xbd" "b\xef\xbf\xbd" "c\xef\xbf\xbd\xef\xbf\xbd");
	free(out);
	out = utf8_sanitize("ok \xe6\xbc\xa2", 6);
	ASSERT_STR_EQ(out, "ok \xe6\xbc\xa2");
	free(out);
}

int main(void)
{
	RUN_TEST(text_is_valid_utf8_without_nul);
	RUN_TEST(complete_prefix_holds_back_a_cut_sequence);
	RUN_TEST(sanitize_replaces_bad_bytes_and_nul);
	TEST_EXIT();
}
