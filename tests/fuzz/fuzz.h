/* SPDX-License-Identifier: MIT */
/* Shared by the libFuzzer targets: a check that aborts, so the fuzzer
 * reports the input that broke an invariant. */
#ifndef LIZARD_FUZZ_H
#define LIZARD_FUZZ_H

#include <stdio.h>
#include <stdlib.h>

#define FUZZ_CHECK(cond, ...)                                             \
	do {                                                              \
		if (!(cond)) {                                            \
			fprintf(stderr, "invariant broken: %s: ", #cond); \
			fprintf(stderr, __VA_ARGS__);                     \
			fputc('\n', stderr);                              \
			abort();                                          \
		}                                                         \
	} while (0)

#endif
