/* SPDX-License-Identifier: MIT */
/* Host uids for a root daemon's sandboxes (uid.h). Each pick first
 * gathers what is taken and cheap to hold (the ranges of /etc/subuid and
 * /etc/subgid, the ids of running processes), then tries random ids of the
 * range, asking NSS last, about only those that passed the rest; when the
 * tries all miss, the range is mostly taken, and it is walked id by id
 * from a random place, a subordinate range skipped as a whole, so a full
 * range is said to be full instead of guessed at. The ids this daemon's
 * sandboxes hold are a set under a lock, checked and added in one step. */
#include "sandbox/uid.h"

#include "util/io.h"

#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define RANDOM_TRIES 64
#define SUBID_FILE_MAX (16 * 1024 * 1024)
#define NSS_BUFFER_MAX (1024 * 1024)

/* A decimal number of len characters, digits only, up to 2^32. */
static bool parse_id_number(const char *text, size_t len, uint64_t *out)
{
	if (len == 0 || len > 10)
		return false;
	uint64_t value = 0;
	for (size_t i = 0; i < len; i++) {
		if (text[i] < '0' || text[i] > '9')
			return false;
		value = value * 10 + (uint64_t)(text[i] - '0');
	}
	if (value > (uint64_t)UINT32_MAX + 1)
		return false;
	*out = value;
	return true;
}

/* "FIRST:COUNT" of len characters. */
static bool parse_first_count(const char *text, size_t len, uint64_t *first, uint64_t *count)
{
	const char *colon = memchr(text, ':', len);
	return colon && parse_id_number(text, (size_t)(colon - text), first) &&
	       parse_id_number(colon + 1, len - (size_t)(colon - text) - 1, count);
}

bool sandbox_uid_range_parse(const char *text, uid_t daemon_uid, struct sandbox_uid_range *out,
			     struct error *err)
{
	uint64_t first, count;
	if (!parse_first_count(text, strlen(text), &first, &count))
		return error_set(err, 0,
				 "'%.40s' is not FIRST:COUNT, two decimal numbers "
				 "such as 3000000000:1000000",
				 text);
	if (count == 0)
		return error_set(err, 0, "'%.40s' holds no uid: COUNT must be at least 1", text);
	if (first < SANDBOX_UID_MIN)
		return error_set(err, 0,
				 "'%.40s' starts below %u: uids 0..%u are the system's "
				 "and its users'",
				 text, SANDBOX_UID_MIN, SANDBOX_UID_MIN - 1);
	if (first + count > SANDBOX_UID_END)
		return error_set(err, 0,
				 "'%.40s' goes past uid %u, the last one bubblewrap "
				 "maps",
				 text, SANDBOX_UID_END - 1);
	if (daemon_uid >= first && daemon_uid - first < count)
		return error_set(err, 0, "'%.40s' holds this daemon's own uid %u", text,
				 (unsigned)daemon_uid);
	*out = (struct sandbox_uid_range){ (uint32_t)first, (uint32_t)count };
	return true;
}

static bool spans_add(struct sandbox_id_spans *spans, uint64_t first, uint64_t end)
{
	if (spans->count == spans->capacity) {
		size_t capacity = spans->capacity ? spans->capacity * 2 : 16;
		struct sandbox_id_span *grown = realloc(spans->items, capacity * sizeof(*grown));
		if (!grown)
			return false;
		spans->items = grown;
		spans->capacity = capacity;
	}
	spans->items[spans->count++] = (struct sandbox_id_span){ first, end };
	return true;
}

static bool owned_by(const char *line, size_t owner_len, const struct sandbox_subid_owner *owner)
{
	char id[16];
	snprintf(id, sizeof(id), "%u", owner->id);
	return (owner->name && strlen(owner->name) == owner_len &&
		memcmp(line, owner->name, owner_len) == 0) ||
	       (strlen(id) == owner_len && memcmp(line, id, owner_len) == 0);
}

bool sandbox_subid_parse(const char *text, struct sandbox_id_spans *spans)
{
	return sandbox_subid_parse_of(text, NULL, spans);
}

bool sandbox_subid_parse_of(const char *text, const struct sandbox_subid_owner *owner,
			    struct sandbox_id_spans *spans)
{
	for (const char *line = text; *line;) {
		const char *newline = strchr(line, '\n');
		size_t len = newline ? (size_t)(newline - line) : strlen(line);
		while (len > 0 &&
		       (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
			len--;
		const char *owner_end = memchr(line, ':', len);
		uint64_t first, count;
		if (line[0] != '#' && owner_end && owner_end > line &&
		    (!owner || owned_by(line, (size_t)(owner_end - line), owner)) &&
		    parse_first_count(owner_end + 1, len - (size_t)(owner_end - line) - 1, &first,
				      &count) &&
		    count > 0 && !spans_add(spans, first, first + count))
			return false;
		line = newline ? newline + 1 : line + len;
		if (!newline)
			break;
	}
	return true;
}

bool sandbox_id_spans_cover(const struct sandbox_id_spans *spans, uint32_t id, uint64_t *end)
{
	bool covered = false;
	for (size_t i = 0; i < spans->count; i++) {
		const struct sandbox_id_span *s = &spans->items[i];
		if (id >= s->first && id < s->end) {
			if (!covered || s->end > *end)
				*end = s->end;
			covered = true;
		}
	}
	return covered;
}

void sandbox_id_spans_finish(struct sandbox_id_spans *spans)
{
	free(spans->items);
	*spans = (struct sandbox_id_spans){ 0 };
}

bool sandbox_subid_load(const char *path, const struct sandbox_subid_owner *owner,
			struct sandbox_id_spans *spans, struct error *err)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ||
		       error_set(err, errno, "cannot read %s to see which uids it gives out", path);
	char *text = NULL;
	size_t len = 0, capacity = 0;
	bool ok = true;
	while (ok) {
		if (len == capacity) {
			capacity = capacity ? capacity * 2 : 4096;
			char *grown = capacity <= SUBID_FILE_MAX ? realloc(text, capacity + 1)
								 : NULL;
			if (!(ok = grown != NULL))
				break;
			text = grown;
		}
		size_t got = fread(text + len, 1, capacity - len, f);
		len += got;
		if (got == 0)
			break;
	}
	ok = ok && !ferror(f);
	fclose(f);
	if (ok) {
		text[len] = '\0';
		ok = sandbox_subid_parse_of(text, owner, spans);
	}
	free(text);
	return ok || error_set(err, 0,
			       "cannot read %s to see which uids it gives out (a "
			       "read error, no memory, or over 16 MiB)",
			       path);
}

/* A set of ids, sorted once it is filled. */
struct id_set {
	uint32_t *ids;
	size_t count, capacity;
};

static bool id_set_add(struct id_set *set, uint32_t id)
{
	if (set->count == set->capacity) {
		size_t capacity = set->capacity ? set->capacity * 2 : 256;
		uint32_t *grown = realloc(set->ids, capacity * sizeof(*grown));
		if (!grown)
			return false;
		set->ids = grown;
		set->capacity = capacity;
	}
	set->ids[set->count++] = id;
	return true;
}

static int compare_ids(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* The text after a status line's name ("\nState:"), blanks skipped. */
static const char *status_field(const char *status, const char *name)
{
	const char *at = strstr(status, name);
	if (!at)
		return NULL;
	at += strlen(name);
	while (*at == ' ' || *at == '\t')
		at++;
	return at;
}

/* The numbers after a "Uid:", "Gid:" or "Groups:" label of /proc/PID/status. */
static bool add_status_ids(struct id_set *set, const char *status, const char *label)
{
	for (const char *at = status_field(status, label); at;) {
		if (*at < '0' || *at > '9')
			return true; /* the line's end, or where the read stopped */
		char *end;
		unsigned long id = strtoul(at, &end, 10);
		if (id <= UINT32_MAX && !id_set_add(set, (uint32_t)id))
			return false;
		for (at = end; *at == ' ' || *at == '\t'; at++)
			;
	}
	return true;
}

/* Whether a process has ended and only waits to be reaped (a zombie): it
 * can do nothing with its ids any more. An ended sandbox's processes are
 * such for a moment after it is destroyed, until the reaper gets them. A
 * process whose first thread ended while others run shows as a zombie
 * too: it has more than one thread, and counts. */
static bool ended(const char *status)
{
	const char *state = status_field(status, "\nState:");
	const char *threads = status_field(status, "\nThreads:");
	return state && (*state == 'Z' || *state == 'X') && threads &&
	       strncmp(threads, "1\n", 2) == 0;
}

/* Every uid and gid a process runs with (real, effective, saved, file
 * system; the supplementary groups as far as the read goes), but for the
 * processes that ended. */
static bool load_process_ids(struct id_set *set, struct error *err)
{
	DIR *proc = opendir("/proc");
	if (!proc)
		return error_set(err, errno, "cannot list /proc to see which uids processes use");
	bool ok = true;
	struct dirent *entry;
	while (ok && (entry = readdir(proc))) {
		if (entry->d_name[0] < '1' || entry->d_name[0] > '9')
			continue;
		char path[300], status[4096];
		snprintf(path, sizeof(path), "/proc/%.200s/status", entry->d_name);
		if (io_read_small_file(path, status, sizeof(status)) < 0 || ended(status))
			continue; /* gone meanwhile, or only waiting to be reaped */
		ok = add_status_ids(set, status, "\nUid:") &&
		     add_status_ids(set, status, "\nGid:") &&
		     add_status_ids(set, status, "\nGroups:");
	}
	closedir(proc);
	if (!ok)
		return error_set(err, 0, "out of memory listing the uids processes use");
	if (set->count) /* qsort takes no NULL, even for nothing */
		qsort(set->ids, set->count, sizeof(uint32_t), compare_ids);
	return true;
}

/* Whether the user or group database knows id; a lookup that fails
 * (other than for a small buffer) counts as known: it may be. */
static bool nss_knows(uint32_t id)
{
	bool known = true;
	size_t size = 16384;
	for (char *buffer; size <= NSS_BUFFER_MAX && (buffer = malloc(size)); size *= 4) {
		struct passwd user, *user_found = NULL;
		struct group group, *group_found = NULL;
		int rc = getpwuid_r((uid_t)id, &user, buffer, size, &user_found);
		if (rc == 0 && !user_found)
			rc = getgrgid_r((gid_t)id, &group, buffer, size, &group_found);
		free(buffer);
		if (rc != ERANGE) {
			known = rc != 0 || user_found || group_found;
			break;
		}
	}
	return known;
}

/* The next id the user (groups: group) database lists, the buffer grown
 * up to NSS_BUFFER_MAX for a long entry; false at its end or on an error. */
static bool next_nss_id(bool groups, char *buffer, size_t *size, uint32_t *id)
{
	for (;;) {
		struct passwd user, *user_found = NULL;
		struct group group, *group_found = NULL;
		int rc = groups ? getgrent_r(&group, buffer, *size, &group_found)
				: getpwent_r(&user, buffer, *size, &user_found);
		if (rc == ERANGE && *size < NSS_BUFFER_MAX) {
			*size *= 4;
			continue;
		}
		if (rc != 0 || (groups ? !group_found : !user_found))
			return false; /* ENOENT: the end */
		*id = groups ? (uint32_t)group_found->gr_gid : (uint32_t)user_found->pw_uid;
		return true;
	}
}

/* The ids of [from, to) the user and group databases list, read whole
 * (getpwent, getgrent) under a lock: for a block of 65536 ids, one walk of
 * the databases instead of 65536 questions. */
static bool load_nss_ids(struct id_set *set, uint64_t from, uint64_t to, struct error *err)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	bool ok = true;
	size_t size = 16384;
	char *buffer = malloc(NSS_BUFFER_MAX);
	if (!buffer)
		return error_set(err, 0, "out of memory listing the users and groups");
	pthread_mutex_lock(&lock);
	for (int groups = 0; groups < 2; groups++) {
		uint32_t id;
		if (groups)
			setgrent();
		else
			setpwent();
		while (next_nss_id(groups, buffer, &size, &id))
			if (id >= from && id < to)
				ok = ok && id_set_add(set, id);
		if (groups)
			endgrent();
		else
			endpwent();
	}
	pthread_mutex_unlock(&lock);
	free(buffer);
	if (!ok)
		return error_set(err, 0, "out of memory listing the users and groups");
	if (set->count) /* qsort takes no NULL, even for nothing */
		qsort(set->ids, set->count, sizeof(uint32_t), compare_ids);
	return true;
}

/* What is taken besides this daemon's own sandboxes. */
struct taken {
	struct sandbox_id_spans subordinate; /* of /etc/subuid and /etc/subgid */
	struct id_set processes;
	struct id_set listed; /* by NSS, read whole for blocks (width > 1) only */
	uint32_t width;
};

static void taken_finish(struct taken *t)
{
	sandbox_id_spans_finish(&t->subordinate);
	free(t->processes.ids);
	free(t->listed.ids);
}

static bool taken_load(struct taken *t, const struct sandbox_uid_range *range, uint32_t width,
		       struct error *err)
{
	*t = (struct taken){ .width = width };
	if (sandbox_subid_load("/etc/subuid", NULL, &t->subordinate, err) &&
	    sandbox_subid_load("/etc/subgid", NULL, &t->subordinate, err) &&
	    load_process_ids(&t->processes, err) &&
	    (width == 1 ||
	     load_nss_ids(&t->listed, range->first, (uint64_t)range->first + range->count, err)))
		return true;
	taken_finish(t);
	return false;
}

/* The first ids of the blocks this daemon's sandboxes hold, and their
 * widths; unsorted, as many as there are sandboxes. */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	struct sandbox_id_span *items;
	size_t count, capacity;
} live;

static bool live_overlaps(uint64_t first, uint64_t end)
{
	for (size_t i = 0; i < live.count; i++)
		if (live.items[i].first < end && live.items[i].end > first)
			return true;
	return false;
}

/* Whether a member of a sorted set lies in [first, end). */
static bool id_set_meets(const struct id_set *set, uint64_t first, uint64_t end)
{
	size_t low = 0, high = set->count;
	while (low < high) {
		size_t middle = low + (high - low) / 2;
		if (set->ids[middle] < first)
			low = middle + 1;
		else
			high = middle;
	}
	return low < set->count && set->ids[low] < end;
}

/* Whether the block of t->width ids at first is taken; *next is the first
 * id after it that may start a free one. */
static bool is_taken(const struct taken *t, uint32_t first, uint64_t *next)
{
	uint64_t end = (uint64_t)first + t->width;
	bool subordinate = false;
	*next = end;
	for (size_t i = 0; i < t->subordinate.count; i++) {
		const struct sandbox_id_span *s = &t->subordinate.items[i];
		if (s->first < end && s->end > first) {
			/* Past the range, to the next block's start. */
			uint64_t past = (s->end + t->width - 1) / t->width * t->width;
			*next = past > *next ? past : *next;
			subordinate = true;
		}
	}
	if (subordinate)
		return true;
	return live_overlaps(first, end) || id_set_meets(&t->processes, first, end) ||
	       (t->width == 1 ? nss_knows(first) : id_set_meets(&t->listed, first, end));
}

static uint32_t random_number(void)
{
	uint32_t r;
	if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
		r = (uint32_t)getpid() * 7919u + (uint32_t)time(NULL) + (uint32_t)clock();
	return r;
}

/* The first free block in [from, to), or 0 (never one's start: ids start
 * at SANDBOX_UID_MIN). from is a block's start. */
static uint32_t first_free(const struct taken *t, uint64_t from, uint64_t to)
{
	uint64_t next;
	for (uint64_t id = from; id + t->width <= to; id = next)
		if (!is_taken(t, (uint32_t)id, &next))
			return (uint32_t)id;
	return 0;
}

/* Blocks start at multiples of their width, so that a sandbox's ids read
 * as one number and an offset. */
static uint32_t pick(const struct sandbox_uid_range *range, const struct taken *t)
{
	uint64_t w = t->width, first = ((uint64_t)range->first + w - 1) / w * w;
	uint64_t end = (uint64_t)range->first + range->count;
	if (first + w > end)
		return 0;
	uint64_t blocks = (end - first) / w, next;
	for (int i = 0; i < RANDOM_TRIES; i++) {
		uint32_t id = (uint32_t)(first + random_number() % blocks * w);
		if (!is_taken(t, id, &next))
			return id;
	}
	uint64_t start = first + random_number() % blocks * w;
	uint32_t id = first_free(t, start, end);
	return id ? id : first_free(t, first, start + w - 1);
}

/* Why none was free; the code, EUSERS, tells a caller it was that
 * (pool.h gives back what a sandbox started ahead holds). */
static bool no_free_ids(struct error *err, struct sandbox_uid_range r, uint32_t width)
{
	if (width > 1)
		error_set(err, 0,
			  "no free block of %u host uids for the sandbox in --uid-range "
			  "%u:%u (uids %u to %u): each block holds a user or group, ids "
			  "of /etc/subuid or /etc/subgid, a process's, or another "
			  "session's; give --uid-range a range with free uids",
			  width, r.first, r.count, r.first, (uint32_t)(r.first + (r.count - 1)));
	else
		error_set(err, 0,
			  "no free host uid for the sandbox in --uid-range %u:%u (uids %u "
			  "to %u): each is a user or group, in /etc/subuid or "
			  "/etc/subgid, used by a process, or another session's; give "
			  "--uid-range a range with free uids",
			  r.first, r.count, r.first, (uint32_t)(r.first + (r.count - 1)));
	if (err)
		err->code = EUSERS; /* set apart: no system call failed */
	return false;
}

bool sandbox_uid_acquire(const struct sandbox_uid_range *range, uint32_t width, uid_t *uid,
			 struct error *err)
{
	struct sandbox_uid_range r = range ? *range : SANDBOX_UID_RANGE_DEFAULT;
	if (width == 0 || width > r.count)
		width = 1;
	struct taken t;
	if (!taken_load(&t, &r, width, err))
		return false;
	pthread_mutex_lock(&live_lock);
	uint32_t id = pick(&r, &t);
	bool added = false;
	if (id && live.count == live.capacity) {
		size_t capacity = live.capacity ? live.capacity * 2 : 16;
		struct sandbox_id_span *grown = realloc(live.items, capacity * sizeof(*grown));
		if (grown) {
			live.items = grown;
			live.capacity = capacity;
		}
	}
	if (id && live.count < live.capacity) {
		live.items[live.count++] = (struct sandbox_id_span){ id, (uint64_t)id + width };
		added = true;
	}
	pthread_mutex_unlock(&live_lock);
	taken_finish(&t);
	if (!id)
		return no_free_ids(err, r, width);
	if (!added)
		return error_set(err, 0, "out of memory");
	*uid = (uid_t)id;
	return true;
}

uint32_t sandbox_uid_width(const struct sandbox_uid_range *range)
{
	struct sandbox_uid_range r = range ? *range : SANDBOX_UID_RANGE_DEFAULT;
	uint64_t w = SANDBOX_ID_BLOCK, first = ((uint64_t)r.first + w - 1) / w * w;
	return first + w <= (uint64_t)r.first + r.count ? SANDBOX_ID_BLOCK : 1;
}

void sandbox_uid_release(uid_t uid)
{
	pthread_mutex_lock(&live_lock);
	for (size_t i = 0; i < live.count; i++) {
		if (live.items[i].first == (uint32_t)uid) {
			live.items[i] = live.items[--live.count];
			break;
		}
	}
	pthread_mutex_unlock(&live_lock);
}
