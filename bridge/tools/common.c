/* SPDX-License-Identifier: MIT */
#include "bridge/tools/common.h"

#include "bridge/session/resources.h"
#include "bridge/session/session.h"
#include "bridge/tools/context.h"
#include "mcp/server.h"
#include "sandbox/sandbox.h"
#include "vnc/capture.h"
#include "vnc/framebuffer.h"
#include "util/log.h"
#include "util/clock.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

int tools_int(const cJSON *args, const char *name, int def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, name);
	return cJSON_IsNumber(v) ? (int)v->valuedouble : def;
}

const char *tools_string(const cJSON *args, const char *name, const char *def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, name);
	return cJSON_IsString(v) ? v->valuestring : def;
}

bool tools_bool(const cJSON *args, const char *name, bool def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, name);
	return cJSON_IsBool(v) ? cJSON_IsTrue(v) : def;
}

void tools_agent_space(struct bridge_session *s, struct agent_space *space)
{
	int w, h;
	vnc_framebuffer_size(bridge_session_framebuffer(s), &w, &h);
	bridge_agent_space_init(space, w, h);
}

void tools_pointer(struct bridge_session *s, int *x, int *y)
{
	struct agent_space space;
	tools_agent_space(s, &space);
	int nx, ny;
	vnc_framebuffer_cursor_position(bridge_session_framebuffer(s), &nx, &ny);
	tools_to_agent(&space, nx, ny, x, y);
}

bool tools_check_point(struct bridge_session *s, struct mcp_call *call, int x, int y,
		       const char *what, int *native_x, int *native_y)
{
	struct agent_space space;
	tools_agent_space(s, &space);
	if (x < 0 || x >= space.width || y < 0 || y >= space.height) {
		mcp_call_fail(call,
			      "%s (%d, %d) is outside the %dx%d screen%s; x must be 0..%d and y "
			      "0..%d",
			      what, x, y, space.width, space.height,
			      space.scaled ? " (the scaled space screenshots use)" : "",
			      space.width - 1, space.height - 1);
		return false;
	}
	tools_to_native(&space, x, y, native_x, native_y);
	return true;
}

bool tools_point(struct bridge_session *s, struct mcp_call *call, const cJSON *args, bool required,
		 int *native_x, int *native_y)
{
	const cJSON *jx = cJSON_GetObjectItemCaseSensitive(args, "x");
	const cJSON *jy = cJSON_GetObjectItemCaseSensitive(args, "y");
	if (!jx && !jy && !required) {
		vnc_framebuffer_cursor_position(bridge_session_framebuffer(s), native_x, native_y);
		return true;
	}
	if (!jx || !jy) {
		mcp_call_fail(call, "give both x and y%s",
			      required ? "" : ", or neither to use the pointer position");
		return false;
	}
	return tools_check_point(s, call, (int)jx->valuedouble, (int)jy->valuedouble, "point",
				 native_x, native_y);
}

bool tools_add_screenshot(struct bridge_session *s, struct mcp_call *call, const int *region,
			  const char *format, int quality, bool show_cursor)
{
	/* Right after connecting or a resize, the server's first picture may
	 * still be on its way: a blank screenshot would mislead. */
	if (vnc_framebuffer_wait_picture(bridge_session_framebuffer(s), SETTLE_TIMEOUT_MS) ==
	    VNC_WAIT_CLOSED) {
		struct error err;
		if (bridge_session_usable(s, &err))
			error_set(&err, 0, "the desktop connection closed");
		mcp_call_fail(call, "%s before its picture arrived", err.message);
		return false;
	}
	struct agent_space space;
	tools_agent_space(s, &space);
	struct vnc_capture_request request = {
		.with_cursor = show_cursor,
		.format = strcmp(format, "jpeg") == 0 ? VNC_FORMAT_JPEG : VNC_FORMAT_PNG,
		.jpeg_quality = quality,
	};
	if (region) {
		/* The screen pixels under the region, at full resolution. */
		int source[4];
		struct error why;
		if (!bridge_region_to_native(&space, region, source, &why)) {
			mcp_call_fail(call, "%s", why.message);
			return false;
		}
		request.source = (struct vnc_rect){ source[0], source[1], source[2], source[3] };
		bridge_fit_for_models(request.source.width, request.source.height, &request.width,
				      &request.height);
	} else {
		request.source = (struct vnc_rect){ 0, 0, space.native_width, space.native_height };
		request.width = space.width;
		request.height = space.height;
	}

	/* Full screens keep their bands in the session's cache; zooms come
	 * and go, so they are encoded afresh. */
	struct blob *image;
	struct error err;
	bool whole_png = !region && request.format == VNC_FORMAT_PNG;
	bool unchanged = false;
	int64_t started = clock_monotonic_ms();
	if (!vnc_capture_base64(bridge_session_framebuffer(s),
				whole_png ? bridge_session_capture_cache(s) : NULL, &request,
				&image, &unchanged, &err)) {
		mcp_call_fail(call, "%s", err.message);
		return false;
	}
	bool ok = mcp_call_image_blob(
		call, image, request.format == VNC_FORMAT_JPEG ? "image/jpeg" : "image/png");
	log_debug("screenshot %dx%d: %zu base64 characters in %lld ms%s", request.width,
		  request.height, image->len, (long long)(clock_monotonic_ms() - started),
		  unchanged ? " (unchanged)" : "");
	blob_unref(image);
	if (!ok) {
		mcp_call_fail(call, "out of memory while sending the screenshot");
		return false;
	}

	int ax, ay;
	tools_pointer(s, &ax, &ay);
	if (region)
		mcp_call_text(call,
			      "Zoomed view of region [%d, %d, %d, %d], shown at %dx%d. Points in "
			      "this image are not screen coordinates: image point (u, v) is screen "
			      "point (%d + u * %.4f, %d + v * %.4f). Pointer at (%d, %d).",
			      region[0], region[1], region[2], region[3], request.width,
			      request.height, region[0],
			      (double)(region[2] - region[0]) / request.width, region[1],
			      (double)(region[3] - region[1]) / request.height, ax, ay);
	else if (space.scaled)
		mcp_call_text(call,
			      "Screenshot %dx%d. The %dx%d screen is shown scaled by %.4f; give "
			      "every coordinate in this %dx%d space, the bridge maps it to screen "
			      "pixels. Pointer at (%d, %d).",
			      space.width, space.height, space.native_width, space.native_height,
			      (double)space.width / space.native_width, space.width, space.height,
			      ax, ay);
	else
		mcp_call_text(call,
			      "Screenshot %dx%d; coordinates are screen pixels, (0, 0) top left. "
			      "Pointer at (%d, %d).",
			      space.width, space.height, ax, ay);
	return true;
}

/* Waits are cut into slices this long, so that a long call reports
 * progress and notices cancellation between them. */
#define STEP_SLICE_MS 250
#define PROGRESS_SPACING_MS 250

void tools_steps_init(struct tools_steps *steps, struct bridge_session *session,
		      struct mcp_call *call, double total, const char *unit)
{
	*steps = (struct tools_steps){ .session = session,
				       .call = call,
				       .total = total,
				       .unit = unit,
				       .sent = -1,
				       .started_ms = clock_monotonic_ms() };
	/* The first notification comes one spacing in: quick calls send none. */
	steps->sent_ms = steps->started_ms;
}

void tools_report(struct tools_steps *steps, double value, const char *fmt, ...)
{
	int64_t now = clock_monotonic_ms();
	if (!mcp_call_wants_progress(steps->call) || value <= steps->sent ||
	    now - steps->sent_ms < PROGRESS_SPACING_MS)
		return;
	char message[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	mcp_call_progress(steps->call, value, steps->total, message);
	steps->sent = value;
	steps->sent_ms = now;
}

bool tools_step(struct tools_steps *steps, double done)
{
	if (mcp_call_cancelled(steps->call)) {
		mcp_call_fail(steps->call, "cancelled by the client");
		return false;
	}
	struct error err;
	if (steps->session && !bridge_session_usable(steps->session, &err)) {
		mcp_call_fail(steps->call, "%s", err.message);
		return false;
	}
	if (steps->total >= 0)
		tools_report(steps, done, "%.0f of %.0f %s", done, steps->total, steps->unit);
	else
		tools_report(steps, done, "%.0f %s", done, steps->unit);
	return true;
}

static int slice_ms(int64_t give_up)
{
	int64_t left = give_up - clock_monotonic_ms();
	return left <= 0 ? 0 : left < STEP_SLICE_MS ? (int)left : STEP_SLICE_MS;
}

bool tools_settle_in_steps(struct tools_steps *steps, struct vnc_framebuffer *fb, int64_t since_ms,
			   int quiet_ms, int timeout_ms, int64_t started_ms,
			   enum vnc_wait_result *result)
{
	int64_t give_up = clock_monotonic_ms() + timeout_ms;
	for (;;) {
		*result = vnc_framebuffer_wait_settled(fb, since_ms, quiet_ms, slice_ms(give_up));
		if (*result != VNC_WAIT_TIMEOUT || clock_monotonic_ms() >= give_up)
			return true;
		if (!tools_step(steps, (double)(clock_monotonic_ms() - started_ms)))
			return false;
	}
}

static void fail_closed(struct bridge_session *s, struct mcp_call *call)
{
	struct error err;
	if (bridge_session_usable(s, &err))
		error_set(&err, 0, "the desktop connection closed");
	mcp_call_fail(call, "%s while waiting for the screen to settle", err.message);
}

void tools_finish_action(struct bridge_session *s, struct mcp_call *call, const cJSON *args,
			 int64_t action_end_ms)
{
	if (!tools_bool(args, "screenshot", false) || mcp_call_failed(call))
		return;
	struct tools_steps steps;
	tools_steps_init(&steps, s, call, SETTLE_TIMEOUT_MS, "ms");
	enum vnc_wait_result r;
	if (!tools_settle_in_steps(&steps, bridge_session_framebuffer(s), action_end_ms,
				   SETTLE_QUIET_MS, SETTLE_TIMEOUT_MS, clock_monotonic_ms(), &r))
		return;
	if (r == VNC_WAIT_CLOSED) {
		fail_closed(s, call);
		return;
	}
	if (tools_add_screenshot(s, call, NULL, "png", 0, true) && r == VNC_WAIT_TIMEOUT)
		mcp_call_text(call, "The screen was still changing after %d ms.",
			      SETTLE_TIMEOUT_MS);
}

void tools_finish_start(struct bridge_session *s, struct mcp_call *call, const cJSON *args,
			uint64_t drawn_before, int64_t started_ms, int draw_timeout_ms)
{
	if (!tools_bool(args, "screenshot", false) || mcp_call_failed(call))
		return;
	struct vnc_framebuffer *fb = bridge_session_framebuffer(s);
	struct tools_steps steps;
	tools_steps_init(&steps, s, call, draw_timeout_ms + SETTLE_TIMEOUT_MS, "ms");
	int64_t give_up = started_ms + draw_timeout_ms;
	enum vnc_wait_result drawn;
	for (;;) {
		drawn = vnc_framebuffer_wait_drawn(fb, drawn_before, START_DRAWN_MIN_PIXELS,
						   slice_ms(give_up));
		if (drawn != VNC_WAIT_TIMEOUT || clock_monotonic_ms() >= give_up)
			break;
		if (!tools_step(&steps, (double)(clock_monotonic_ms() - started_ms)))
			return;
	}
	int64_t drawn_ms = clock_monotonic_ms();
	long long after = (long long)(drawn_ms - started_ms);
	/* A program that took long to draw at all runs on a busy machine or
	 * starts in stages (Chromium: window, then its bar, then the page),
	 * and its next stage comes at a like pace: the quiet window grows
	 * with the time to first drawing. */
	long long quiet = after / 4;
	int quiet_ms = quiet < SETTLE_QUIET_MS      ? SETTLE_QUIET_MS
		       : quiet > START_QUIET_MAX_MS ? START_QUIET_MAX_MS
						    : (int)quiet;
	enum vnc_wait_result settled = VNC_WAIT_OK;
	if (drawn == VNC_WAIT_OK && !tools_settle_in_steps(&steps, fb, drawn_ms, quiet_ms,
							   SETTLE_TIMEOUT_MS, started_ms, &settled))
		return;
	if (drawn == VNC_WAIT_CLOSED || settled == VNC_WAIT_CLOSED) {
		fail_closed(s, call);
		return;
	}
	if (!tools_add_screenshot(s, call, NULL, "png", 0, true))
		return;
	if (drawn != VNC_WAIT_OK)
		mcp_call_text(call,
			      "The screen did not change within %d s, so this may show it before "
			      "the program drew anything.",
			      draw_timeout_ms / 1000);
	else if (settled == VNC_WAIT_TIMEOUT)
		mcp_call_text(call,
			      "The screen changed after %lld ms and was still changing %d ms "
			      "later.",
			      after, SETTLE_TIMEOUT_MS);
	else
		mcp_call_text(call, "The screen changed after %lld ms, then was quiet for %d ms.",
			      after, quiet_ms);
}

/* Variables one envs object may set. */
#define MAX_ENVS 256

char **tools_env_list(struct mcp_call *call, const cJSON *object)
{
	int count = cJSON_GetArraySize(object);
	if (count > MAX_ENVS) {
		mcp_call_fail(call, "envs takes at most %d variables", MAX_ENVS);
		return NULL;
	}
	char **list = calloc((size_t)count + 1, sizeof(char *));
	if (!list) {
		mcp_call_fail(call, "out of memory");
		return NULL;
	}
	int n = 0;
	const cJSON *item;
	cJSON_ArrayForEach(item, object)
	{
		const char *name = item->string;
		bool valid = name[0] && !strchr("0123456789", name[0]);
		for (const char *p = name; *p && valid; p++)
			valid = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
				(*p >= '0' && *p <= '9') || *p == '_';
		if (!valid || !cJSON_IsString(item)) {
			mcp_call_fail(
				call,
				"envs must map names (letters, digits, _) to strings; '%.64s' "
				"does not",
				name);
			goto fail;
		}
		if (asprintf(&list[n], "%s=%s", name, item->valuestring) < 0) {
			list[n] = NULL;
			mcp_call_fail(call, "out of memory");
			goto fail;
		}
		n++;
	}
	return list;
fail:
	for (int i = 0; i < n; i++)
		free(list[i]);
	free(list);
	return NULL;
}

void tools_free_env_list(char **list)
{
	for (size_t i = 0; list && list[i]; i++)
		free(list[i]);
	free(list);
}

void tools_fail_sandbox_call(struct mcp_call *call, struct bridge_session *s,
			     const struct error *err)
{
	if (bridge_session_state(s) == BRIDGE_ENDED)
		mcp_call_fail(call, "session %s ended while %s ran", bridge_session_id(s),
			      mcp_call_tool_name(call));
	else
		mcp_call_fail(call, "%s", err->message);
}

struct sandbox *tools_session_sandbox(struct bridge_tools_context *c, struct mcp_call *call,
				      const cJSON *args, struct bridge_session **session)
{
	struct bridge_session *s = tools_session(c, call, args);
	if (!s)
		return NULL;
	*session = s;
	struct sandbox *sandbox = bridge_session_sandbox(s);
	if (!sandbox) {
		mcp_call_fail(
			call,
			"%s works in sandboxes, and session %s is not one: it is attached to a "
			"VNC server the bridge does not run (or has not started). Create a "
			"local session (template base, desktop, bare or interpreter) for commands and files.",
			mcp_call_tool_name(call), bridge_session_id(s));
		return NULL;
	}
	struct error err;
	enum bridge_session_state state = bridge_session_state(s);
	if (state == BRIDGE_ENDED || state == BRIDGE_FAILED) {
		bridge_session_usable(s, &err);
		mcp_call_fail(call, "%s", err.message);
		return NULL;
	}
	if (bridge_session_paused(s)) {
		mcp_call_fail(call,
			      "session %s is paused: its processes are frozen, so %s cannot run; "
			      "resume_session first",
			      bridge_session_id(s), mcp_call_tool_name(call));
		return NULL;
	}
	return sandbox;
}

enum sandbox_user tools_sandbox_user(const cJSON *args)
{
	return strcmp(tools_string(args, "user", "user"), "root") == 0 ? SANDBOX_AS_ROOT
								       : SANDBOX_AS_USER;
}
