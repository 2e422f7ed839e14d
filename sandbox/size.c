/* SPDX-License-Identifier: MIT */
#include "sandbox/size.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *const size_names[SANDBOX_SIZE_COUNT] = { "small", "medium", "large" };

void sandbox_sizes_init(struct sandbox_sizes *sizes)
{
	static const uint32_t cpus[SANDBOX_SIZE_COUNT] = { 2, 4, 8 };
	for (int i = 0; i < SANDBOX_SIZE_COUNT; i++) {
		sizes->preset[i].cpu_millis = cpus[i] * 1000;
		/* 4, 8, 16 GiB: memory doubles with the CPUs, as in the hosted sandboxes. */
		sizes->preset[i].memory_bytes = (uint64_t)cpus[i] * 2 << 30;
		sizes->preset[i].pids = SANDBOX_PIDS_DEFAULT;
		/* 10, 20, 40 GiB: sparse, so only what is written costs. */
		sizes->preset[i].disk_bytes = (uint64_t)cpus[i] * 5 << 30;
	}
}

const char *sandbox_size_name(enum sandbox_size_index index)
{
	return (int)index >= 0 && index < SANDBOX_SIZE_COUNT ? size_names[index] : NULL;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Digits, at most three decimals, as thousandths; no sign, no exponent. */
static bool parse_millis(const char *text, uint64_t *out)
{
	uint64_t whole = 0;
	const char *p = text;
	if (!is_digit(*p))
		return false;
	for (; is_digit(*p); p++) {
		whole = whole * 10 + (uint64_t)(*p - '0');
		if (whole > UINT32_MAX)
			return false;
	}
	uint64_t millis = whole * 1000;
	if (*p == '.') {
		p++;
		if (!is_digit(*p))
			return false;
		uint64_t scale = 100;
		for (; is_digit(*p); p++) {
			if (scale == 0)
				return false; /* more than three decimals */
			millis += (uint64_t)(*p - '0') * scale;
			scale /= 10;
		}
	}
	*out = millis;
	return *p == '\0';
}

static bool parse_count(const char *text, uint64_t *out)
{
	uint64_t v = 0;
	if (!is_digit(*text))
		return false;
	for (const char *p = text; *p; p++) {
		if (!is_digit(*p))
			return false;
		v = v * 10 + (uint64_t)(*p - '0');
		if (v > UINT64_MAX / 20)
			return false;
	}
	*out = v;
	return true;
}

bool sandbox_parse_bytes(const char *text, uint64_t *bytes, struct error *err)
{
	static const struct {
		const char *suffix;
		unsigned shift;
	} units[] = {
		{ "", 0 },     { "B", 0 },   { "K", 10 },   { "KB", 10 },  { "KiB", 10 },
		{ "M", 20 },   { "MB", 20 }, { "MiB", 20 }, { "G", 30 },   { "GB", 30 },
		{ "GiB", 30 }, { "T", 40 },  { "TB", 40 },  { "TiB", 40 },
	};
	char digits[32];
	size_t n = 0;
	while (is_digit(text[n]) && n < sizeof(digits) - 1) {
		digits[n] = text[n];
		n++;
	}
	digits[n] = '\0';
	uint64_t value;
	if (n == 0 || is_digit(text[n]) || !parse_count(digits, &value))
		return error_set(err, 0, "\"%s\" is not a byte count like 512M or 4G", text);
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcasecmp(text + n, units[i].suffix) != 0)
			continue;
		if (value > (UINT64_MAX >> units[i].shift))
			break;
		*bytes = value << units[i].shift;
		return true;
	}
	return error_set(err, 0,
			 "\"%s\" is not a byte count like 512M or 4G "
			 "(suffixes K, M, G, T; powers of 1024)",
			 text);
}

/* Copies [start, end) into out as a string; false when it does not fit. */
static bool copy_part(const char *start, const char *end, char *out, size_t size)
{
	size_t len = (size_t)(end - start);
	if (len >= size)
		return false;
	memcpy(out, start, len);
	out[len] = '\0';
	return true;
}

/* One NAME=CPUS:MEMORY[:PIDS[:DISK]] item. */
static bool parse_item(struct sandbox_sizes *sizes, const char *item, struct error *err)
{
	const char *eq = strchr(item, '=');
	char name[16];
	if (!eq || !copy_part(item, eq, name, sizeof(name)))
		return error_set(err, 0,
				 "size \"%s\" is not NAME=CPUS:MEMORY[:PIDS[:DISK]], "
				 "e.g. small=2:4G",
				 item);
	int index = -1;
	for (int i = 0; i < SANDBOX_SIZE_COUNT; i++)
		if (strcmp(name, size_names[i]) == 0)
			index = i;
	if (index < 0)
		return error_set(err, 0,
				 "size \"%s\" is unknown; the sizes are small, "
				 "medium and large",
				 name);

	char fields[4][32];
	int count = 0;
	const char *p = eq + 1;
	for (;;) {
		const char *end = strchr(p, ':');
		if (!end)
			end = p + strlen(p);
		if (count == 4 || !copy_part(p, end, fields[count], sizeof(fields[count])))
			return error_set(err, 0,
					 "size %s: \"%s\" is not "
					 "CPUS:MEMORY[:PIDS[:DISK]], e.g. %s=2:4G:4096:10G",
					 name, eq + 1, name);
		count++;
		if (!*end)
			break;
		p = end + 1;
	}
	if (count < 2)
		return error_set(err, 0,
				 "size %s: \"%s\" is not CPUS:MEMORY[:PIDS[:DISK]], "
				 "e.g. %s=2:4G:4096:10G",
				 name, eq + 1, name);

	struct sandbox_limits limits = sizes->preset[index];
	uint64_t millis;
	if (!parse_millis(fields[0], &millis) || millis < SANDBOX_CPU_MILLIS_MIN ||
	    millis > SANDBOX_CPU_MILLIS_MAX)
		return error_set(err, 0,
				 "size %s: CPUs \"%s\" must be a number from "
				 "0.01 to %u with at most three decimals",
				 name, fields[0], SANDBOX_CPU_MILLIS_MAX / 1000);
	limits.cpu_millis = (uint32_t)millis;

	struct error bytes_err;
	if (!sandbox_parse_bytes(fields[1], &limits.memory_bytes, &bytes_err))
		return error_set(err, 0, "size %s: memory %s", name, bytes_err.message);
	if (limits.memory_bytes < SANDBOX_MEMORY_MIN || limits.memory_bytes > SANDBOX_MEMORY_MAX)
		return error_set(err, 0, "size %s: memory \"%s\" must be from 16M to 1024T", name,
				 fields[1]);

	if (count >= 3) {
		if (!parse_count(fields[2], &limits.pids) || limits.pids < SANDBOX_PIDS_MIN ||
		    limits.pids > SANDBOX_PIDS_MAX)
			return error_set(err, 0,
					 "size %s: pids \"%s\" must be a whole number "
					 "from %u to %u",
					 name, fields[2], SANDBOX_PIDS_MIN, SANDBOX_PIDS_MAX);
	}
	if (count == 4) {
		if (!sandbox_parse_bytes(fields[3], &limits.disk_bytes, &bytes_err))
			return error_set(err, 0, "size %s: disk %s", name, bytes_err.message);
		if (limits.disk_bytes < SANDBOX_DISK_MIN || limits.disk_bytes > SANDBOX_DISK_MAX)
			return error_set(err, 0, "size %s: disk \"%s\" must be from 64M to 16T",
					 name, fields[3]);
	}
	sizes->preset[index] = limits;
	return true;
}

bool sandbox_sizes_parse(struct sandbox_sizes *sizes, const char *option, struct error *err)
{
	if (!option || !*option)
		return error_set(err, 0, "the size option is empty; expected e.g. small=2:4G");
	/* Work on a copy so that a bad item leaves every preset as it was. */
	struct sandbox_sizes changed = *sizes;
	const char *p = option;
	for (;;) {
		const char *end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		char item[96];
		if (!copy_part(p, end, item, sizeof(item)))
			return error_set(err, 0, "size option part \"%.40s...\" is too long", p);
		if (!parse_item(&changed, item, err))
			return false;
		if (!*end)
			break;
		p = end + 1;
	}
	*sizes = changed;
	return true;
}

bool sandbox_sizes_find(const struct sandbox_sizes *sizes, const char *name,
			struct sandbox_limits *limits, struct error *err)
{
	if (!name || !*name)
		name = size_names[SANDBOX_SIZE_MEDIUM];
	for (int i = 0; i < SANDBOX_SIZE_COUNT; i++) {
		if (strcmp(name, size_names[i]) == 0) {
			*limits = sizes->preset[i];
			return true;
		}
	}
	return error_set(err, 0,
			 "size \"%.64s\" is unknown; use small, medium (the "
			 "default) or large",
			 name);
}

static void describe_bytes(uint64_t bytes, char *out, size_t size)
{
	static const char *const units[] = { "bytes", "KiB", "MiB", "GiB", "TiB" };
	unsigned u = 0;
	while (u + 1 < sizeof(units) / sizeof(units[0]) && bytes >= 1024 && bytes % 1024 == 0) {
		bytes /= 1024;
		u++;
	}
	snprintf(out, size, "%" PRIu64 " %s", bytes, units[u]);
}

void sandbox_limits_describe(const struct sandbox_limits *limits, char *out, size_t size)
{
	char cpus[32] = "no CPU limit", memory[48] = "no memory limit", pids[48] = "no pids limit",
	     disk[48] = "no disk limit";
	if (limits->cpu_millis) {
		uint32_t m = limits->cpu_millis;
		if (m % 1000 == 0)
			snprintf(cpus, sizeof(cpus), "%u CPU%s", m / 1000, m == 1000 ? "" : "s");
		else {
			snprintf(cpus, sizeof(cpus), "%u.%03u", m / 1000, m % 1000);
			size_t len = strlen(cpus);
			while (cpus[len - 1] == '0') /* 1.500 -> 1.5 */
				cpus[--len] = '\0';
			snprintf(cpus + len, sizeof(cpus) - len, " CPUs");
		}
	}
	if (limits->memory_bytes) {
		char bytes[32];
		describe_bytes(limits->memory_bytes, bytes, sizeof(bytes));
		snprintf(memory, sizeof(memory), "%s memory", bytes);
	}
	if (limits->pids)
		snprintf(pids, sizeof(pids), "%" PRIu64 " pids", limits->pids);
	if (limits->disk_bytes) {
		char bytes[32];
		describe_bytes(limits->disk_bytes, bytes, sizeof(bytes));
		snprintf(disk, sizeof(disk), "%s disk", bytes);
	}
	snprintf(out, size, "%s, %s, %s, %s", cpus, memory, pids, disk);
}
