/* SPDX-License-Identifier: MIT */
/* Minimal assertions that print both sides, in the spirit of libuv's
 * task.h. A test file defines test functions and lists them in main with
 * RUN_TEST. A test that cannot run here says why with SKIP and counts as
 * skipped; an executable whose tests were all skipped exits 77, which
 * meson counts as skipped. */
#ifndef LIZARD_TEST_H
#define LIZARD_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

static int test_failures, test_runs, test_skips;
static char test_skip_reason[256];

#define FAIL_AT(...)                                            \
	do {                                                    \
		fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
		fprintf(stderr, __VA_ARGS__);                   \
		fputc('\n', stderr);                            \
		test_failures++;                                \
		return;                                         \
	} while (0)

#define ASSERT(cond)                                            \
	do {                                                    \
		if (!(cond))                                    \
			FAIL_AT("assertion failed: %s", #cond); \
	} while (0)

#define ASSERT_EQ(a, b)                                                    \
	do {                                                               \
		long long a_ = (long long)(a), b_ = (long long)(b);        \
		if (a_ != b_)                                              \
			FAIL_AT("%s == %s: %lld != %lld", #a, #b, a_, b_); \
	} while (0)

#define ASSERT_STR_EQ(a, b)                                                               \
	do {                                                                              \
		const char *a_ = (a), *b_ = (b);                                          \
		if (!a_ || !b_ || strcmp(a_, b_) != 0)                                    \
			FAIL_AT("%s == %s: \"%s\" != \"%s\"", #a, #b, a_ ? a_ : "(null)", \
				b_ ? b_ : "(null)");                                      \
	} while (0)

#define ASSERT_CONTAINS(haystack, needle)                                                        \
	do {                                                                                     \
		const char *h_ = (haystack);                                                     \
		if (!h_ || !strstr(h_, (needle)))                                                \
			FAIL_AT("\"%s\" does not contain \"%s\"", h_ ? h_ : "(null)", (needle)); \
	} while (0)

/* Ends the test as skipped, with why it cannot run here (printf-style).
 * It returns from the function it is in: use it in the test itself. */
#define SKIP(...)                                                                  \
	do {                                                                       \
		snprintf(test_skip_reason, sizeof(test_skip_reason), __VA_ARGS__); \
		return;                                                            \
	} while (0)

#define RUN_TEST(fn)                                                              \
	do {                                                                      \
		int before_ = test_failures;                                      \
		test_skip_reason[0] = '\0';                                       \
		test_runs++;                                                      \
		fn();                                                             \
		if (test_failures != before_)                                     \
			fprintf(stderr, "FAIL %s\n", #fn);                        \
		else if (test_skip_reason[0]) {                                   \
			fprintf(stderr, "SKIP: %s: %s\n", #fn, test_skip_reason); \
			test_skips++;                                             \
		} else                                                            \
			fprintf(stderr, "ok %s\n", #fn);                          \
	} while (0)

/* The parts of a message as one NUL-terminated heap string (what an MCP
 * send function hands over), or NULL when memory runs out. */
static inline char *test_join_parts(const struct iovec *parts, int count)
{
	size_t len = 0;
	for (int i = 0; i < count; i++)
		len += parts[i].iov_len;
	char *text = malloc(len + 1), *p = text;
	if (!text)
		return NULL;
	for (int i = 0; i < count; i++) {
		memcpy(p, parts[i].iov_base, parts[i].iov_len);
		p += parts[i].iov_len;
	}
	*p = '\0';
	return text;
}

/* Failed if any test failed; else skipped (77) if every test was skipped. */
#define TEST_EXIT()                                                      \
	return test_failures                              ? EXIT_FAILURE \
	       : test_runs > 0 && test_skips == test_runs ? 77           \
							  : EXIT_SUCCESS

#endif
