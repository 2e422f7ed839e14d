/* Tools that act: click, move_mouse, scroll, type, press. Each builds the
 * whole event sequence first and sends it in one go, so a sequence never
 * stops halfway with a button or key left down (if the connection drops,
 * the server releases what the client held). */
#include "tools_internal.h"

#include "session.h"
#include "../mcp/server.h"
#include "../vnc/conn.h"
#include "../vnc/keys.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TYPE_CHARACTERS 100000

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
	push(e, (struct vnc_input_event){ .type = VNC_INPUT_POINTER, .x = x, .y = y,
					  .buttons = buttons });
}

static void push_key(struct events *e, uint32_t keysym, bool down)
{
	push(e, (struct vnc_input_event){ .type = VNC_INPUT_KEY, .keysym = keysym, .down = down });
}

static void push_combo(struct events *e, const struct vnc_key_combo *combo)
{
	for (int i = 0; i < combo->count; i++)
		push_key(e, combo->keysyms[i], true);
	for (int i = combo->count - 1; i >= 0; i--)
		push_key(e, combo->keysyms[i], false);
}

/* Sends and reports; frees the events. */
static bool send_events(struct bridge_session *s, struct mcp_call *call, struct events *e)
{
	char err[320];
	bool ok = false;
	if (e->out_of_memory)
		mcp_call_fail(call, "out of memory building the input events");
	else if (!bridge_session_send_input(s, e->items, e->count, err, sizeof(err)))
		mcp_call_fail(call, "%s", err);
	else
		ok = true;
	free(e->items);
	memset(e, 0, sizeof(*e));
	return ok;
}

static int button_mask(const char *name)
{
	if (strcmp(name, "right") == 0)
		return VNC_BUTTON_RIGHT;
	if (strcmp(name, "middle") == 0)
		return VNC_BUTTON_MIDDLE;
	return VNC_BUTTON_LEFT;
}

static void click(struct mcp_call *call, const cJSON *args, void *userdata)
{
	struct bridge_session *s = tools_usable_session(userdata, call, args);
	int x, y;
	if (!s || !tools_point(s, call, args, false, &x, &y))
		return;
	const char *button = tools_string(args, "button", "left");
	int count = tools_int(args, "count", 1);
	int mask = button_mask(button);

	struct events e = { 0 };
	push_pointer(&e, x, y, 0);
	for (int i = 0; i < count; i++) {
		push_pointer(&e, x, y, mask);
		push_pointer(&e, x, y, 0);
	}
	static const char *const times[] = { "", "once", "twice", "three times" };
	if (send_events(s, call, &e))
		mcp_call_text(call, "Clicked %s %s at (%d, %d).", button, times[count], x, y);
}

static void move_mouse(struct mcp_call *call, const cJSON *args, void *userdata)
{
	struct bridge_session *s = tools_usable_session(userdata, call, args);
	int x, y;
	if (!s || !tools_point(s, call, args, true, &x, &y))
		return;
	struct events e = { 0 };
	push_pointer(&e, x, y, 0);
	if (send_events(s, call, &e))
		mcp_call_text(call, "Moved the pointer to (%d, %d).", x, y);
}

static void scroll(struct mcp_call *call, const cJSON *args, void *userdata)
{
	struct bridge_session *s = tools_usable_session(userdata, call, args);
	int x, y;
	if (!s || !tools_point(s, call, args, false, &x, &y))
		return;
	const char *direction = tools_string(args, "direction", "down");
	int amount = tools_int(args, "amount", 3);
	int wheel = strcmp(direction, "up") == 0     ? VNC_BUTTON_WHEEL_UP
		    : strcmp(direction, "left") == 0  ? VNC_BUTTON_WHEEL_LEFT
		    : strcmp(direction, "right") == 0 ? VNC_BUTTON_WHEEL_RIGHT
						      : VNC_BUTTON_WHEEL_DOWN;
	struct events e = { 0 };
	push_pointer(&e, x, y, 0);
	for (int i = 0; i < amount; i++) {
		push_pointer(&e, x, y, wheel);
		push_pointer(&e, x, y, 0);
	}
	if (send_events(s, call, &e))
		mcp_call_text(call, "Scrolled %s by %d at (%d, %d).", direction, amount, x, y);
}

/* Text to key events: "\n" is Return, "\t" Tab, "\r\n" one Return. */
static bool text_to_events(const char *text, struct events *e, size_t *characters, char *err,
			   size_t err_size)
{
	size_t len = strlen(text);
	*characters = 0;
	for (size_t i = 0; i < len;) {
		uint32_t cp;
		size_t n = vnc_utf8_decode(text + i, len - i, &cp);
		if (n == 0) {
			snprintf(err, err_size, "text is not valid UTF-8 at byte %zu", i);
			return false;
		}
		i += n;
		uint32_t keysym;
		if (cp == '\r' && i < len && text[i] == '\n')
			continue;
		if (cp == '\n' || cp == '\r')
			keysym = 0xff0d; /* Return */
		else if (cp == '\t')
			keysym = 0xff09; /* Tab */
		else if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) {
			snprintf(err, err_size,
				 "text contains control character U+%04X at character %zu; type "
				 "can send text, newlines and tabs, press sends keys",
				 cp, *characters);
			return false;
		} else
			keysym = vnc_keysym_for_codepoint(cp);
		push_key(e, keysym, true);
		push_key(e, keysym, false);
		(*characters)++;
		if (*characters > MAX_TYPE_CHARACTERS) {
			snprintf(err, err_size, "text is longer than %d characters; split it",
				 MAX_TYPE_CHARACTERS);
			return false;
		}
	}
	return true;
}

static void type(struct mcp_call *call, const cJSON *args, void *userdata)
{
	struct bridge_session *s = tools_usable_session(userdata, call, args);
	if (!s)
		return;
	struct events e = { 0 };
	size_t characters;
	char err[256];
	if (!text_to_events(tools_string(args, "text", ""), &e, &characters, err, sizeof(err))) {
		free(e.items);
		mcp_call_fail(call, "%s", err);
		return;
	}
	if (send_events(s, call, &e))
		mcp_call_text(call, "Typed %zu characters.", characters);
}

static void press(struct mcp_call *call, const cJSON *args, void *userdata)
{
	struct bridge_session *s = tools_usable_session(userdata, call, args);
	if (!s)
		return;
	const char *keys = tools_string(args, "keys", "");
	struct vnc_key_combo combos[VNC_MAX_COMBOS];
	size_t count;
	char err[512];
	if (!vnc_keys_parse(keys, combos, VNC_MAX_COMBOS, &count, err, sizeof(err))) {
		mcp_call_fail(call, "%s", err);
		return;
	}
	struct events e = { 0 };
	for (size_t i = 0; i < count; i++)
		push_combo(&e, &combos[i]);
	if (send_events(s, call, &e))
		mcp_call_text(call, "Pressed %s.", keys);
}

#define POINT_PROPERTIES                                                                   \
	"\"x\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"Horizontal pixel, 0 "   \
	"at the left edge.\"},"                                                             \
	"\"y\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"Vertical pixel, 0 at "  \
	"the top edge.\"},"

static const struct mcp_tool input_tools[] = {
	{
		.name = "click",
		.title = "Click",
		.description = "Click a mouse button at (x, y), or where the pointer is when x "
			       "and y are left out. count 2 double-clicks, 3 triple-clicks.",
		.input_schema =
			"{\"type\":\"object\",\"properties\":{" POINT_PROPERTIES
			"\"button\":{\"type\":\"string\",\"enum\":[\"left\",\"right\","
			"\"middle\"],\"description\":\"Default left.\"},"
			"\"count\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":3,"
			"\"description\":\"1 click (default), 2 double, 3 triple.\"},"
			SESSION_PROPERTY "}}",
		.handler = click,
	},
	{
		.name = "move_mouse",
		.title = "Move the mouse",
		.description = "Move the mouse pointer to (x, y) without clicking, e.g. to "
			       "hover.",
		.input_schema = "{\"type\":\"object\",\"properties\":{" POINT_PROPERTIES
				SESSION_PROPERTY "},\"required\":[\"x\",\"y\"]}",
		.handler = move_mouse,
	},
	{
		.name = "scroll",
		.title = "Scroll",
		.description = "Turn the mouse wheel at (x, y), or where the pointer is: "
			       "direction up, down, left or right, amount in wheel clicks "
			       "(default 3; one click is about three lines of text).",
		.input_schema =
			"{\"type\":\"object\",\"properties\":{" POINT_PROPERTIES
			"\"direction\":{\"type\":\"string\",\"enum\":[\"up\",\"down\","
			"\"left\",\"right\"]},"
			"\"amount\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":50,"
			"\"description\":\"Wheel clicks, default 3.\"}," SESSION_PROPERTY
			"},\"required\":[\"direction\"]}",
		.handler = scroll,
	},
	{
		.name = "type",
		.title = "Type text",
		.description = "Type text into the focused window, character by character. Any "
			       "Unicode text works; \\n presses Return and \\t presses Tab. To "
			       "press shortcuts or special keys use press.",
		.input_schema = "{\"type\":\"object\",\"properties\":{"
				"\"text\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":100000,"
				"\"description\":\"The text to type.\"}," SESSION_PROPERTY
				"},\"required\":[\"text\"]}",
		.handler = type,
	},
	{
		.name = "press",
		.title = "Press keys",
		.description =
			"Press keys or shortcuts. Join keys held together with '+' "
			"(ctrl+shift+t) and separate presses with spaces (\"ctrl+a Delete\"). "
			"Names are X keysyms in any case (Return, Tab, Escape, BackSpace, F5, "
			"Page_Down, Home, a, A) or aliases: enter, esc, ctrl, alt, shift, "
			"super/cmd/win, pgup, pgdn, del, backspace, up, down, left, right.",
		.input_schema = "{\"type\":\"object\",\"properties\":{"
				"\"keys\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":1000,"
				"\"description\":\"For example \\\"Return\\\", \\\"ctrl+c\\\", "
				"\\\"alt+F4\\\", \\\"ctrl+a Delete\\\".\"}," SESSION_PROPERTY
				"},\"required\":[\"keys\"]}",
		.handler = press,
	},
};

bool tools_register_input(struct mcp_server *server, struct bridge_context *context)
{
	for (size_t i = 0; i < sizeof(input_tools) / sizeof(input_tools[0]); i++)
		if (!mcp_server_add_tool(server, &input_tools[i], context))
			return false;
	return true;
}
