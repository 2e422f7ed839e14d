/* SPDX-License-Identifier: MIT */
#include "bridge/tools/input.h"

#include "bridge/tools/common.h"

#include "bridge/session/input.h"
#include "bridge/session/session.h"
#include "mcp/server.h"
#include "vnc/conn.h"
#include "vnc/framebuffer.h"
#include "vnc/keys.h"
#include "util/clock.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_TYPE_CHARACTERS 100000
#define MAX_PATH_POINTS 1000
/* Pointer steps of one drag, all segments together. */
#define MAX_DRAG_STEPS 2000
#define DRAG_STEP_PX 16
#define DRAG_STEP_PAUSE_MS 8
#define DRAG_HOLD_PAUSE_MS 40
/* Between the clicks of a double or triple click and between wheel
 * steps. openbox takes a press on a window with a synchronous grab and
 * replays it; presses sent back to back on a loaded machine arrived while
 * the pointer was still frozen, and the X server then ignored openbox's
 * replay of one (about 3 rounds in 100 of scripts/stress-clicks.mjs lost
 * a pair; none in 450 with the gap). Well inside any double-click time. */
#define CLICK_GAP_MS 15
/* A settle wait looks for cancellation this often. */
#define WAIT_SLICE_MS 250

struct events {
	struct vnc_input_event *items;
	size_t count, capacity;
	bool out_of_memory;
};

static void push(struct events *e, struct vnc_input_event event)
{
	if (e->out_of_memory)
		return;
	if (e->count == e->capacity) {
		size_t capacity = e->capacity ? e->capacity * 2 : 64;
		struct vnc_input_event *grown = realloc(e->items, capacity * sizeof(*grown));
		if (!grown) {
			e->out_of_memory = true;
			return;
		}
		e->items = grown;
		e->capacity = capacity;
	}
	e->items[e->count++] = event;
}

static void push_pointer(struct events *e, int x, int y, int buttons)
{
	push(e, (struct vnc_input_event){
			.type = VNC_INPUT_POINTER, .x = x, .y = y, .buttons = buttons });
}

static void push_key(struct events *e, uint32_t keysym, bool down)
{
	push(e, (struct vnc_input_event){ .type = VNC_INPUT_KEY, .keysym = keysym, .down = down });
}

static void push_pause(struct events *e, int ms)
{
	push(e, (struct vnc_input_event){ .type = VNC_INPUT_PAUSE, .pause_ms = ms });
}

static void push_keys(struct events *e, const struct vnc_key_combo *combo, bool down)
{
	if (down)
		for (int i = 0; i < combo->count; i++)
			push_key(e, combo->keysyms[i], true);
	else
		for (int i = combo->count - 1; i >= 0; i--)
			push_key(e, combo->keysyms[i], false);
}

static bool input_cancelled(void *context)
{
	return mcp_call_cancelled(((struct tools_steps *)context)->call);
}

static void input_progress(void *context, size_t sent, size_t total)
{
	/* Pauses send nothing; elapsed time keeps the progress growing. */
	struct tools_steps *steps = context;
	tools_report(steps, (double)(clock_monotonic_ms() - steps->started_ms),
		     "sent %zu of %zu input events", sent, total);
}

/* Sends and frees the events; fails the call on error. Stops when the call
 * is cancelled or the session ends, releasing what it held. */
static bool send_events(struct bridge_session *s, struct mcp_call *call, struct events *e)
{
	struct error err;
	bool ok = false;
	struct tools_steps steps;
	tools_steps_init(&steps, s, call, -1, "ms");
	struct bridge_input_control control = { input_cancelled, input_progress, &steps };
	if (e->out_of_memory)
		mcp_call_fail(call, "out of memory building the input events");
	else if (!bridge_session_send_input(s, e->items, e->count, &control, &err))
		mcp_call_fail(call, "%s", err.message);
	else
		ok = true;
	free(e->items);
	memset(e, 0, sizeof(*e));
	return ok;
}

static int button_mask(enum tools_button button)
{
	return button == TOOLS_RIGHT    ? VNC_BUTTON_RIGHT
	       : button == TOOLS_MIDDLE ? VNC_BUTTON_MIDDLE
					: VNC_BUTTON_LEFT;
}

static const char *button_name(enum tools_button button)
{
	return button == TOOLS_RIGHT ? "right" : button == TOOLS_MIDDLE ? "middle" : "left";
}

bool tools_parse_button(const char *name, enum tools_button *button)
{
	if (strcmp(name, "left") == 0)
		*button = TOOLS_LEFT;
	else if (strcmp(name, "middle") == 0)
		*button = TOOLS_MIDDLE;
	else if (strcmp(name, "right") == 0)
		*button = TOOLS_RIGHT;
	else
		return false;
	return true;
}

/* Modifier keys held around an action: "ctrl", "ctrl+shift", ... */
static bool parse_modifiers(struct mcp_call *call, const char *modifiers,
			    struct vnc_key_combo *combo)
{
	combo->count = 0;
	if (!modifiers || !*modifiers)
		return true;
	size_t count;
	struct error err;
	if (!vnc_keys_parse(modifiers, combo, 1, &count, &err)) {
		mcp_call_fail(call, "modifiers: %s", err.message);
		return false;
	}
	return true;
}

bool tools_do_click(struct bridge_session *s, struct mcp_call *call, int x, int y,
		    enum tools_button button, int count, const char *modifiers)
{
	struct vnc_key_combo held;
	if (!parse_modifiers(call, modifiers, &held))
		return false;
	int base = bridge_session_buttons_held(s);
	int mask = button_mask(button);
	struct events e = { 0 };
	push_pointer(&e, x, y, base);
	push_keys(&e, &held, true);
	for (int i = 0; i < count; i++) {
		if (i > 0)
			push_pause(&e, CLICK_GAP_MS);
		push_pointer(&e, x, y, base | mask);
		push_pointer(&e, x, y, base & ~mask);
	}
	push_keys(&e, &held, false);
	return send_events(s, call, &e);
}

bool tools_do_move(struct bridge_session *s, struct mcp_call *call, int x, int y)
{
	struct events e = { 0 };
	push_pointer(&e, x, y, bridge_session_buttons_held(s));
	return send_events(s, call, &e);
}

bool tools_do_button(struct bridge_session *s, struct mcp_call *call, int x, int y,
		     enum tools_button button, bool down)
{
	int held = bridge_session_buttons_held(s);
	int mask = button_mask(button);
	held = down ? held | mask : held & ~mask;
	struct events e = { 0 };
	push_pointer(&e, x, y, held);
	if (!send_events(s, call, &e))
		return false;
	bridge_session_set_buttons_held(s, held);
	return true;
}

/* Steps of the pointer from point i-1 to point i: one per DRAG_STEP_PX. */
static int segment_steps(const int *points, int i)
{
	int dx = abs(points[i * 2] - points[(i - 1) * 2]);
	int dy = abs(points[i * 2 + 1] - points[(i - 1) * 2 + 1]);
	return (dx > dy ? dx : dy) / DRAG_STEP_PX + 1;
}

bool tools_do_drag(struct bridge_session *s, struct mcp_call *call, const int *points, int count,
		   enum tools_button button)
{
	if (count > MAX_PATH_POINTS) {
		mcp_call_fail(call, "a drag path has at most %d points", MAX_PATH_POINTS);
		return false;
	}
	/* Long paths take longer strides, so that every drag ends within
	 * MAX_DRAG_STEPS steps (about 16 s). */
	long long wanted = 0;
	for (int i = 1; i < count; i++)
		wanted += segment_steps(points, i);
	long long budget = MAX_DRAG_STEPS - (count - 1);
	int base = bridge_session_buttons_held(s);
	int mask = button_mask(button);
	struct events e = { 0 };
	push_pointer(&e, points[0], points[1], base);
	push_pause(&e, DRAG_STEP_PAUSE_MS);
	push_pointer(&e, points[0], points[1], base | mask);
	push_pause(&e, DRAG_HOLD_PAUSE_MS);
	/* Intermediate motion in small steps: window managers, toolkits and
	 * drag-and-drop need to see the pointer travel, not jump. */
	for (int i = 1; i < count; i++) {
		int x0 = points[(i - 1) * 2], y0 = points[(i - 1) * 2 + 1];
		int x1 = points[i * 2], y1 = points[i * 2 + 1];
		int steps = segment_steps(points, i);
		if (wanted > MAX_DRAG_STEPS)
			steps = 1 + (int)((long long)(steps - 1) * budget / wanted);
		for (int k = 1; k <= steps; k++) {
			push_pointer(&e, x0 + (x1 - x0) * k / steps, y0 + (y1 - y0) * k / steps,
				     base | mask);
			push_pause(&e, DRAG_STEP_PAUSE_MS);
		}
	}
	push_pause(&e, DRAG_HOLD_PAUSE_MS);
	push_pointer(&e, points[(count - 1) * 2], points[(count - 1) * 2 + 1], base & ~mask);
	return send_events(s, call, &e);
}

bool tools_do_scroll(struct bridge_session *s, struct mcp_call *call, int x, int y,
		     const char *direction, int amount, const char *modifiers)
{
	struct vnc_key_combo held;
	if (!parse_modifiers(call, modifiers, &held))
		return false;
	int wheel = strcmp(direction, "up") == 0      ? VNC_BUTTON_WHEEL_UP
		    : strcmp(direction, "left") == 0  ? VNC_BUTTON_WHEEL_LEFT
		    : strcmp(direction, "right") == 0 ? VNC_BUTTON_WHEEL_RIGHT
						      : VNC_BUTTON_WHEEL_DOWN;
	int base = bridge_session_buttons_held(s);
	struct events e = { 0 };
	push_pointer(&e, x, y, base);
	push_keys(&e, &held, true);
	for (int i = 0; i < amount; i++) {
		if (i > 0)
			push_pause(&e, CLICK_GAP_MS);
		push_pointer(&e, x, y, base | wheel);
		push_pointer(&e, x, y, base);
	}
	push_keys(&e, &held, false);
	return send_events(s, call, &e);
}

/* Text to key events: "\n" is Return, "\t" Tab, "\r\n" one Return. */
static bool text_to_events(const char *text, struct events *e, size_t *characters,
			   struct error *err)
{
	size_t len = strlen(text);
	*characters = 0;
	for (size_t i = 0; i < len;) {
		uint32_t cp;
		size_t n = vnc_utf8_decode(text + i, len - i, &cp);
		if (n == 0) {
			error_set(err, 0, "text is not valid UTF-8 at byte %zu", i);
			return false;
		}
		i += n;
		uint32_t keysym;
		if (cp == '\r' && i < len && text[i] == '\n')
			continue;
		if (cp == '\n' || cp == '\r') {
			keysym = 0xff0d; /* Return */
		} else if (cp == '\t') {
			keysym = 0xff09; /* Tab */
		} else if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) {
			error_set(err, 0,
				  "text contains control character U+%04X at character %zu; type "
				  "sends text, newlines and tabs; press sends keys",
				  cp, *characters);
			return false;
		} else {
			keysym = vnc_keysym_for_codepoint(cp);
		}
		push_key(e, keysym, true);
		push_key(e, keysym, false);
		if (++*characters > MAX_TYPE_CHARACTERS) {
			error_set(err, 0, "text is longer than %d characters; split it",
				  MAX_TYPE_CHARACTERS);
			return false;
		}
	}
	return true;
}

bool tools_do_type(struct bridge_session *s, struct mcp_call *call, const char *text)
{
	struct events e = { 0 };
	size_t characters;
	struct error err;
	if (!text_to_events(text, &e, &characters, &err)) {
		free(e.items);
		mcp_call_fail(call, "%s", err.message);
		return false;
	}
	return send_events(s, call, &e);
}

static bool parse_keys(struct mcp_call *call, const char *keys, struct vnc_key_combo *combos,
		       size_t *count)
{
	struct error err;
	if (!vnc_keys_parse(keys, combos, VNC_MAX_COMBOS, count, &err)) {
		mcp_call_fail(call, "%s", err.message);
		return false;
	}
	return true;
}

bool tools_do_press(struct bridge_session *s, struct mcp_call *call, const char *keys)
{
	struct vnc_key_combo combos[VNC_MAX_COMBOS];
	size_t count;
	if (!parse_keys(call, keys, combos, &count))
		return false;
	struct events e = { 0 };
	for (size_t i = 0; i < count; i++) {
		push_keys(&e, &combos[i], true);
		push_keys(&e, &combos[i], false);
	}
	return send_events(s, call, &e);
}

bool tools_do_hold_key(struct bridge_session *s, struct mcp_call *call, const char *keys,
		       int duration_ms)
{
	struct vnc_key_combo combos[VNC_MAX_COMBOS];
	size_t count;
	if (!parse_keys(call, keys, combos, &count))
		return false;
	struct events e = { 0 };
	for (size_t i = 0; i < count; i++)
		push_keys(&e, &combos[i], true);
	push_pause(&e, duration_ms);
	for (size_t i = count; i-- > 0;)
		push_keys(&e, &combos[i], false);
	return send_events(s, call, &e);
}

bool tools_do_wait(struct bridge_session *s, struct mcp_call *call, int ms, bool until_settled,
		   int quiet_ms, int timeout_ms, struct tools_wait_report *report)
{
	struct vnc_framebuffer *fb = bridge_session_framebuffer(s);
	int64_t start = clock_monotonic_ms();
	uint64_t frames_before = vnc_framebuffer_sequence(fb);
	struct tools_steps steps;
	tools_steps_init(&steps, s, call, -1, "ms");
	if (!until_settled) {
		/* A fixed wait still ends early if the session does, or the call
		 * is cancelled. */
		int64_t until = start + ms;
		while (clock_monotonic_ms() < until && bridge_session_usable(s, NULL) &&
		       !mcp_call_cancelled(call)) {
			int64_t left = until - clock_monotonic_ms();
			struct timespec pause = { 0, (left < 50 ? left : 50) * 1000000L };
			nanosleep(&pause, NULL);
			long long waited = (long long)(clock_monotonic_ms() - start);
			tools_report(&steps, (double)waited, "waited %lld of %d ms", waited, ms);
		}
		struct error err;
		if (!bridge_session_usable(s, &err)) {
			mcp_call_fail(call, "%s while waiting", err.message);
			return false;
		}
		if (mcp_call_cancelled(call)) {
			mcp_call_fail(call, "the wait was cancelled");
			return false;
		}
		unsigned long long changes = vnc_framebuffer_sequence(fb) - frames_before;
		mcp_call_text(call, "Waited %d ms; the screen changed %llu times meanwhile.", ms,
			      changes);
		if (report)
			*report = (struct tools_wait_report){ ms, changes, false };
		return true;
	}
	/* In slices, so a cancel is seen within one. */
	int64_t give_up = start + timeout_ms;
	enum vnc_wait_result r = VNC_WAIT_TIMEOUT;
	for (;;) {
		int64_t left = give_up - clock_monotonic_ms();
		r = vnc_framebuffer_wait_settled(fb, start, quiet_ms,
						 left < WAIT_SLICE_MS ? (int)(left > 0 ? left : 0)
								      : WAIT_SLICE_MS);
		if (r != VNC_WAIT_TIMEOUT || left <= WAIT_SLICE_MS)
			break;
		if (mcp_call_cancelled(call)) {
			mcp_call_fail(call, "the wait was cancelled");
			return false;
		}
		long long waited = (long long)(clock_monotonic_ms() - start);
		tools_report(&steps, (double)waited,
			     "waited %lld of at most %d ms for the screen to settle", waited,
			     timeout_ms);
	}
	long long waited = (long long)(clock_monotonic_ms() - start);
	unsigned long long frames = vnc_framebuffer_sequence(fb) - frames_before;
	if (r == VNC_WAIT_CLOSED) {
		struct error err;
		if (bridge_session_usable(s, &err))
			error_set(&err, 0, "the desktop connection closed");
		mcp_call_fail(call, "%s while waiting", err.message);
		return false;
	}
	if (r == VNC_WAIT_TIMEOUT)
		mcp_call_text(call,
			      "The screen was still changing after %lld ms (%llu updates); it "
			      "never stayed still for %d ms.",
			      waited, frames, quiet_ms);
	else
		mcp_call_text(call,
			      "The screen settled after %lld ms (%llu updates, then %d ms "
			      "without change).",
			      waited, frames, quiet_ms);
	if (report)
		*report = (struct tools_wait_report){ waited, frames, r == VNC_WAIT_OK };
	return true;
}

/* Handlers of the named tools. */

/* The wait tool's data: {"mode":"fixed"|"settle","waited_ms","updates"} plus
 * "settled" after a settle wait, next to the sentence tools_do_wait wrote. */
static void reply_wait(struct mcp_call *call, bool until_settled,
		       const struct tools_wait_report *report)
{
	cJSON *reply = cJSON_CreateObject();
	bool ok = reply &&
		  cJSON_AddStringToObject(reply, "mode", until_settled ? "settle" : "fixed") &&
		  cJSON_AddNumberToObject(reply, "waited_ms", (double)report->waited_ms) &&
		  cJSON_AddNumberToObject(reply, "updates", (double)report->updates) &&
		  (!until_settled || cJSON_AddBoolToObject(reply, "settled", report->settled));
	if (!ok) {
		cJSON_Delete(reply);
		mcp_call_fail(call, "out of memory");
		return;
	}
	tools_reply_data(call, reply);
}

static struct bridge_session *acting_session(struct mcp_call *call, const cJSON *args,
					     struct bridge_tools_context *context)
{
	return tools_usable_session(context, call, args);
}

static enum tools_button button_arg(const cJSON *args)
{
	enum tools_button button = TOOLS_LEFT;
	tools_parse_button(tools_string(args, "button", "left"), &button);
	return button;
}

void tools_click(struct mcp_call *call, const cJSON *args, struct bridge_tools_context *context)
{
	struct bridge_session *s = acting_session(call, args, context);
	int x, y;
	if (!s || !tools_point(s, call, args, false, &x, &y))
		return;
	int count = tools_int(args, "count", 1);
	enum tools_button button = button_arg(args);
	const char *modifiers = tools_string(args, "modifiers", NULL);
	if (!tools_do_click(s, call, x, y, button, count, modifiers))
		return;
	static const char *const times[] = { "", "once", "twice", "three times" };
	mcp_call_text(call, "Clicked %s %s%s%s.", button_name(button), times[count],
		      modifiers ? " holding " : "", modifiers ? modifiers : "");
	tools_finish_action(s, call, args, clock_monotonic_ms());
}

void tools_move_mouse(struct mcp_call *call, const cJSON *args,
		      struct bridge_tools_context *context)
{
	struct bridge_session *s = acting_session(call, args, context);
	int x, y;
	if (!s || !tools_point(s, call, args, true, &x, &y) || !tools_do_move(s, call, x, y))
		return;
	mcp_call_text(call, "Moved the pointer.");
	tools_finish_action(s, call, args, clock_monotonic_ms());
}

static void mouse_button(struct mcp_call *call, const cJSON *args,
			 struct bridge_tools_context *context, bool down)
{
	struct bridge_session *s = acting_session(call, args, context);
	int x, y;
	if (!s || !tools_point(s, call, args, false, &x, &y))
		return;
	enum tools_button button = button_arg(args);
	if (!tools_do_button(s, call, x, y, button, down))
		return;
	mcp_call_text(call,
		      down ? "Pressed the %s button; it stays down until mouse_up."
			   : "Released the %s button.",
		      button_name(button));
	tools_finish_action(s, call, args, clock_monotonic_ms());
}

void tools_mouse_down(struct mcp_call *call, const cJSON *args,
		      struct bridge_tools_context *context)
{
	mouse_button(call, args, context, true);
}

void tools_mouse_up(struct mcp_call *call, const cJSON *args, struct bridge_tools_context *context)
{
	mouse_button(call, args, context, false);
}

/* Reads [x, y] pairs from a path, from/to, into native points. */
static int drag_points(struct bridge_session *s, struct mcp_call *call, const cJSON *args,
		       int *points)
{
	const cJSON *path = cJSON_GetObjectItemCaseSensitive(args, "path");
	const cJSON *from = cJSON_GetObjectItemCaseSensitive(args, "from");
	const cJSON *to = cJSON_GetObjectItemCaseSensitive(args, "to");
	if (path && (from || to)) {
		mcp_call_fail(call, "give either path or from and to, not both");
		return 0;
	}
	const cJSON *pair_list[2] = { from, to };
	int count = 0;
	if (path) {
		const cJSON *pair;
		cJSON_ArrayForEach(pair, path)
		{
			if (!tools_check_point(s, call, cJSON_GetArrayItem(pair, 0)->valueint,
					       cJSON_GetArrayItem(pair, 1)->valueint, "path point",
					       &points[count * 2], &points[count * 2 + 1]))
				return 0;
			count++;
		}
		return count;
	}
	if (!from || !to) {
		mcp_call_fail(call,
			      "drag needs path [[x, y], ...] or both from [x, y] and to [x, y]");
		return 0;
	}
	for (int i = 0; i < 2; i++) {
		if (!tools_check_point(s, call, cJSON_GetArrayItem(pair_list[i], 0)->valueint,
				       cJSON_GetArrayItem(pair_list[i], 1)->valueint,
				       i ? "to" : "from", &points[i * 2], &points[i * 2 + 1]))
			return 0;
	}
	return 2;
}

void tools_drag(struct mcp_call *call, const cJSON *args, struct bridge_tools_context *context)
{
	struct bridge_session *s = acting_session(call, args, context);
	if (!s)
		return;
	int *points = malloc(sizeof(int) * 2 * MAX_PATH_POINTS);
	if (!points) {
		mcp_call_fail(call, "out of memory");
		return;
	}
	int count = drag_points(s, call, args, points);
	enum tools_button button = button_arg(args);
	if (count >= 2 && tools_do_drag(s, call, points, count, button)) {
		mcp_call_text(call, "Dragged with the %s button through %d points.",
			      button_name(button), count);
		tools_finish_action(s, call, args, clock_monotonic_ms());
	}
	free(points);
}

void tools_scroll(struct mcp_call *call, const cJSON *args, struct bridge_tools_context *context)
{
	struct bridge_session *s = acting_session(call, args, context);
	int x, y;
	if (!s || !tools_point(s, call, args, false, &x, &y))
		return;
	const char *direction = tools_string(args, "direction", "down");
	int amount = tools_int(args, "amount", 3);
	if (!tools_do_scroll(s, call, x, y, direction, amount,
			     tools_string(args, "modifiers", NULL)))
		return;
	mcp_call_text(call, "Scrolled %s by %d.", direction, amount);
	tools_finish_action(s, call, args, clock_monotonic_ms());
}

void tools_type(struct mcp_call *call, const cJSON *args, struct bridge_tools_context *context)
{
	struct bridge_session *s = acting_session(call, args, context);
	if (!s || !tools_do_type(s, call, tools_string(args, "text", "")))
		return;
	mcp_call_text(call, "Typed the text.");
	tools_finish_action(s, call, args, clock_monotonic_ms());
}

void tools_press(struct mcp_call *call, const cJSON *args, struct bridge_tools_context *context)
{
	struct bridge_session *s = acting_session(call, args, context);
	const char *keys = tools_string(args, "keys", "");
	if (!s || !tools_do_press(s, call, keys))
		return;
	mcp_call_text(call, "Pressed %s.", keys);
	tools_finish_action(s, call, args, clock_monotonic_ms());
}

void tools_hold_key(struct mcp_call *call, const cJSON *args, struct bridge_tools_context *context)
{
	struct bridge_session *s = acting_session(call, args, context);
	const char *keys = tools_string(args, "keys", "");
	int duration = tools_int(args, "duration_ms", 1000);
	if (!s || !tools_do_hold_key(s, call, keys, duration))
		return;
	mcp_call_text(call, "Held %s for %d ms.", keys, duration);
	tools_finish_action(s, call, args, clock_monotonic_ms());
}

void tools_wait(struct mcp_call *call, const cJSON *args, struct bridge_tools_context *context)
{
	struct bridge_session *s = acting_session(call, args, context);
	if (!s)
		return;
	const cJSON *ms = cJSON_GetObjectItemCaseSensitive(args, "ms");
	bool settle = tools_bool(args, "until_settled", !ms);
	if (ms && settle) {
		mcp_call_fail(call, "give ms for a fixed wait or until_settled, not both");
		return;
	}
	struct tools_wait_report report;
	if (!tools_do_wait(s, call, tools_int(args, "ms", 0), settle,
			   tools_int(args, "quiet_ms", SETTLE_QUIET_MS),
			   tools_int(args, "timeout_ms", SETTLE_TIMEOUT_MS), &report))
		return;
	reply_wait(call, settle, &report);
	tools_finish_action(s, call, args, clock_monotonic_ms());
}
