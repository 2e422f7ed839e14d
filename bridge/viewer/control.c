/* SPDX-License-Identifier: MIT */
/* A viewer page's input for the desktop (see control.h). */
#include "bridge/viewer/control.h"

#include "bridge/viewer/hub.h"
#include "bridge/viewer/hub_state.h"
#include "bridge/viewer/wire.h"
#include "util/log.h"
#include "vnc/conn.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <string.h>

/* The page names physical keys by KeyboardEvent.code ("KeyA"); any string
 * up to 32 bytes, folded into a number (FNV-1a) to find the key again. */
static uint32_t key_code(const cJSON *code, uint32_t keysym)
{
	const char *name = cJSON_GetStringValue(code);
	if (!name || !*name || strlen(name) > VIEWER_WIRE_MAX_KEY_CODE)
		return keysym;
	uint32_t hash = 2166136261u;
	for (const char *p = name; *p; p++)
		hash = (hash ^ (unsigned char)*p) * 16777619u;
	return hash;
}

void bridge_viewer_release_held(struct bridge_viewer *viewer, const struct bridge_viewer_sink *sink)
{
	struct vnc_input_event events[BRIDGE_VIEWER_MAX_HELD + 1];
	size_t count = bridge_viewer_release_all(viewer, events);
	if (count)
		sink->post(sink->context, events, count);
}

/* Text pasted into a control viewer's page, for the desktop's clipboard. */
static void paste(const cJSON *text, const struct bridge_viewer_sink *sink)
{
	const char *utf8 = cJSON_GetStringValue(text);
	size_t len = utf8 ? strlen(utf8) : 0;
	if (utf8 && len <= BRIDGE_VIEWER_MAX_CLIPBOARD)
		sink->paste(sink->context, utf8, len);
	else
		log_debug("viewer clipboard text dropped: %s", utf8 ? "too large" : "not a string");
}

/* Pointer and key events from a control viewer, checked and forwarded.
 * False when the viewer must go: its link was revoked (or its session
 * ended), which takes effect at once, whether or not it reads. */
bool bridge_viewer_handle_input(struct bridge_viewer *viewer, const char *text, size_t len,
				const struct bridge_viewer_sink *sink)
{
	enum bridge_viewer_role role = bridge_viewer_role(viewer);
	if (role == BRIDGE_VIEWER_NONE) {
		return false;
	}
	if (role != BRIDGE_VIEWER_CONTROL)
		return true; /* view only: dropped, whatever the page sent */
	cJSON *m = cJSON_ParseWithLength(text, len);
	const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "type"));
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(m, "x");
	const cJSON *y = cJSON_GetObjectItemCaseSensitive(m, "y");
	const cJSON *buttons = cJSON_GetObjectItemCaseSensitive(m, "buttons");
	const cJSON *keysym = cJSON_GetObjectItemCaseSensitive(m, "keysym");
	const cJSON *down = cJSON_GetObjectItemCaseSensitive(m, "down");
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(m, "code");
	struct vnc_input_event event = { 0 };
	bool valid = false;
	if (type && strcmp(type, VIEWER_WIRE_TYPE_POINTER) == 0 && cJSON_IsNumber(x) &&
	    cJSON_IsNumber(y) && cJSON_IsNumber(buttons) && x->valueint >= 0 && y->valueint >= 0 &&
	    x->valueint < VIEWER_WIRE_COORDINATE_LIMIT &&
	    y->valueint < VIEWER_WIRE_COORDINATE_LIMIT && buttons->valueint >= 0 &&
	    buttons->valueint < VIEWER_WIRE_BUTTONS_LIMIT) {
		event = (struct vnc_input_event){ .type = VNC_INPUT_POINTER,
						  .x = x->valueint,
						  .y = y->valueint,
						  .buttons = buttons->valueint };
		valid = bridge_viewer_track_input(viewer, &event, 0);
	} else if (type && strcmp(type, VIEWER_WIRE_TYPE_KEY) == 0 && cJSON_IsNumber(keysym) &&
		   cJSON_IsBool(down) && keysym->valuedouble > 0 &&
		   keysym->valuedouble < VIEWER_WIRE_KEYSYM_LIMIT) {
		event = (struct vnc_input_event){ .type = VNC_INPUT_KEY,
						  .keysym = (uint32_t)keysym->valuedouble,
						  .down = cJSON_IsTrue(down) };
		valid = bridge_viewer_track_input(viewer, &event, key_code(code, event.keysym));
	} else if (type && strcmp(type, VIEWER_WIRE_TYPE_RELEASE) == 0) {
		bridge_viewer_release_held(viewer, sink);
	} else if (type && strcmp(type, VIEWER_WIRE_TYPE_CLIPBOARD) == 0) {
		paste(cJSON_GetObjectItemCaseSensitive(m, "text"), sink);
	}
	cJSON_Delete(m);
	if (valid)
		sink->post(sink->context, &event, 1);
	return true;
}


bool bridge_viewer_track_input(struct bridge_viewer *w, struct vnc_input_event *event,
			       uint32_t code)
{
	if (event->type == VNC_INPUT_POINTER) {
		w->buttons = event->buttons &
			     (VNC_BUTTON_LEFT | VNC_BUTTON_MIDDLE | VNC_BUTTON_RIGHT);
		w->pointer_x = event->x;
		w->pointer_y = event->y;
		return true;
	}
	if (event->type != VNC_INPUT_KEY)
		return true;
	int i = 0;
	while (i < w->held_count && w->held[i].code != code)
		i++;
	if (!event->down) {
		if (i < w->held_count) {
			event->keysym = w->held[i].keysym; /* what went down comes up */
			w->held[i] = w->held[--w->held_count];
		}
		return true;
	}
	if (i < w->held_count)
		return w->held[i].keysym == event->keysym; /* a repeat; not another key */
	if (w->held_count == BRIDGE_VIEWER_MAX_HELD)
		return false;
	w->held[w->held_count].code = code;
	w->held[w->held_count].keysym = event->keysym;
	w->held_count++;
	return true;
}

size_t bridge_viewer_release_all(struct bridge_viewer *w, struct vnc_input_event *out)
{
	size_t n = 0;
	/* Last pressed first, as fingers would let go. */
	while (w->held_count > 0)
		out[n++] = (struct vnc_input_event){ .type = VNC_INPUT_KEY,
						     .keysym = w->held[--w->held_count].keysym,
						     .down = false };
	if (w->buttons) {
		out[n++] = (struct vnc_input_event){ .type = VNC_INPUT_POINTER,
						     .x = w->pointer_x,
						     .y = w->pointer_y,
						     .buttons = 0 };
		w->buttons = 0;
	}
	return n;
}
