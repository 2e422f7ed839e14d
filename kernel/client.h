/* SPDX-License-Identifier: MIT */
/* A client of one Jupyter kernel: the five ZeroMQ sockets of its
 * connection file (shell, iopub, control and stdin as DEALER/SUB, the
 * heartbeat as REQ), messages signed and verified with its key, and the
 * kernel's liveness watched through a socket monitor, so that a kernel
 * that exits is noticed the moment its sockets close rather than at a
 * timeout. Ready means what jupyter_client means by it: a kernel_info reply
 * on shell and a message on iopub, which is when the iopub subscription is
 * known to be live and no output can be lost. One thread uses a client at a
 * time; it knows nothing of sandboxes or MCP. */
#ifndef LIZARD_KERNEL_CLIENT_H
#define LIZARD_KERNEL_CLIENT_H

#include "kernel/message.h"
#include "util/error.h"

#include <stdbool.h>
#include <stdint.h>

struct cJSON;

/* ZeroMQ endpoints, e.g. "ipc:///proc/self/fd/12": the caller opened the
 * socket files itself and keeps them open while the client lives. */
struct kernel_endpoints {
	char shell[128], iopub[128], control[128], stdin_[128], heartbeat[128];
};

/* What was received and thrown away: nothing is dropped silently. */
struct kernel_client_counts {
	unsigned long long forged;    /* a signature that did not match */
	unsigned long long malformed; /* not a Jupyter message */
	/* iopub's connection dropped, with the message that was too big (over
	 * 16 MiB) and what was queued behind it. */
	unsigned long long iopub_drops;
};

enum kernel_channel { KERNEL_SHELL, KERNEL_IOPUB, KERNEL_CONTROL, KERNEL_STDIN };

struct kernel_client;

struct kernel_client *kernel_client_create(const struct kernel_endpoints *endpoints,
					   const struct kernel_key *key, struct error *err);
void kernel_client_destroy(struct kernel_client *k);

/* Waits until the kernel answers kernel_info on shell and has been heard on
 * iopub, asking again every half second, until deadline_ms (monotonic). */
bool kernel_client_wait_ready(struct kernel_client *k, int64_t deadline_ms, struct error *err);

/* Sends msg_type with content (taken over) on channel; id gets the message
 * id, which the replies name as their parent. */
bool kernel_client_send(struct kernel_client *k, enum kernel_channel channel, const char *msg_type,
			struct cJSON *content, char id[40], struct error *err);

enum kernel_receive_result {
	KERNEL_RECEIVED,
	KERNEL_RECEIVE_TIMEOUT,
	KERNEL_RECEIVE_CANCELLED, /* cancel_fd became readable */
	KERNEL_RECEIVE_GONE,      /* the kernel's sockets closed: it exited */
	KERNEL_RECEIVE_FAILED,
};

/* Waits for the next verified message on shell, iopub or control until
 * deadline_ms, or until cancel_fd (-1: none) becomes readable. Forged and
 * malformed messages are counted and skipped. */
enum kernel_receive_result kernel_client_receive(struct kernel_client *k, int64_t deadline_ms,
						 int cancel_fd, enum kernel_channel *channel,
						 struct kernel_message *m, struct error *err);

/* After iopub dropped its connection, waits until it is live again (as
 * kernel_client_wait_ready does), so that the next request's output is
 * not lost too; at once when nothing dropped. */
bool kernel_client_resync(struct kernel_client *k, int64_t deadline_ms, struct error *err);

/* One heartbeat round trip within timeout_ms. */
bool kernel_client_ping(struct kernel_client *k, int64_t timeout_ms);

struct kernel_client_counts kernel_client_counts(const struct kernel_client *k);

/* The kernel_info reply's language_info.name, once ready ("python"). */
const char *kernel_client_language(const struct kernel_client *k);

#endif
