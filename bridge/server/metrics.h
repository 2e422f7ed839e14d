/* SPDX-License-Identifier: MIT */
/* Counters for /metrics, in the Prometheus text format. */
#ifndef LIZARD_BRIDGE_METRICS_H
#define LIZARD_BRIDGE_METRICS_H

#include <stdbool.h>
#include <stddef.h>

struct bridge_metrics;
struct bridge_registry;

struct bridge_metrics *bridge_metrics_create(void);
void bridge_metrics_destroy(struct bridge_metrics *metrics);

/* An mcp_call_observer: userdata is the metrics. */
void bridge_metrics_observe_call(const char *tool, bool is_error, double seconds, void *userdata);
void bridge_metrics_viewers(struct bridge_metrics *metrics, int delta);
void bridge_metrics_connections(struct bridge_metrics *metrics, const char *transport, int delta);

/* The exposition text (caller frees). */
char *bridge_metrics_render(struct bridge_metrics *metrics, struct bridge_registry *registry);

#endif
