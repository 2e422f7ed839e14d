/* SPDX-License-Identifier: MIT */
/* Timed waits on the monotonic clock, so they neither stretch nor end early
 * when someone sets the wall clock. */
#ifndef LIZARD_UTIL_CLOCK_H
#define LIZARD_UTIL_CLOCK_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

/* A condition variable whose timed waits take clock_deadline_ms() times. */
void clock_cond_init(pthread_cond_t *cond);

/* Milliseconds on the monotonic clock. */
int64_t clock_monotonic_ms(void);

/* The monotonic time ms milliseconds from now. */
struct timespec clock_deadline_ms(int64_t ms);

#endif
