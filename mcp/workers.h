/* A small thread pool for tool calls. Jobs that share a lane run one at a
 * time in submission order (input to one desktop stays ordered); jobs in
 * different lanes, or with no lane, run side by side. */
#ifndef LIZARD_MCP_WORKERS_H
#define LIZARD_MCP_WORKERS_H

#include <stdbool.h>

struct mcp_workers;
typedef void (*mcp_job_fn)(void *job);

struct mcp_workers *mcp_workers_create(int threads);
/* lane may be NULL. The string is copied. Returns false when out of memory
 * or shutting down; the job was then not taken. */
bool mcp_workers_submit(struct mcp_workers *workers, const char *lane, mcp_job_fn fn, void *job);
/* Runs what is queued, then joins the threads. NULL is fine. */
void mcp_workers_destroy(struct mcp_workers *workers);

#endif
