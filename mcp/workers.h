/* SPDX-License-Identifier: MIT */
/* A small thread pool for tool calls, shaped so that no client and no
 * desktop can take it over.
 *
 * A job is quick (bounded, short work: a screenshot, session management,
 * a kill) or long (anything that waits on a program, a file or the screen).
 * Long jobs are held to three bounds: in all they leave `reserved` workers
 * free, so quick jobs always find one; one owner (a client) runs at most
 * `long_per_owner` of them; one group (a desktop) at most
 * `long_per_group`. Quick jobs of one owner run at most `quick_per_owner`
 * at once, so one client's flood of them delays another's by one short
 * job at most. A job over a bound waits in the queue, holding no worker,
 * and jobs behind it that are within theirs go first.
 *
 * Jobs that share a lane run one at a time in submission order (input to
 * one desktop stays ordered); a lane's job waiting on a bound holds its
 * lane-mates behind it. */
#ifndef LIZARD_MCP_WORKERS_H
#define LIZARD_MCP_WORKERS_H

#include <stdbool.h>

struct mcp_workers;
typedef void (*mcp_job_fn)(void *job);

struct mcp_workers_limits {
	int threads;
	int reserved; /* workers long jobs leave to quick ones */
	int long_per_owner;
	int long_per_group;
	int quick_per_owner;
};

/* What a job is, for the bounds; the strings are copied, each may be NULL
 * (no lane, no group, no owner: that bound does not apply). */
struct mcp_job_kind {
	const char *lane;
	const char *group;
	const char *owner;
	bool quick;
};

/* NULL when the limits make no sense (reserved >= threads, a bound < 1)
 * or no thread starts. */
struct mcp_workers *mcp_workers_create(const struct mcp_workers_limits *limits);
/* Returns false when out of memory or shutting down; the job was then not
 * taken. */
bool mcp_workers_submit(struct mcp_workers *workers, const struct mcp_job_kind *kind, mcp_job_fn fn,
			void *job);
/* Runs what is queued, then joins the threads. NULL is fine. */
void mcp_workers_destroy(struct mcp_workers *workers);

#endif
