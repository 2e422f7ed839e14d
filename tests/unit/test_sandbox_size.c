/* SPDX-License-Identifier: MIT */
/* Sandbox sizes (presets and the option that changes them) and the name
 * rule volumes and cgroups share. */
#include "test.h"

#include "sandbox/name.h"
#include "util/error.h"
#include "sandbox/size.h"

#define GIB ((uint64_t)1 << 30)
#define MIB ((uint64_t)1 << 20)

static void presets_are_two_four_eight_cpus_with_two_gib_each(void)
{
	struct sandbox_sizes sizes;
	sandbox_sizes_init(&sizes);
	struct sandbox_limits l;
	struct error err;
	ASSERT(sandbox_sizes_find(&sizes, "small", &l, &err));
	ASSERT_EQ(l.cpu_millis, 2000);
	ASSERT_EQ(l.memory_bytes, 4 * GIB);
	ASSERT_EQ(l.pids, SANDBOX_PIDS_DEFAULT);
	ASSERT_EQ(l.disk_bytes, 10 * GIB);
	ASSERT(sandbox_sizes_find(&sizes, "large", &l, &err));
	ASSERT_EQ(l.cpu_millis, 8000);
	ASSERT_EQ(l.memory_bytes, 16 * GIB);
	ASSERT_EQ(l.disk_bytes, 40 * GIB);
}

static void the_fourth_field_is_the_disk(void)
{
	struct sandbox_sizes sizes;
	sandbox_sizes_init(&sizes);
	struct error err;
	ASSERT(sandbox_sizes_parse(&sizes, "small=1:512M:256:64M,medium=2:1G", &err));
	ASSERT_EQ(sizes.preset[SANDBOX_SIZE_SMALL].disk_bytes, 64 * MIB);
	ASSERT_EQ(sizes.preset[SANDBOX_SIZE_SMALL].pids, 256);
	ASSERT_EQ(sizes.preset[SANDBOX_SIZE_MEDIUM].disk_bytes, 20 * GIB); /* kept */
	ASSERT(!sandbox_sizes_parse(&sizes, "small=1:512M:256:32M", &err));
	ASSERT_CONTAINS(err.message, "size small: disk \"32M\" must be from 64M to 16T");
	ASSERT(!sandbox_sizes_parse(&sizes, "small=1:512M:256:lots", &err));
	ASSERT_CONTAINS(err.message, "size small: disk \"lots\" is not a byte count");
	ASSERT(!sandbox_sizes_parse(&sizes, "small=1:512M:256:1G:9", &err));
	ASSERT_CONTAINS(err.message, "CPUS:MEMORY[:PIDS[:DISK]]");
	ASSERT_EQ(sizes.preset[SANDBOX_SIZE_SMALL].disk_bytes, 64 * MIB); /* unchanged on error */
}

static void no_size_means_medium(void)
{
	struct sandbox_sizes sizes;
	sandbox_sizes_init(&sizes);
	struct sandbox_limits l;
	struct error err;
	ASSERT(sandbox_sizes_find(&sizes, NULL, &l, &err));
	ASSERT_EQ(l.cpu_millis, 4000);
	ASSERT_EQ(l.memory_bytes, 8 * GIB);
	ASSERT(sandbox_sizes_find(&sizes, "", &l, &err));
	ASSERT_EQ(l.cpu_millis, 4000);
}

static void unknown_size_lists_the_known_ones(void)
{
	struct sandbox_sizes sizes;
	sandbox_sizes_init(&sizes);
	struct sandbox_limits l;
	struct error err;
	ASSERT(!sandbox_sizes_find(&sizes, "huge", &l, &err));
	ASSERT_CONTAINS(err.message, "\"huge\"");
	ASSERT_CONTAINS(err.message, "small, medium (the default) or large");
}

static void option_changes_the_named_presets_only(void)
{
	struct sandbox_sizes sizes;
	sandbox_sizes_init(&sizes);
	struct error err;
	ASSERT(sandbox_sizes_parse(&sizes, "small=1:64M,large=12.5:32GiB:8192", &err));
	ASSERT_EQ(sizes.preset[SANDBOX_SIZE_SMALL].cpu_millis, 1000);
	ASSERT_EQ(sizes.preset[SANDBOX_SIZE_SMALL].memory_bytes, 64 * MIB);
	ASSERT_EQ(sizes.preset[SANDBOX_SIZE_SMALL].pids, SANDBOX_PIDS_DEFAULT); /* kept */
	ASSERT_EQ(sizes.preset[SANDBOX_SIZE_LARGE].cpu_millis, 12500);
	ASSERT_EQ(sizes.preset[SANDBOX_SIZE_LARGE].memory_bytes, 32 * GIB);
	ASSERT_EQ(sizes.preset[SANDBOX_SIZE_LARGE].pids, 8192);
	ASSERT_EQ(sizes.preset[SANDBOX_SIZE_MEDIUM].cpu_millis, 4000); /* untouched */
	ASSERT(sandbox_sizes_parse(&sizes, "medium=0.25:536870912", &err));
	ASSERT_EQ(sizes.preset[SANDBOX_SIZE_MEDIUM].cpu_millis, 250);
	ASSERT_EQ(sizes.preset[SANDBOX_SIZE_MEDIUM].memory_bytes, 512 * MIB);
}

static void a_bad_item_changes_nothing(void)
{
	struct sandbox_sizes sizes, before;
	sandbox_sizes_init(&sizes);
	before = sizes;
	struct error err;
	ASSERT(!sandbox_sizes_parse(&sizes, "small=1:64M,large=8:lots", &err));
	ASSERT_CONTAINS(err.message, "size large: memory \"lots\"");
	ASSERT(memcmp(&sizes, &before, sizeof(sizes)) == 0);
}

static void bad_options_say_what_is_wrong(void)
{
	static const char *cases[][2] = {
		{ "", "empty" },
		{ "small", "NAME=CPUS:MEMORY[:PIDS[:DISK]]" },
		{ "tiny=1:1G", "\"tiny\" is unknown" },
		{ "small=1", "not CPUS:MEMORY[:PIDS[:DISK]]" },
		{ "small=1:1G:64:1G:9", "not CPUS:MEMORY[:PIDS[:DISK]]" },
		{ "small=0:1G", "CPUs \"0\" must be a number from 0.01" },
		{ "small=0.005:1G", "CPUs \"0.005\"" },
		{ "small=-1:1G", "CPUs \"-1\"" },
		{ "small=1.2345:1G", "at most three decimals" },
		{ "small=1e3:1G", "CPUs \"1e3\"" },
		{ "small=2000:1G", "CPUs \"2000\"" },
		{ "small=1:1X", "memory \"1X\"" },
		{ "small=1:8M", "must be from 16M" },
		{ "small=1:99999999999999999999G", "memory \"99999999999999999999G\"" },
		{ "small=1:1G:8", "pids \"8\" must be a whole number from 32" },
		{ "small=1:1G:many", "pids \"many\"" },
		{ "small=1:1G,", "size \"\" is not NAME=" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sandbox_sizes sizes;
		sandbox_sizes_init(&sizes);
		struct error err;
		if (sandbox_sizes_parse(&sizes, cases[i][0], &err))
			FAIL_AT("\"%s\" was accepted", cases[i][0]);
		if (!strstr(err.message, cases[i][1]))
			FAIL_AT("\"%s\": \"%s\" does not contain \"%s\"", cases[i][0], err.message,
				cases[i][1]);
	}
}

static void byte_counts_take_binary_suffixes(void)
{
	static const struct {
		const char *text;
		uint64_t bytes;
	} cases[] = {
		{ "0", 0 },          { "1048576", MIB },    { "64M", 64 * MIB },
		{ "64m", 64 * MIB }, { "64MiB", 64 * MIB }, { "64MB", 64 * MIB },
		{ "4G", 4 * GIB },   { "1T", 1024 * GIB },  { "512K", 512 * 1024 },
		{ "100B", 100 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t bytes = 1;
		struct error err;
		ASSERT(sandbox_parse_bytes(cases[i].text, &bytes, &err));
		ASSERT_EQ(bytes, cases[i].bytes);
	}
	uint64_t bytes;
	struct error err;
	ASSERT(!sandbox_parse_bytes("", &bytes, &err));
	ASSERT(!sandbox_parse_bytes("G", &bytes, &err));
	ASSERT(!sandbox_parse_bytes("4 G", &bytes, &err));
	ASSERT(!sandbox_parse_bytes("4GG", &bytes, &err));
	ASSERT(!sandbox_parse_bytes("17179869184T", &bytes, &err)); /* 2^34 TiB overflows */
}

static void limits_read_as_a_sentence(void)
{
	struct sandbox_limits l = {
		.cpu_millis = 2000, .memory_bytes = 4 * GIB, .pids = 4096, .disk_bytes = 10 * GIB
	};
	char text[128];
	sandbox_limits_describe(&l, text, sizeof(text));
	ASSERT_STR_EQ(text, "2 CPUs, 4 GiB memory, 4096 pids, 10 GiB disk");
	struct sandbox_limits m = { .cpu_millis = 1500, .memory_bytes = 64 * MIB + 1 };
	sandbox_limits_describe(&m, text, sizeof(text));
	ASSERT_STR_EQ(text, "1.5 CPUs, 67108865 bytes memory, no pids limit, no disk limit");
}

static void names_follow_the_stated_rule(void)
{
	static const char *good[] = {
		"a",   "work", "my-volume_2",
		"A.b", "0",    "1234567890123456789012345678901234567890123456789012345678901234"
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct error err;
		if (!sandbox_name_check("volume", good[i], &err))
			FAIL_AT("\"%s\" was refused: %s", good[i], err.message);
	}
	static const char *bad[][2] = {
		{ "", "empty" },
		{ ".", "'.' at position 1" },
		{ "..", "'.' at position 1" },
		{ ".hidden", "'.' at position 1" },
		{ "-rf", "'-' at position 1" },
		{ "a/b", "'/' at position 2" },
		{ "a..b", "contains \"..\"" },
		{ "a b", "' ' at position 2" },
		{ "caf\xc3\xa9", "byte 0xc3 at position 4" },
		{ "a\nb", "byte 0x0a" },
		{ "12345678901234567890123456789012345678901234567890123456789012345",
		  "longer than 64" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct error err;
		if (sandbox_name_check("volume", bad[i][0], &err))
			FAIL_AT("\"%s\" was accepted", bad[i][0]);
		if (!strstr(err.message, bad[i][1]))
			FAIL_AT("\"%s\" does not contain \"%s\"", err.message, bad[i][1]);
	}
	struct error err;
	ASSERT(!sandbox_name_check("volume", NULL, &err));
}

static void errors_carry_errno_and_the_path(void)
{
	struct error err;
	ASSERT(!error_set(&err, 2, "cannot open %s", "/x/y"));
	ASSERT_EQ(err.code, 2);
	ASSERT_STR_EQ(err.message, "cannot open /x/y: No such file or directory");
	ASSERT(!error_set(&err, 0, "plain"));
	ASSERT_STR_EQ(err.message, "plain");
	ASSERT(!error_set(NULL, 1, "ignored"));
}

int main(void)
{
	RUN_TEST(presets_are_two_four_eight_cpus_with_two_gib_each);
	RUN_TEST(no_size_means_medium);
	RUN_TEST(unknown_size_lists_the_known_ones);
	RUN_TEST(option_changes_the_named_presets_only);
	RUN_TEST(a_bad_item_changes_nothing);
	RUN_TEST(bad_options_say_what_is_wrong);
	RUN_TEST(byte_counts_take_binary_suffixes);
	RUN_TEST(limits_read_as_a_sentence);
	RUN_TEST(the_fourth_field_is_the_disk);
	RUN_TEST(names_follow_the_stated_rule);
	RUN_TEST(errors_carry_errno_and_the_path);
	TEST_EXIT();
}
