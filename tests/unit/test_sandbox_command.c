/* SPDX-License-Identifier: MIT */
/* Host programs the daemon runs for itself (sandbox/command.h): their
 * first line in the message when they fail, and their deadline kept even
 * when they close their output and go on, or never stop writing; what
 * they started is ended with them. */
#include "test.h"

#include "sandbox/command.h"
#include "util/error.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

static char dir[] = "/tmp/lizard-test-command-XXXXXX";

/* The pid written in dir/name, or 0. */
static long pid_in(const char *name)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "r");
	long pid = 0;
	if (f) {
		if (fscanf(f, "%ld", &pid) != 1)
			pid = 0;
		fclose(f);
	}
	return pid;
}

/* A process that no longer runs: gone, or ended and not yet reaped by
 * whoever adopted it. */
static bool ended(long pid)
{
	char path[64], state = 0;
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return true;
	/* "pid (comm) S ...": the state follows the last ')'. */
	char line[512];
	bool read_it = fgets(line, sizeof(line), f) != NULL;
	fclose(f);
	char *close_paren = read_it ? strrchr(line, ')') : NULL;
	if (close_paren && close_paren[1] == ' ')
		state = close_paren[2];
	return state == 'Z' || state == 'X';
}

static void success_is_true(void)
{
	const char *argv[] = { "/bin/true", NULL };
	struct error err = { 0 };
	ASSERT(sandbox_command_run(argv, -1, 5000, "true", &err));
}

static void failure_names_what_it_said(void)
{
	const char *argv[] = { "/bin/sh", "-c", "echo cannot do it; echo second line; exit 3",
			       NULL };
	struct error err = { 0 };
	ASSERT(!sandbox_command_run(argv, -1, 5000, "the tool", &err));
	ASSERT_CONTAINS(err.message, "the tool failed: cannot do it");
}

static void closed_output_still_has_a_deadline(void)
{
	char script[PATH_MAX + 200];
	snprintf(script, sizeof(script),
		 "sleep 300 & echo $! > %s/child; echo $$ > %s/leader; exec >&- 2>&-; "
		 "sleep 300",
		 dir, dir);
	const char *argv[] = { "/bin/sh", "-c", script, NULL };
	struct error err = { 0 };
	ASSERT(!sandbox_command_run(argv, -1, 500, "the silent tool", &err));
	ASSERT_CONTAINS(err.message, "the silent tool failed (it did not finish in time)");
	long leader = pid_in("leader"), child = pid_in("child");
	ASSERT(leader > 0 && child > 0);
	ASSERT(ended(leader));
	/* SIGKILL is delivered to the child, an orphan now, when it next
	 * runs: up to 5 s for that. */
	for (int i = 0; i < 500 && !ended(child); i++)
		usleep(10000);
	ASSERT(ended(child));
}

static void endless_output_has_a_deadline(void)
{
	const char *argv[] = { "/usr/bin/yes", NULL };
	struct error err = { 0 };
	ASSERT(!sandbox_command_run(argv, -1, 300, "yes", &err));
	ASSERT_CONTAINS(err.message, "yes failed: y y y");
}

int main(void)
{
	if (!mkdtemp(dir)) {
		fprintf(stderr, "cannot make %s: %s\n", dir, strerror(errno));
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	RUN_TEST(success_is_true);
	RUN_TEST(failure_names_what_it_said);
	RUN_TEST(closed_output_still_has_a_deadline);
	RUN_TEST(endless_output_has_a_deadline);
	char command[PATH_MAX + 16];
	snprintf(command, sizeof(command), "rm -rf %s", dir);
	if (system(command) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	TEST_EXIT();
}
