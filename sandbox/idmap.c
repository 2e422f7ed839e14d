/* SPDX-License-Identifier: MIT */
#include "sandbox/idmap.h"

#include <stdio.h>

unsigned long sandbox_identity_map(const char *file, char *out, size_t size)
{
	char path[64];
	size_t used = 0;
	unsigned long inside, outside, count, total = 0;
	snprintf(path, sizeof(path), "/proc/self/%s", file);
	out[0] = '\0';
	FILE *f = fopen(path, "re");
	while (f && fscanf(f, "%lu %lu %lu", &inside, &outside, &count) == 3 && used < size &&
	       size - used > 64) {
		used += (size_t)snprintf(out + used, size - used, "%lu %lu %lu\n", inside, inside,
					 count);
		total += count;
	}
	if (f)
		fclose(f);
	return total;
}
