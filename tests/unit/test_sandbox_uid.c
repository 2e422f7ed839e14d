/* SPDX-License-Identifier: MIT */
/* The --uid-range option and the subordinate id files (/etc/subuid,
 * /etc/subgid) a root daemon reads before it gives a sandbox a uid. */
#include "test.h"

#include "util/error.h"
#include "sandbox/subid.h"
#include "sandbox/uid.h"

#include <unistd.h>

static void a_range_is_first_and_count(void)
{
	struct sandbox_uid_range r = { 0, 0 };
	struct error err;
	ASSERT(sandbox_uid_range_parse("3000000:1000", 0, &r, &err));
	ASSERT_EQ(r.first, 3000000);
	ASSERT_EQ(r.count, 1000);
	ASSERT(sandbox_uid_range_parse("65536:1", 0, &r, &err));
	ASSERT_EQ(r.first, 65536);
	/* Up to the last uid bubblewrap maps, 2^31 - 1. */
	ASSERT(sandbox_uid_range_parse("2147483647:1", 0, &r, &err));
	ASSERT(sandbox_uid_range_parse("65536:2147418112", 0, &r, &err));
	ASSERT_EQ(r.count, 2147418112u);
}

static void what_is_not_first_colon_count_is_refused(void)
{
	const char *bad[] = {
		"",           "3000000",    ":5",           "3000000:",   "3000000:5:6",
		"-3000000:5", "+3000000:5", "3000000: 5",   " 3000000:5", "3000000:5 ",
		"3e6:5",      "0x300000:5", "99999999999:1"
	};
	struct sandbox_uid_range r;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct error err;
		if (sandbox_uid_range_parse(bad[i], 0, &r, &err))
			FAIL_AT("'%s' was taken as a range", bad[i]);
		ASSERT_CONTAINS(err.message, "is not FIRST:COUNT");
	}
}

static void a_range_says_why_it_is_refused(void)
{
	struct sandbox_uid_range r;
	struct error err;
	ASSERT(!sandbox_uid_range_parse("3000000:0", 0, &r, &err));
	ASSERT_STR_EQ(err.message, "'3000000:0' holds no uid: COUNT must be at least 1");
	ASSERT(!sandbox_uid_range_parse("1000:100", 0, &r, &err));
	ASSERT_CONTAINS(err.message, "starts below 65536");
	ASSERT(!sandbox_uid_range_parse("65535:10", 0, &r, &err));
	ASSERT_CONTAINS(err.message, "starts below 65536");
	ASSERT(!sandbox_uid_range_parse("2147483647:2", 0, &r, &err));
	ASSERT_CONTAINS(err.message, "goes past uid 2147483647");
	ASSERT(!sandbox_uid_range_parse("4294967295:1", 0, &r, &err));
	ASSERT_CONTAINS(err.message, "goes past uid 2147483647");
	/* A daemon of an ordinary user with a high uid. */
	ASSERT(!sandbox_uid_range_parse("3000000:10", 3000009, &r, &err));
	ASSERT_STR_EQ(err.message, "'3000000:10' holds this daemon's own uid 3000009");
	ASSERT(sandbox_uid_range_parse("3000000:10", 3000010, &r, &err));
	ASSERT(sandbox_uid_range_parse("3000000:10", 2999999, &r, &err));
}

static void subordinate_ranges_cover_their_ids_only(void)
{
	struct sandbox_id_spans spans = { 0 };
	ASSERT(sandbox_subid_parse("alice:100000:65536\n"
				   "1001:165536:65536\r\n"
				   "bob:300000:10\n",
				   &spans));
	ASSERT_EQ(spans.count, 3);
	uint64_t end = 0;
	ASSERT(!sandbox_id_spans_cover(&spans, 99999, &end));
	ASSERT(sandbox_id_spans_cover(&spans, 100000, &end));
	ASSERT_EQ(end, 165536);
	/* The second line's owner is a uid, and the line ends in CR LF. */
	ASSERT(sandbox_id_spans_cover(&spans, 231071, &end));
	ASSERT_EQ(end, 231072);
	ASSERT(!sandbox_id_spans_cover(&spans, 231072, &end));
	ASSERT(sandbox_id_spans_cover(&spans, 300009, &end));
	ASSERT(!sandbox_id_spans_cover(&spans, 300010, &end));
	sandbox_id_spans_finish(&spans);
	ASSERT_EQ(spans.count, 0);
}

static void overlapping_ranges_end_where_the_longest_does(void)
{
	struct sandbox_id_spans spans = { 0 };
	ASSERT(sandbox_subid_parse("a:100000:10\nb:100005:100\nc:100002:3", &spans));
	uint64_t end = 0;
	ASSERT(sandbox_id_spans_cover(&spans, 100006, &end));
	ASSERT_EQ(end, 100105);
	/* The last line needs no newline. */
	ASSERT(sandbox_id_spans_cover(&spans, 100003, &end));
	ASSERT_EQ(end, 100010);
	sandbox_id_spans_finish(&spans);
}

static void comments_blank_and_malformed_lines_hold_no_ids(void)
{
	struct sandbox_id_spans spans = { 0 };
	ASSERT(sandbox_subid_parse("", &spans));
	ASSERT(sandbox_subid_parse("\n\n# alice:100000:65536\n"
				   ":200000:10\n"    /* no owner */
				   "carol:300000\n"  /* no count */
				   "dave:400000:0\n" /* nothing */
				   "erin:x:10\n"
				   "frank:500000:10:extra\n"
				   "grace:600000:-1\n",
				   &spans));
	ASSERT_EQ(spans.count, 0);
	/* The whole of uid_t's numbers: an end past 2^32 - 1 stays exact. */
	ASSERT(sandbox_subid_parse("big:4294967000:295\n", &spans));
	uint64_t end = 0;
	ASSERT(sandbox_id_spans_cover(&spans, 4294967294u, &end));
	ASSERT_EQ(end, 4294967295u);
	sandbox_id_spans_finish(&spans);
}

static void an_ordinary_daemon_takes_its_own_first_range_of_a_whole_block(void)
{
	const char *text = "alice:100000:65536\n"
			   "65534:200000:100\n"    /* too small */
			   "655340:250000:65536\n" /* another uid */
			   "nobod:260000:65536\n"  /* another name */
			   "nobody:300000:65536\n"
			   "65534:400000:65536\n";
	struct sandbox_subid_owner nobody = { "nobody", 65534 };
	struct sandbox_id_spans spans = { 0 };
	uint32_t start = 0;
	ASSERT(sandbox_subid_parse_of(text, &nobody, &spans));
	ASSERT_EQ(spans.count, 3);
	ASSERT(sandbox_subid_pick(&spans, &start));
	ASSERT_EQ(start, 300000);
	sandbox_id_spans_finish(&spans);
	/* Owned by its uid alone, when the user has no name. */
	struct sandbox_subid_owner unnamed = { NULL, 65534 };
	ASSERT(sandbox_subid_parse_of(text, &unnamed, &spans));
	ASSERT_EQ(spans.count, 2);
	ASSERT(sandbox_subid_pick(&spans, &start));
	ASSERT_EQ(start, 400000);
	sandbox_id_spans_finish(&spans);
	/* None, or one that would end past the last uid: nothing to pick. */
	ASSERT(sandbox_subid_parse_of("nobody:4294967000:65536\n", &nobody, &spans));
	ASSERT(!sandbox_subid_pick(&spans, &start));
	sandbox_id_spans_finish(&spans);
	struct sandbox_subid_owner carol = { "carol", 1002 };
	ASSERT(sandbox_subid_parse_of(text, &carol, &spans));
	ASSERT_EQ(spans.count, 0);
	ASSERT(!sandbox_subid_pick(&spans, &start));
}

/* Far above what any machine gives out, and below 2^31. */
#define BLOCKS_AT (2000000000u / SANDBOX_ID_BLOCK * SANDBOX_ID_BLOCK)

static void sandboxes_get_whole_blocks_that_do_not_overlap(void)
{
	/* Two and a half blocks, starting mid-block: two whole ones fit. */
	struct sandbox_uid_range r = { BLOCKS_AT - SANDBOX_ID_BLOCK / 2, 5 * SANDBOX_ID_BLOCK / 2 };
	ASSERT_EQ(sandbox_uid_width(&r), SANDBOX_ID_BLOCK);
	struct error err;
	uid_t a = 0, b = 0, c = 0;
	ASSERT(sandbox_uid_acquire(&r, SANDBOX_ID_BLOCK, &a, &err));
	ASSERT(sandbox_uid_acquire(&r, SANDBOX_ID_BLOCK, &b, &err));
	ASSERT(a != b);
	ASSERT_EQ(a % SANDBOX_ID_BLOCK, 0);
	ASSERT_EQ(b % SANDBOX_ID_BLOCK, 0);
	ASSERT(a >= BLOCKS_AT && a <= BLOCKS_AT + SANDBOX_ID_BLOCK);
	ASSERT(b >= BLOCKS_AT && b <= BLOCKS_AT + SANDBOX_ID_BLOCK);
	ASSERT(!sandbox_uid_acquire(&r, SANDBOX_ID_BLOCK, &c, &err));
	ASSERT_CONTAINS(err.message, "no free block of 65536 host uids");
	/* A single id of the range is inside a held block too. */
	struct sandbox_uid_range one = { a + 100, 1 };
	ASSERT(!sandbox_uid_acquire(&one, 1, &c, &err));
	sandbox_uid_release(a);
	ASSERT(sandbox_uid_acquire(&r, SANDBOX_ID_BLOCK, &c, &err));
	ASSERT_EQ(c, a);
	sandbox_uid_release(b);
	sandbox_uid_release(c);
}

static void a_range_without_a_whole_block_gives_single_ids(void)
{
	struct sandbox_uid_range r = { BLOCKS_AT + 1, SANDBOX_ID_BLOCK };
	ASSERT_EQ(sandbox_uid_width(&r), 1);
	r.first = BLOCKS_AT;
	ASSERT_EQ(sandbox_uid_width(&r), SANDBOX_ID_BLOCK);
	ASSERT_EQ(sandbox_uid_width(NULL), SANDBOX_ID_BLOCK);
}

int main(void)
{
	RUN_TEST(a_range_is_first_and_count);
	RUN_TEST(what_is_not_first_colon_count_is_refused);
	RUN_TEST(a_range_says_why_it_is_refused);
	RUN_TEST(subordinate_ranges_cover_their_ids_only);
	RUN_TEST(overlapping_ranges_end_where_the_longest_does);
	RUN_TEST(comments_blank_and_malformed_lines_hold_no_ids);
	RUN_TEST(an_ordinary_daemon_takes_its_own_first_range_of_a_whole_block);
	RUN_TEST(sandboxes_get_whole_blocks_that_do_not_overlap);
	RUN_TEST(a_range_without_a_whole_block_gives_single_ids);
	return test_failures ? 1 : 0;
}
