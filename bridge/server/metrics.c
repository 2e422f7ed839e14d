/* SPDX-License-Identifier: MIT */
#include "bridge/server/metrics.h"

#include "bridge/session/registry.h"
#include "bridge/session/session.h"
#include "bridge/session/resources.h"

#include <pthread.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TOOLS 64

/* Upper bounds of the call latency histogram, in seconds. */
static const double buckets[] = { 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
				  0.25,  0.5,    1,     2.5,  5,     10 };
#define BUCKETS (sizeof(buckets) / sizeof(buckets[0]))

struct tool_counts {
	char name[48];
	unsigned long long ok, error;
};

struct bridge_metrics {
	pthread_mutex_t lock;
	struct tool_counts tools[MAX_TOOLS];
	int tool_count;
	unsigned long long bucket_counts[BUCKETS];
	unsigned long long call_count;
	double call_seconds;
	long viewers;
	long websocket_connections, http_requests;
};

struct bridge_metrics *bridge_metrics_create(void)
{
	struct bridge_metrics *m = calloc(1, sizeof(*m));
	if (m)
		pthread_mutex_init(&m->lock, NULL);
	return m;
}

void bridge_metrics_destroy(struct bridge_metrics *m)
{
	if (!m)
		return;
	pthread_mutex_destroy(&m->lock);
	free(m);
}

void bridge_metrics_observe_call(const char *tool, bool is_error, double seconds, void *userdata)
{
	struct bridge_metrics *m = userdata;
	pthread_mutex_lock(&m->lock);
	struct tool_counts *t = NULL;
	for (int i = 0; i < m->tool_count && !t; i++)
		if (strcmp(m->tools[i].name, tool) == 0)
			t = &m->tools[i];
	if (!t && m->tool_count < MAX_TOOLS) {
		t = &m->tools[m->tool_count++];
		snprintf(t->name, sizeof(t->name), "%s", tool);
	}
	if (t) {
		if (is_error)
			t->error++;
		else
			t->ok++;
	}
	for (size_t i = 0; i < BUCKETS; i++)
		if (seconds <= buckets[i])
			m->bucket_counts[i]++;
	m->call_count++;
	m->call_seconds += seconds;
	pthread_mutex_unlock(&m->lock);
}

void bridge_metrics_viewers(struct bridge_metrics *m, int delta)
{
	pthread_mutex_lock(&m->lock);
	m->viewers += delta;
	pthread_mutex_unlock(&m->lock);
}

void bridge_metrics_connections(struct bridge_metrics *m, const char *transport, int delta)
{
	pthread_mutex_lock(&m->lock);
	if (strcmp(transport, "websocket") == 0)
		m->websocket_connections += delta;
	else
		m->http_requests += delta;
	pthread_mutex_unlock(&m->lock);
}

struct text {
	char *data;
	size_t len, capacity;
	bool failed;
};

__attribute__((format(printf, 2, 3))) static void put(struct text *t, const char *fmt, ...)
{
	if (t->failed)
		return;
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(t->data + t->len, t->capacity - t->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->failed = true;
			return;
		}
		if ((size_t)n < t->capacity - t->len) {
			t->len += (size_t)n;
			return;
		}
		size_t capacity = t->capacity * 2 + (size_t)n;
		char *grown = realloc(t->data, capacity);
		if (!grown) {
			t->failed = true;
			return;
		}
		t->data = grown;
		t->capacity = capacity;
	}
}

struct session_usages {
	size_t count;
	char id[BRIDGE_MAX_SESSIONS][64];
	struct bridge_session_usage usage[BRIDGE_MAX_SESSIONS];
};

static void collect_usage(struct bridge_session *session, void *context)
{
	struct session_usages *u = context;
	if (u->count < BRIDGE_MAX_SESSIONS && bridge_session_usage(session, &u->usage[u->count])) {
		snprintf(u->id[u->count], sizeof(u->id[0]), "%s", bridge_session_id(session));
		u->count++;
	}
}

/* Per-session gauges from the sessions' cgroups, one metric at a time as
 * the text format wants. Read under the registry's lock: this runs on the
 * server's thread, which must never be the one that tears a session down. */
static void put_session_usage(struct text *t, struct bridge_registry *registry)
{
	struct session_usages *u = calloc(1, sizeof(*u));
	if (!u) {
		t->failed = true;
		return;
	}
	bridge_registry_visit(registry, collect_usage, u);
	static const struct {
		const char *name, *help;
		size_t offset;
		double scale;
	} gauges[] = {
		{ "lizard_session_cpu_seconds_total", "CPU time of the session's processes.",
		  offsetof(struct bridge_session_usage, cpu_usec), 1e-6 },
		{ "lizard_session_memory_bytes", "Memory the session uses now.",
		  offsetof(struct bridge_session_usage, memory_bytes), 1 },
		{ "lizard_session_memory_peak_bytes", "Most memory the session used.",
		  offsetof(struct bridge_session_usage, memory_peak_bytes), 1 },
		{ "lizard_session_processes", "Processes in the session now.",
		  offsetof(struct bridge_session_usage, processes), 1 },
		{ "lizard_session_oom_kills_total",
		  "Processes killed for going over the memory limit.",
		  offsetof(struct bridge_session_usage, oom_kills), 1 },
	};
	for (size_t g = 0; g < sizeof(gauges) / sizeof(gauges[0]); g++) {
		put(t, "# HELP %s %s\n# TYPE %s %s\n", gauges[g].name, gauges[g].help,
		    gauges[g].name, strstr(gauges[g].name, "_total") ? "counter" : "gauge");
		for (size_t i = 0; i < u->count; i++) {
			uint64_t value;
			memcpy(&value, (const char *)&u->usage[i] + gauges[g].offset,
			       sizeof(value));
			if (value != BRIDGE_USAGE_UNKNOWN)
				put(t, "%s{session=\"%s\"} %.15g\n", gauges[g].name, u->id[i],
				    (double)value * gauges[g].scale);
		}
	}
	free(u);
}

char *bridge_metrics_render(struct bridge_metrics *m, struct bridge_registry *registry)
{
	struct text t = { .data = malloc(4096), .capacity = 4096 };
	if (!t.data)
		return NULL;
	t.data[0] = '\0';
	int states[5];
	bridge_registry_count_states(registry, states);
	put(&t,
	    "# HELP lizard_sessions Desktop sessions by state.\n# TYPE lizard_sessions gauge\n");
	for (int i = 0; i < 5; i++)
		put(&t, "lizard_sessions{state=\"%s\"} %d\n", bridge_session_state_name(i),
		    states[i]);
	put_session_usage(&t, registry);

	pthread_mutex_lock(&m->lock);
	put(&t, "# HELP lizard_tool_calls_total Tool calls by tool and outcome.\n"
		"# TYPE lizard_tool_calls_total counter\n");
	for (int i = 0; i < m->tool_count; i++) {
		put(&t, "lizard_tool_calls_total{tool=\"%s\",outcome=\"ok\"} %llu\n",
		    m->tools[i].name, m->tools[i].ok);
		put(&t, "lizard_tool_calls_total{tool=\"%s\",outcome=\"error\"} %llu\n",
		    m->tools[i].name, m->tools[i].error);
	}
	put(&t, "# HELP lizard_tool_call_seconds Tool call latency.\n"
		"# TYPE lizard_tool_call_seconds histogram\n");
	for (size_t i = 0; i < BUCKETS; i++)
		put(&t, "lizard_tool_call_seconds_bucket{le=\"%g\"} %llu\n", buckets[i],
		    m->bucket_counts[i]);
	put(&t, "lizard_tool_call_seconds_bucket{le=\"+Inf\"} %llu\n", m->call_count);
	put(&t, "lizard_tool_call_seconds_sum %.6f\n", m->call_seconds);
	put(&t, "lizard_tool_call_seconds_count %llu\n", m->call_count);
	put(&t,
	    "# HELP lizard_viewers Viewers connected.\n# TYPE lizard_viewers gauge\n"
	    "lizard_viewers %ld\n",
	    m->viewers);
	put(&t,
	    "# HELP lizard_mcp_websockets Open MCP WebSocket connections.\n"
	    "# TYPE lizard_mcp_websockets gauge\nlizard_mcp_websockets %ld\n",
	    m->websocket_connections);
	pthread_mutex_unlock(&m->lock);
	if (t.failed) {
		free(t.data);
		return NULL;
	}
	return t.data;
}
