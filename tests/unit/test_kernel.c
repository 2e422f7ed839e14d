/* SPDX-License-Identifier: MIT */
/* The Jupyter client against real ipykernel processes (Debian's
 * python3-ipykernel) on ipc sockets, reached through descriptors as the
 * bridge reaches them in a sandbox, and against a fake kernel that signs
 * one message with the wrong key. */
#include "kernel/client.h"
#include "kernel/execute.h"
#include "util/clock.h"

#include "test.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef FAKE_KERNEL
#define FAKE_KERNEL "tests/fake-kernel/fake_kernel.py"
#endif

static const char *const socket_names[5] = { "shell", "iopub", "control", "stdin", "hb" };

struct test_kernel {
	pid_t pid;
	char dir[64];
	int fds[5];
	struct kernel_key key;
	struct kernel_client *client;
};

static const struct kernel_limits roomy = {
	.log_bytes = 1 << 20, .log_chunks = 10000, .result_bytes = 4 << 20, .total_bytes = 8 << 20
};

static bool write_connection_file(struct test_kernel *t, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return false;
	fprintf(f,
		"{\"transport\":\"ipc\",\"ip\":\"%s/k\",\"shell_port\":1,\"iopub_port\":2,"
		"\"stdin_port\":4,\"control_port\":3,\"hb_port\":5,\"key\":\"%s\","
		"\"signature_scheme\":\"hmac-sha256\",\"kernel_name\":\"\"}\n",
		t->dir, t->key.text);
	return fclose(f) == 0;
}

/* Starts program (NULL: ipykernel) on a fresh connection file, waits for
 * its five sockets and connects through /proc/self/fd. */
static bool start_kernel(struct test_kernel *t, const char *program)
{
	memset(t, 0, sizeof(*t));
	for (int i = 0; i < 5; i++)
		t->fds[i] = -1;
	snprintf(t->dir, sizeof(t->dir), "/tmp/lizard-kernel-test-XXXXXX");
	struct error err;
	if (!mkdtemp(t->dir) || !kernel_key_generate(&t->key, &err))
		return false;
	char conn[128];
	snprintf(conn, sizeof(conn), "%s/connection.json", t->dir);
	if (!write_connection_file(t, conn))
		return false;
	t->pid = fork();
	if (t->pid == 0) {
		setpgid(0, 0);
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		dup2(null, 2);
		if (program)
			execl("/usr/bin/python3", "python3", program, conn, (char *)NULL);
		else
			execl("/usr/bin/python3", "python3", "-m", "ipykernel_launcher", "-f", conn,
			      (char *)NULL);
		_exit(127);
	}
	int64_t deadline = clock_monotonic_ms() + 30000;
	struct kernel_endpoints ep;
	char *targets[5] = { ep.shell, ep.iopub, ep.control, ep.stdin_, ep.heartbeat };
	const int ports[5] = { 1, 2, 3, 4, 5 };
	for (int i = 0; i < 5; i++) {
		char path[128];
		snprintf(path, sizeof(path), "%s/k-%d", t->dir, ports[i]);
		while ((t->fds[i] = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC)) < 0) {
			if (clock_monotonic_ms() > deadline) {
				fprintf(stderr, "no %s socket at %s\n", socket_names[i], path);
				return false;
			}
			usleep(20000);
		}
		snprintf(targets[i], 128, "ipc:///proc/self/fd/%d", t->fds[i]);
	}
	t->client = kernel_client_create(&ep, &t->key, &err);
	if (!t->client) {
		fprintf(stderr, "%s\n", err.message);
		return false;
	}
	if (!kernel_client_wait_ready(t->client, clock_monotonic_ms() + 30000, &err)) {
		fprintf(stderr, "%s\n", err.message);
		return false;
	}
	return true;
}

static void stop_kernel(struct test_kernel *t)
{
	kernel_client_destroy(t->client);
	if (t->pid > 0) {
		kill(-t->pid, SIGKILL);
		waitpid(t->pid, NULL, 0);
	}
	for (int i = 0; i < 5; i++)
		if (t->fds[i] >= 0)
			close(t->fds[i]);
	char command[160];
	snprintf(command, sizeof(command), "rm -rf '%s'", t->dir);
	if (system(command) != 0)
		fprintf(stderr, "could not remove %s\n", t->dir);
}

static bool run_within(struct test_kernel *t, const char *code, int64_t timeout_ms,
		       const struct kernel_limits *limits, struct kernel_execution *e)
{
	struct kernel_execute_options o = {
		.code = code,
		.timeout_ms = timeout_ms,
		.grace_ms = 1500,
		.limits = limits,
		.cancel_fd = -1,
	};
	struct error err;
	if (!kernel_execute(t->client, &o, e, &err)) {
		fprintf(stderr, "%s\n", err.message);
		return false;
	}
	return true;
}

static bool run(struct test_kernel *t, const char *code, int64_t timeout_ms,
		struct kernel_execution *e)
{
	return run_within(t, code, timeout_ms, &roomy, e);
}

static const char *main_text(const struct kernel_execution *e)
{
	for (size_t i = 0; i < e->result_count; i++) {
		const cJSON *text = cJSON_GetObjectItemCaseSensitive(e->results[i].data,
								     "text/plain");
		if (e->results[i].is_main && cJSON_IsString(text))
			return text->valuestring;
	}
	return NULL;
}

static struct test_kernel shared;

static void test_state_survives_between_executions(void)
{
	struct kernel_execution e;
	ASSERT(run(&shared, "x = 21", 10000, &e));
	ASSERT_EQ(e.outcome, KERNEL_OUTCOME_DONE);
	ASSERT_EQ(e.result_count, 0);
	kernel_execution_finish(&e);
	ASSERT(run(&shared, "x * 2", 10000, &e));
	ASSERT_STR_EQ(main_text(&e), "42");
	ASSERT(e.execution_count >= 2);
	ASSERT(!e.has_error);
	kernel_execution_finish(&e);
	ASSERT_STR_EQ(kernel_client_language(shared.client), "python");
}

static char streamed[256];

static void collect_stream(void *opaque, const char *name, const char *text, size_t length)
{
	(void)opaque;
	size_t used = strlen(streamed);
	snprintf(streamed + used, sizeof(streamed) - used, "[%s]%.*s", name, (int)length, text);
}

static void test_streams_arrive_as_they_are_printed(void)
{
	streamed[0] = '\0';
	struct kernel_execute_options o = {
		.code = "import sys\nprint('out one')\nsys.stdout.flush()\n"
			"print('err one', file=sys.stderr)\nsys.stderr.flush()\n7",
		.timeout_ms = 10000,
		.grace_ms = 1000,
		.limits = &roomy,
		.cancel_fd = -1,
		.on_stream = collect_stream,
	};
	struct kernel_execution e;
	struct error err;
	ASSERT(kernel_execute(shared.client, &o, &e, &err));
	ASSERT_STR_EQ(streamed, "[stdout]out one\n[stderr]err one\n");
	ASSERT_EQ(e.out.count, 1);
	ASSERT_STR_EQ(e.out.chunks[0], "out one\n");
	ASSERT_STR_EQ(e.err.chunks[0], "err one\n");
	ASSERT_STR_EQ(main_text(&e), "7");
	kernel_execution_finish(&e);
}

static void test_an_exception_is_name_value_and_plain_traceback(void)
{
	struct kernel_execution e;
	ASSERT(run(&shared, "def f():\n    return 1 / 0\nf()", 10000, &e));
	ASSERT_EQ(e.outcome, KERNEL_OUTCOME_DONE);
	ASSERT(e.has_error);
	ASSERT_STR_EQ(e.error_name, "ZeroDivisionError");
	ASSERT_STR_EQ(e.error_value, "division by zero");
	ASSERT_CONTAINS(e.traceback, "ZeroDivisionError");
	ASSERT_CONTAINS(e.traceback, "return 1 / 0");
	ASSERT(!strchr(e.traceback, '\x1b'));
	kernel_execution_finish(&e);
}

static void test_rich_outputs_keep_every_mime_type(void)
{
	struct kernel_execution e;
	ASSERT(run(&shared,
		   "from IPython.display import display, HTML\n"
		   "display(HTML('<b>bold</b>'))\n"
		   "{'a': 1}",
		   10000, &e));
	ASSERT_EQ(e.result_count, 2);
	ASSERT(!e.results[0].is_main);
	const cJSON *html = cJSON_GetObjectItemCaseSensitive(e.results[0].data, "text/html");
	ASSERT(cJSON_IsString(html));
	ASSERT_STR_EQ(html->valuestring, "<b>bold</b>");
	ASSERT(e.results[1].is_main);
	ASSERT_STR_EQ(main_text(&e), "{'a': 1}");
	kernel_execution_finish(&e);
}

static void test_the_time_limit_interrupts_and_state_survives(void)
{
	struct kernel_execution e;
	ASSERT(run(&shared, "kept = 'still here'", 10000, &e));
	kernel_execution_finish(&e);
	int64_t start = clock_monotonic_ms();
	ASSERT(run(&shared, "while True:\n    pass", 1000, &e));
	int64_t took = clock_monotonic_ms() - start;
	ASSERT_EQ(e.outcome, KERNEL_OUTCOME_INTERRUPTED);
	ASSERT_STR_EQ(e.error_name, "KeyboardInterrupt");
	ASSERT(took >= 1000 && took < 10000);
	kernel_execution_finish(&e);
	ASSERT(run(&shared, "kept", 10000, &e));
	ASSERT_STR_EQ(main_text(&e), "'still here'");
	kernel_execution_finish(&e);
}

static void test_logs_keep_the_end_within_their_bound(void)
{
	struct kernel_limits small = roomy;
	small.log_bytes = 1000;
	struct kernel_execution e;
	ASSERT(run_within(&shared,
			  "import sys\nfor i in range(2000):\n    print(f'line {i:05d}')\n"
			  "    if i % 100 == 0: sys.stdout.flush()\n",
			  20000, &small, &e));
	ASSERT(e.out.bytes <= 1000);
	ASSERT(e.out.dropped_bytes + e.out.bytes == 2000 * 11);
	ASSERT(e.out.count > 0);
	ASSERT_CONTAINS(e.out.chunks[e.out.count - 1], "line 01999\n");
	kernel_execution_finish(&e);
}

static void test_a_result_over_its_bound_is_left_out_and_counted(void)
{
	struct kernel_limits small = roomy;
	small.result_bytes = 10000;
	struct kernel_execution e;
	ASSERT(run_within(&shared,
			  "from IPython.display import display, HTML\n"
			  "display(HTML('x' * 50000))\n'small'",
			  10000, &small, &e));
	ASSERT_EQ(e.result_count, 1);
	ASSERT_EQ(e.omitted_results, 1);
	ASSERT(e.omitted_bytes >= 50000);
	ASSERT_STR_EQ(main_text(&e), "'small'");
	kernel_execution_finish(&e);
}

/* ipykernel sends what was printed within its flush interval as one
 * message; one over the client's frame limit is dropped with iopub's
 * connection, reported, and the next execution's output still arrives. */
static void test_an_oversized_message_is_reported_and_the_next_output_arrives(void)
{
	struct kernel_execution e;
	ASSERT(run(&shared, "import sys\nsys.stdout.write('x' * (20 << 20))\n'done'", 30000, &e));
	ASSERT(e.output_lost);
	ASSERT_EQ(e.out.bytes, 0);
	ASSERT(kernel_client_counts(shared.client).iopub_drops >= 1);
	kernel_execution_finish(&e);
	ASSERT(run(&shared, "print('after')", 30000, &e));
	ASSERT(!e.output_lost);
	ASSERT_EQ(e.out.count, 1);
	ASSERT_STR_EQ(e.out.chunks[0], "after\n");
	kernel_execution_finish(&e);
}

static void test_cancel_ends_a_running_execution(void)
{
	int cancel = eventfd(1, EFD_CLOEXEC);
	struct kernel_execute_options o = {
		.code = "import time\ntime.sleep(30)",
		.timeout_ms = 60000,
		.grace_ms = 1000,
		.limits = &roomy,
		.cancel_fd = cancel,
	};
	struct kernel_execution e;
	struct error err;
	int64_t start = clock_monotonic_ms();
	ASSERT(kernel_execute(shared.client, &o, &e, &err));
	ASSERT_EQ(e.outcome, KERNEL_OUTCOME_CANCELLED);
	ASSERT(clock_monotonic_ms() - start < 5000);
	kernel_execution_finish(&e);
	close(cancel);
	/* The kernel still sleeps; interrupt it so the next test starts clean. */
	struct kernel_execution next;
	ASSERT(run(&shared, "'after'", 1000, &next));
	kernel_execution_finish(&next);
}

static void test_a_kernel_that_ignores_the_interrupt_is_stuck(void)
{
	struct test_kernel t;
	ASSERT(start_kernel(&t, NULL));
	struct kernel_execution e;
	ASSERT(run(&t,
		   "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
		   "while True:\n    pass",
		   1000, &e));
	ASSERT_EQ(e.outcome, KERNEL_OUTCOME_STUCK);
	kernel_execution_finish(&e);
	stop_kernel(&t);
}

static void test_a_kernel_that_exits_is_noticed_at_once(void)
{
	struct test_kernel t;
	ASSERT(start_kernel(&t, NULL));
	struct kernel_execution e;
	int64_t start = clock_monotonic_ms();
	ASSERT(run(&t, "import os\nos._exit(1)", 30000, &e));
	ASSERT_EQ(e.outcome, KERNEL_OUTCOME_DIED);
	ASSERT(clock_monotonic_ms() - start < 5000);
	kernel_execution_finish(&e);
	ASSERT(!kernel_client_ping(t.client, 300));
	stop_kernel(&t);
}

static void test_a_forged_message_is_dropped_and_counted(void)
{
	struct test_kernel t;
	ASSERT(start_kernel(&t, FAKE_KERNEL));
	struct kernel_execution e;
	ASSERT(run(&t, "anything", 10000, &e));
	/* The fake kernel sends "forged" signed with another key, then
	 * "genuine" with the right one. */
	ASSERT_EQ(e.out.count, 1);
	ASSERT_STR_EQ(e.out.chunks[0], "genuine\n");
	ASSERT_EQ(kernel_client_counts(t.client).forged, 1);
	kernel_execution_finish(&e);
	ASSERT(kernel_client_ping(t.client, 2000));
	stop_kernel(&t);
}

int main(void)
{
	if (system("/usr/bin/python3 -c 'import ipykernel' 2>/dev/null") != 0) {
		printf("SKIP: no ipykernel (apt-get install python3-ipykernel)\n");
		return 77;
	}
	if (!start_kernel(&shared, NULL)) {
		fprintf(stderr, "FAIL: the shared kernel did not start\n");
		stop_kernel(&shared);
		return EXIT_FAILURE;
	}
	RUN_TEST(test_state_survives_between_executions);
	RUN_TEST(test_streams_arrive_as_they_are_printed);
	RUN_TEST(test_an_exception_is_name_value_and_plain_traceback);
	RUN_TEST(test_rich_outputs_keep_every_mime_type);
	RUN_TEST(test_the_time_limit_interrupts_and_state_survives);
	RUN_TEST(test_logs_keep_the_end_within_their_bound);
	RUN_TEST(test_a_result_over_its_bound_is_left_out_and_counted);
	RUN_TEST(test_an_oversized_message_is_reported_and_the_next_output_arrives);
	RUN_TEST(test_cancel_ends_a_running_execution);
	stop_kernel(&shared);
	RUN_TEST(test_a_kernel_that_ignores_the_interrupt_is_stuck);
	RUN_TEST(test_a_kernel_that_exits_is_noticed_at_once);
	RUN_TEST(test_a_forged_message_is_dropped_and_counted);
	TEST_EXIT();
}
