/* SPDX-License-Identifier: MIT */
/* The host uids a root daemon gives its sandboxes (the gids are the same
 * numbers): a block of SANDBOX_ID_BLOCK ids per sandbox, its first the
 * sandbox's root and the rest its other users (inside, ids 0 to 65535 as
 * on any Debian system), or one id when the range holds no whole block.
 * Blocks are drawn at random from a range the operator names (--uid-range
 * FIRST:COUNT), skipping every block that holds an id taken elsewhere, so
 * that none of a sandbox's ids is anybody else on the host. An id is
 * taken when the user or group database knows it (NSS: getpwuid,
 * getgrgid), when it lies in a range of /etc/subuid or /etc/subgid (other
 * users' user namespaces map those), when a process runs with it, or while
 * a sandbox of this daemon holds it. A daemon run as an ordinary user gives
 * its sandboxes its own uid and takes none of these. */
#ifndef LIZARD_SANDBOX_UID_H
#define LIZARD_SANDBOX_UID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/error.h"

struct sandbox_uid_range {
	uint32_t first;
	uint32_t count; /* at least 1; first + count <= SANDBOX_UID_END */
};

/* Ids below this are the system's and its users' (and mapped by the
 * usual user namespaces). Ids from SANDBOX_UID_END on are not taken,
 * though uid_t goes to 2^32 - 2: bubblewrap 0.8 writes the uid map with
 * "%d", so a uid of 2^31 or more fails there ("setting up uid map:
 * Invalid argument"). */
#define SANDBOX_UID_MIN 65536u
#define SANDBOX_UID_END 2147483648u

/* 2000000 .. 1001999999, as before the range could be chosen. */
#define SANDBOX_UID_RANGE_DEFAULT ((struct sandbox_uid_range){ 2000000u, 1000000000u })

/* Parses an option value "FIRST:COUNT" (decimal): COUNT at least 1, the
 * range within SANDBOX_UID_MIN..SANDBOX_UID_END - 1 and without
 * daemon_uid. */
bool sandbox_uid_range_parse(const char *text, uid_t daemon_uid, struct sandbox_uid_range *out,
			     struct error *err);

/* Id ranges, end exclusive (up to 2^32). */
struct sandbox_id_span {
	uint64_t first, end;
};
struct sandbox_id_spans {
	struct sandbox_id_span *items;
	size_t count, capacity;
};

/* Adds the ranges of a subordinate id file's text (/etc/subuid: lines
 * "OWNER:FIRST:COUNT"; blank lines, comments and malformed lines are
 * skipped). False when out of memory. */
bool sandbox_subid_parse(const char *text, struct sandbox_id_spans *spans);

/* Whose lines to take: the owner field is name (may be NULL) or id. */
struct sandbox_subid_owner {
	const char *name;
	unsigned id;
};

/* The same, of owner's lines only (owner NULL: everyone's). */
bool sandbox_subid_parse_of(const char *text, const struct sandbox_subid_owner *owner,
			    struct sandbox_id_spans *spans);

/* Adds the ranges of the file at path (one that is not there holds none)
 * of owner (NULL: everyone). */
bool sandbox_subid_load(const char *path, const struct sandbox_subid_owner *owner,
			struct sandbox_id_spans *spans, struct error *err);
/* Whether id lies in one of spans; then *end is the first id past the one
 * that holds it. */
bool sandbox_id_spans_cover(const struct sandbox_id_spans *spans, uint32_t id, uint64_t *end);
void sandbox_id_spans_finish(struct sandbox_id_spans *spans);

/* The ids a sandbox's user namespace maps when its range allows. */
#define SANDBOX_ID_BLOCK 65536u

/* Takes width free ids in a row from range (NULL:
 * SANDBOX_UID_RANGE_DEFAULT) for a sandbox, the first a multiple of width,
 * until sandbox_uid_release of that first id; a width of 0 or more than the
 * range holds is 1. Thread-safe. Fails, naming the range and the option,
 * when no such block is free (then err->code is EUSERS). */
bool sandbox_uid_acquire(const struct sandbox_uid_range *range, uint32_t width, uid_t *uid,
			 struct error *err);
/* SANDBOX_ID_BLOCK when range (NULL: the default) holds a whole block
 * starting at a multiple of it, else 1. */
uint32_t sandbox_uid_width(const struct sandbox_uid_range *range);
void sandbox_uid_release(uid_t first);

#endif
