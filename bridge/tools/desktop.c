/* SPDX-License-Identifier: MIT */
#include "bridge/tools/desktop.h"

#include "bridge/tools/common.h"

#include "bridge/session/session.h"
#include "bridge/session/input.h"
#include "mcp/server.h"
#include "sandbox/desktop.h"
#include "sandbox/sandbox.h"
#include "util/io.h"
#include "vnc/conn.h"
#include "vnc/framebuffer.h"
#include "util/utf8.h"
#include "vnc/keys.h"
#include "util/clock.h"
#include "sandbox/process.h"
#include "sandbox/run.h"

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_CLIPBOARD_BYTES (1024 * 1024)
/* What the X server takes in one piece from xclip. */
#define MAX_X_CLIPBOARD_SET_BYTES (1024 * 1024 - 1)
/* A read of the clipboard, and setting it until it reads back, each. */
#define CLIPBOARD_TIMEOUT_MS 5000
#define BROWSER_DRAW_TIMEOUT_MS 30000

static struct sandbox_desktop *local_desktop(struct bridge_session *s, struct mcp_call *call,
					     const char *what)
{
	struct sandbox_desktop *d = bridge_session_desktop(s);
	if (!d)
		mcp_call_fail(call,
			      "%s needs a local desktop (template desktop or bare); session %s is "
			      "attached to a VNC server the bridge does not run",
			      what, bridge_session_id(s));
	return d;
}

/* http(s), file and about URLs; a bare host gets https://. */
static bool normalize_url(const char *url, char *out, size_t size, struct error *err)
{
	static const char *const allowed[] = { "http://", "https://", "file://", "about:" };
	for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
		if (strncasecmp(url, allowed[i], strlen(allowed[i])) == 0) {
			snprintf(out, size, "%s", url);
			return true;
		}
	}
	if (strstr(url, "://") || strchr(url, ' ') || url[0] == '-') {
		char shown[101];
		error_set(err, 0, "'%s' is not an http, https, file or about URL",
			  utf8_excerpt(shown, sizeof(shown), url));
		return false;
	}
	snprintf(out, size, "https://%s", url);
	return true;
}

void tools_open_url(struct mcp_call *call, const cJSON *args, struct bridge_tools_context *context)
{
	struct bridge_session *s = tools_usable_session(context, call, args);
	struct sandbox_desktop *d = s ? local_desktop(s, call, "open_url") : NULL;
	if (!d)
		return;
	char url[4096];
	struct error err;
	if (!normalize_url(tools_string(args, "url", ""), url, sizeof(url), &err)) {
		mcp_call_fail(call, "%s", err.message);
		return;
	}
	uint64_t before = vnc_framebuffer_drawn_pixels(bridge_session_framebuffer(s));
	int64_t called = clock_monotonic_ms();
	bool started;
	struct error failed;
	if (!sandbox_desktop_open_url(d, url, &started, &failed)) {
		mcp_call_fail(call, "could not open the browser: %s", failed.message);
		return;
	}
	mcp_call_text(call, "%s %s.", started ? "Started Chromium with" : "Opened a new tab with",
		      url);
	/* The window takes a moment to appear: settle only after it did. A
	 * browser starting cold on a busy machine takes long: 16 s to its
	 * first paint was seen on 2 cores at a load of 28. */
	tools_finish_start(s, call, args, before, called,
			   started ? BROWSER_DRAW_TIMEOUT_MS : START_DRAW_TIMEOUT_MS);
}

/* A program that cannot run (not installed, not executable, bad
 * arguments) usually exits within this long; launch waits to tell. */
#define LAUNCH_WATCH_MS 500

void tools_launch(struct mcp_call *call, const cJSON *args, struct bridge_tools_context *context)
{
	struct bridge_session *s = tools_usable_session(context, call, args);
	struct sandbox_desktop *d = s ? local_desktop(s, call, "launch") : NULL;
	if (!d)
		return;
	const char *command = tools_string(args, "command", "");
	const char *argv[] = { "/bin/sh", "-c", command, NULL };
	struct sandbox_command launched = {
		.name = "launched command",
		.argv = argv,
		.user = SANDBOX_AS_USER,
		.stdin_fd = -1,
		.stdout_fd = -1,
		.stderr_fd = -1,
		.fd3 = -1,
	};
	struct error err;
	struct sandbox_launched result;
	uint64_t before = vnc_framebuffer_drawn_pixels(bridge_session_framebuffer(s));
	int64_t called = clock_monotonic_ms();
	if (!sandbox_launch_watched(sandbox_desktop_sandbox(d), &launched, LAUNCH_WATCH_MS, &result,
				    &err)) {
		mcp_call_fail(call, "could not launch: %s", err.message);
		return;
	}
	if (result.exited && !(WIFEXITED(result.status) && WEXITSTATUS(result.status) == 0)) {
		/* It failed at once: not found, not executable, bad arguments. */
		size_t len = strlen(result.output);
		while (len > 0 &&
		       (result.output[len - 1] == '\n' || result.output[len - 1] == '\r'))
			len--;
		char *said = utf8_sanitize(result.output, len);
		char status[48];
		if (WIFEXITED(result.status))
			snprintf(status, sizeof(status), "status %d", WEXITSTATUS(result.status));
		else
			snprintf(status, sizeof(status), "signal %d", WTERMSIG(result.status));
		mcp_call_fail(call, "'%s' exited at once with %s%s%s", command, status,
			      said && said[0] ? "; it said: " : " and said nothing",
			      said && said[0] ? said : "");
		free(said);
		return;
	}
	if (result.exited)
		mcp_call_text(call, "Ran: %s (it finished at once, with status 0)", command);
	else
		mcp_call_text(call,
			      "Started: %s (pid %d in the sandbox; still running after %d ms)",
			      command, result.pid, LAUNCH_WATCH_MS);
	tools_finish_start(s, call, args, before, called, START_DRAW_TIMEOUT_MS);
}

static char *read_x_clipboard(struct sandbox_desktop *d, int timeout_ms, struct error *err)
{
	const char *argv[] = { "xclip", "-o", "-selection", "clipboard", "-t", "UTF8_STRING", NULL };
	struct sandbox_run run = {
		.command = { .name = "xclip", .argv = argv, .user = SANDBOX_AS_USER },
		.timeout_ms = timeout_ms,
		.max_output = MAX_CLIPBOARD_BYTES,
	};
	struct sandbox_run_result r;
	struct error failed;
	if (!sandbox_run(sandbox_desktop_sandbox(d), &run, &r, &failed)) {
		error_set(err, 0, "%.300s", failed.message);
		return NULL;
	}
	char *text = NULL;
	if (r.exited && r.exit_code == 0 && r.out.total <= MAX_CLIPBOARD_BYTES) {
		text = r.out.data;
		r.out.data = NULL;
	} else {
		error_set(err, 0, "xclip failed: %.200s", r.err.data);
	}
	sandbox_run_result_finish(&r);
	return text;
}

void tools_clipboard_get(struct mcp_call *call, const cJSON *args,
			 struct bridge_tools_context *context)
{
	struct bridge_session *s = tools_usable_session(context, call, args);
	if (!s)
		return;
	struct sandbox_desktop *d = bridge_session_desktop(s);
	char *text;
	if (d) {
		struct error err;
		text = read_x_clipboard(d, CLIPBOARD_TIMEOUT_MS, &err);
		if (!text)
			text = strdup(""); /* nobody owns the clipboard */
	} else {
		text = bridge_session_cut_text(s);
		if (!text)
			text = strdup("");
	}
	/* A program on the desktop may own the clipboard with any bytes;
	 * the reply is JSON, so what is not UTF-8 shows as U+FFFD. */
	char *repaired = text ? utf8_repair(text, strlen(text), NULL) : NULL;
	free(text);
	cJSON *reply = repaired ? cJSON_CreateObject() : NULL;
	if (!reply || !cJSON_AddStringToObject(reply, "text", repaired)) {
		cJSON_Delete(reply);
		free(repaired);
		mcp_call_fail(call, "out of memory");
		return;
	}
	free(repaired);
	tools_reply_data(call, reply);
}

/* UTF-8 to Latin-1 for RFB cut text; fails on anything beyond U+00FF. */
static char *to_latin1(const char *text, size_t *len, struct error *err)
{
	size_t in_len = strlen(text), replaced, first;
	char *out = malloc(in_len + 1);
	if (!out)
		return NULL;
	*len = utf8_to_latin1(text, in_len, out, &replaced, &first);
	if (replaced > 0) {
		uint32_t cp = 0xfffd;
		utf8_decode(text + first, in_len - first, &cp);
		error_set(err, 0,
			  "this desktop is attached over VNC, whose clipboard carries "
			  "Latin-1 text only; the character at byte %zu (U+%04X) cannot be "
			  "sent",
			  first, cp);
		free(out);
		return NULL;
	}
	return out;
}

static bool set_x_clipboard(struct sandbox_desktop *d, const char *text, struct error *err)
{
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) != 0) {
		error_set(err, 0, "cannot create a pipe for the clipboard text");
		return false;
	}
	/* xclip stays in the foreground (-quiet) as the clipboard's owner until
	 * something else takes it; it ends with the desktop at the latest. It
	 * reads the text from stdin before it takes the selection. */
	const char *argv[] = { "xclip", "-quiet", "-selection", "clipboard", "-i", NULL };
	struct sandbox_command command = {
		.name = "xclip",
		.argv = argv,
		.user = SANDBOX_AS_USER,
		.stdin_fd = fds[0],
		.stdout_fd = -1,
		.stderr_fd = -1,
		.fd3 = -1,
	};
	struct error failed;
	bool ok = sandbox_launch(sandbox_desktop_sandbox(d), &command, &failed);
	if (!ok)
		error_set(err, 0, "%.300s", failed.message);
	close(fds[0]);
	bool written = ok && io_write_all(fds[1], text, strlen(text));
	close(fds[1]);
	/* Ready once the clipboard reads back what we put there, within one
	 * deadline however the reads go. */
	bool confirmed = false;
	int64_t give_up = clock_monotonic_ms() + CLIPBOARD_TIMEOUT_MS;
	while (written && !confirmed) {
		int64_t left = give_up - clock_monotonic_ms();
		if (left < 100) /* too short for a read that can answer */
			break;
		struct error read_err;
		char *now = read_x_clipboard(d, (int)left, &read_err);
		confirmed = now && strcmp(now, text) == 0;
		free(now);
		if (!confirmed) {
			struct timespec tick = { 0, 20 * 1000000L };
			nanosleep(&tick, NULL);
		}
	}
	if (ok && !confirmed)
		error_set(err, 0, "the clipboard did not take the text (is xclip installed?)");
	return ok && confirmed;
}

void tools_clipboard_set(struct mcp_call *call, const cJSON *args,
			 struct bridge_tools_context *context)
{
	struct bridge_session *s = tools_usable_session(context, call, args);
	if (!s)
		return;
	const char *text = tools_string(args, "text", "");
	struct error err;
	/* What is set comes back from clipboard_get into JSON: only text. */
	size_t bad;
	if (!utf8_valid(text, strlen(text), &bad)) {
		mcp_call_fail(call,
			      "text is not valid UTF-8 at byte %zu; the clipboard takes UTF-8 "
			      "text only",
			      bad);
		return;
	}
	struct sandbox_desktop *d = bridge_session_desktop(s);
	bool ok;
	if (d && strlen(text) > MAX_X_CLIPBOARD_SET_BYTES) {
		/* xclip hands 1 MiB or more over in pieces (INCR), which Xvnc does
		 * not take: the transfer would never end. */
		mcp_call_fail(call,
			      "text is %zu bytes of UTF-8; the desktop's clipboard takes at most "
			      "%d bytes at once",
			      strlen(text), MAX_X_CLIPBOARD_SET_BYTES);
		return;
	}
	if (d) {
		ok = set_x_clipboard(d, text, &err);
	} else {
		size_t len;
		char *latin1 = to_latin1(text, &len, &err);
		ok = latin1 && bridge_session_send_cut_text(s, latin1, len, &err);
		free(latin1);
	}
	if (!ok) {
		mcp_call_fail(call, "%s", err.message);
		return;
	}
	mcp_call_text(call, "The clipboard now holds %zu bytes of text; paste with ctrl+v.",
		      strlen(text));
}
