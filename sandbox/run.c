/* SPDX-License-Identifier: MIT */
/* A command run to its end with its output collected: what exec, the
 * clipboard and the file operations need. The command's stdin, stdout and
 * stderr are pipes this thread serves with one poll loop, so a command
 * that floods one stream while waiting for input on another cannot wedge
 * it, and the deadline holds whatever the command does. */

#include "sandbox/run.h"
#include "sandbox/process.h"
#include "sandbox/state.h"
#include "util/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DRAIN_AFTER_EXIT_MS 2000
#define STOP_POLL_MS 100

/* Keeps the last max bytes: a buffer of up to 2*max that is compacted
 * when full, so appending stays cheap. */
static bool keep_tail(struct sandbox_output *o, size_t *capacity, size_t max, const char *data,
		      size_t len)
{
	o->total += len;
	if (len >= max) {
		data += len - max;
		len = max;
		o->len = 0;
	}
	if (o->len + len > *capacity) {
		if (o->len + len > 2 * max) {
			size_t drop = o->len + len - max;
			memmove(o->data, o->data + drop, o->len - drop);
			o->len -= drop;
		}
		if (o->len + len > *capacity) {
			size_t want = *capacity ? *capacity * 2 : 65536;
			while (want < o->len + len)
				want *= 2;
			if (want > 2 * max)
				want = 2 * max;
			char *grown = realloc(o->data, want + 1);
			if (!grown)
				return false;
			o->data = grown;
			*capacity = want;
		}
	}
	memcpy(o->data + o->len, data, len);
	o->len += len;
	return true;
}

static void finish_tail(struct sandbox_output *o, size_t max)
{
	if (o->len > max) {
		memmove(o->data, o->data + o->len - max, max);
		o->len = max;
	}
	if (!o->data)
		o->data = malloc(1);
	if (o->data)
		o->data[o->len] = '\0';
}

void sandbox_run_result_finish(struct sandbox_run_result *r)
{
	free(r->out.data);
	free(r->err.data);
	memset(r, 0, sizeof(*r));
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

bool sandbox_run(struct sandbox *s, const struct sandbox_run *run, struct sandbox_run_result *r,
		 struct error *err)
{
	memset(r, 0, sizeof(*r));
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, errp[2] = { -1, -1 };
	if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 ||
	    pipe2(errp, O_CLOEXEC) != 0) {
		error_set(err, errno, "cannot create pipes");
		close_fd(&in[0]), close_fd(&in[1]), close_fd(&out[0]), close_fd(&out[1]);
		close_fd(&errp[0]), close_fd(&errp[1]);
		return false;
	}
	struct sandbox_command command = run->command;
	command.stdin_fd = in[0];
	command.stdout_fd = out[1];
	command.stderr_fd = errp[1];
	command.fd3 = -1;
	int64_t started = clock_monotonic_ms();
	struct sandbox_process p;
	bool ok = sandbox_spawn(s, &command, &p, err);
	close_fd(&in[0]), close_fd(&out[1]), close_fd(&errp[1]);
	if (!ok) {
		close_fd(&in[1]), close_fd(&out[0]), close_fd(&errp[0]);
		return false;
	}
	fcntl(in[1], F_SETFL, O_NONBLOCK);
	if (!run->input || run->input_len == 0)
		close_fd(&in[1]);

	size_t written = 0, capacity[2] = { 0, 0 };
	int64_t deadline = started + run->timeout_ms, drain_until = 0;
	bool memory_ok = true;
	while (out[0] >= 0 || errp[0] >= 0 || !p.exited) {
		int64_t now = clock_monotonic_ms();
		if (!p.exited && now >= deadline) {
			r->timed_out = true;
			break;
		}
		if (!p.exited && run->should_stop && run->should_stop(run->context)) {
			r->stopped = true;
			break;
		}
		if (p.exited && drain_until == 0)
			drain_until = now + DRAIN_AFTER_EXIT_MS;
		if (drain_until && now >= drain_until)
			break; /* something it handed its output to still holds the pipe */
		struct pollfd pfds[4];
		int n = 0, at_out = -1, at_err = -1, at_in = -1, at_channel = -1;
		if (out[0] >= 0)
			at_out = n, pfds[n++] = (struct pollfd){ .fd = out[0], .events = POLLIN };
		if (errp[0] >= 0)
			at_err = n, pfds[n++] = (struct pollfd){ .fd = errp[0], .events = POLLIN };
		if (in[1] >= 0)
			at_in = n, pfds[n++] = (struct pollfd){ .fd = in[1], .events = POLLOUT };
		if (!p.exited && p.channel >= 0)
			at_channel = n,
			pfds[n++] = (struct pollfd){ .fd = p.channel, .events = POLLIN };
		int64_t until = drain_until ? drain_until : deadline;
		int64_t wait = until - now;
		if (run->should_stop && wait > STOP_POLL_MS)
			wait = STOP_POLL_MS;
		if (poll(pfds, (nfds_t)n, (int)(wait > 0 ? wait : 0)) < 0 && errno != EINTR)
			break;
		if (at_channel >= 0 && pfds[at_channel].revents)
			sandbox_process_wait(&p, 0);
		if (at_in >= 0 && pfds[at_in].revents) {
			const char *input = run->input;
			ssize_t put = write(in[1], input + written, run->input_len - written);
			if (put > 0)
				written += (size_t)put;
			if ((put < 0 && errno != EAGAIN && errno != EINTR) ||
			    written == run->input_len)
				close_fd(&in[1]);
		}
		int streams[2] = { at_out, at_err };
		int *fds[2] = { &out[0], &errp[0] };
		for (int k = 0; k < 2; k++) {
			if (streams[k] < 0 || !pfds[streams[k]].revents)
				continue;
			char chunk[65536];
			ssize_t got = read(*fds[k], chunk, sizeof(chunk));
			if (got < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (got <= 0) {
				close_fd(fds[k]);
				continue;
			}
			struct sandbox_output *o = k == 0 ? &r->out : &r->err;
			memory_ok = memory_ok &&
				    keep_tail(o, &capacity[k], run->max_output, chunk, (size_t)got);
			if (run->on_output)
				run->on_output(run->context,
					       k == 0 ? SANDBOX_STDOUT : SANDBOX_STDERR, chunk,
					       (size_t)got);
		}
	}
	/* Timed out or stopped: it and all it started go. Otherwise this just
	 * lets go of the channel. */
	sandbox_process_stop(&p);
	close_fd(&in[1]), close_fd(&out[0]), close_fd(&errp[0]);
	r->duration_ms = clock_monotonic_ms() - started;
	finish_tail(&r->out, run->max_output);
	finish_tail(&r->err, run->max_output);
	if (p.exited || r->timed_out || r->stopped) {
		r->exited = WIFEXITED(p.status);
		r->exit_code = r->exited ? WEXITSTATUS(p.status) : -1;
		r->signal = WIFSIGNALED(p.status) ? WTERMSIG(p.status) : 0;
	}
	if (!memory_ok || !r->out.data || !r->err.data) {
		sandbox_run_result_finish(r);
		error_set(err, 0, "out of memory collecting the output");
		return false;
	}
	return true;
}
