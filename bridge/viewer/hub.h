/* SPDX-License-Identifier: MIT */
/* Browser viewers of one session: the tokens of its control and view-only
 * links, and a hub thread that turns framebuffer changes into updates.
 * Each viewer has an account of what its canvas lacks: the server's copies
 * (CopyRect) to replay in order, then rectangles to paint from the
 * framebuffer (a fill when one colour, palette indices when few, else PNG;
 * JPEG for large photographic ones when the page asked for speed, sent
 * again exactly once they are still), and where the pointer is, which the
 * page draws itself. An update is encoded
 * once and shared by every viewer in the same state. A viewer gets the next
 * one only when its page has painted all but one (it acknowledges each), so
 * a slow page gets fewer, larger updates that merge everything that changed
 * meanwhile, never a queue of old ones. Nothing queues without bound. */
#ifndef LIZARD_BRIDGE_VIEWER_H
#define LIZARD_BRIDGE_VIEWER_H

#include "bridge/viewer/types.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bridge_viewers;
struct bridge_viewer;
struct vnc_framebuffer;
struct vnc_input_event;


/* headroom: bytes free before each message's data (LWS_PRE). wake is
 * called, from the hub thread, when a viewer has something to send. */
struct bridge_viewers *bridge_viewers_create(struct vnc_framebuffer *fb, size_t headroom,
					     void (*wake)(void *), void *wake_context);
void bridge_viewers_destroy(struct bridge_viewers *viewers);

/* New tokens (32 hex digits, 128 bits each); any old ones stop working and
 * their viewers are disconnected. ice_servers, NULL for none, is the JSON
 * array (checked by the caller) that the pages of the new links pass to
 * RTCPeerConnection as iceServers: it goes in the hello of every viewer
 * offered video, never in a link or the log. It is copied, and the copy,
 * which may hold TURN credentials, is wiped when replaced, revoked or
 * freed. False, with nothing changed, when out of memory. */
bool bridge_viewers_new_tokens(struct bridge_viewers *viewers, const char *ice_servers,
			       char control[33], char view[33]);
/* No tokens work any more; every viewer is disconnected. */
void bridge_viewers_revoke(struct bridge_viewers *viewers);
/* Compares in constant time. */
enum bridge_viewer_role bridge_viewers_check(struct bridge_viewers *viewers, const char *token);
/* The session ended: viewers are told and disconnected. */
void bridge_viewers_end(struct bridge_viewers *viewers);
int bridge_viewers_count(struct bridge_viewers *viewers);
/* Tells every viewer, now and on joining, that the session is paused (or
 * running again); the page shows it as its status. */
void bridge_viewers_set_paused(struct bridge_viewers *viewers, bool paused);

/* The desktop's clipboard changed (UTF-8 text, len bytes, NUL-terminated):
 * control viewers are sent {"type":"clipboard","text":...}, or, over
 * BRIDGE_VIEWER_MAX_CLIPBOARD bytes, {"type":"clipboard","too_large":len}.
 * View-only viewers get nothing from the clipboard. */
void bridge_viewers_clipboard(struct bridge_viewers *viewers, const char *utf8, size_t len);

struct bridge_viewer *bridge_viewers_attach(struct bridge_viewers *viewers,
					    enum bridge_viewer_role role);
/* The viewer is gone: releases it and anything pending. */
void bridge_viewer_detach(struct bridge_viewer *viewer);
/* The next message to send (a reference the caller releases with
 * bridge_viewer_sent), or NULL. *closing is set when the viewer must be
 * disconnected after what it has been given (ended, revoked). */
struct bridge_viewer_message *bridge_viewer_next(struct bridge_viewer *viewer, bool *closing,
						 bool *ended);
void bridge_viewer_sent(struct bridge_viewer *viewer, struct bridge_viewer_message *message);
/* BRIDGE_VIEWER_NONE once the viewer's link was revoked or its session
 * ended: from that moment its input counts for nothing. */
enum bridge_viewer_role bridge_viewer_role(struct bridge_viewer *viewer);
/* The page has painted an update it was sent. */
void bridge_viewer_painted(struct bridge_viewer *viewer);
/* The page prefers speed (JPEG where it pays) to exact pixels in motion. */
void bridge_viewer_set_fast(struct bridge_viewer *viewer, bool fast);

/* Input from a control viewer passes through here before it goes to the
 * desktop, so the hub knows what the viewer holds down. A key release is
 * rewritten to the keysym that went down for the same physical key (code,
 * the page's name for it), since the page's release may carry another
 * (Shift let go first: "A" down, "a" up). Returns false when the event must
 * be dropped (too many keys held: a bound, not a keyboard). */
bool bridge_viewer_track_input(struct bridge_viewer *viewer, struct vnc_input_event *event,
			       uint32_t code);
/* Events that release everything the viewer still holds (keys, then
 * buttons), into out (room for BRIDGE_VIEWER_MAX_HELD + 1); forgets them.
 * Returns how many. */
size_t bridge_viewer_release_all(struct bridge_viewer *viewer, struct vnc_input_event *out);

#endif
