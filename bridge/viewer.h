/* Browser viewers of one session: the tokens of its control and view-only
 * links, and a hub thread that turns framebuffer changes into PNG updates.
 * An update is encoded once and shared by every viewer in the same state;
 * a viewer still busy with the last one gets no second: its next update
 * merges everything that changed meanwhile. Nothing queues without bound. */
#ifndef LIZARD_BRIDGE_VIEWER_H
#define LIZARD_BRIDGE_VIEWER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bridge_viewers;
struct bridge_viewer;
struct vnc_framebuffer;

enum bridge_viewer_role { BRIDGE_VIEWER_NONE, BRIDGE_VIEWER_CONTROL, BRIDGE_VIEWER_VIEW };

/* A message for viewers: data[headroom .. headroom + len), shared. */
struct bridge_viewer_message {
	int refs; /* under the hub lock */
	bool text;
	size_t len;
	unsigned char data[];
};

/* headroom: bytes free before each message's data (LWS_PRE). wake is
 * called, from the hub thread, when a viewer has something to send. */
struct bridge_viewers *bridge_viewers_create(struct vnc_framebuffer *fb, size_t headroom,
					     void (*wake)(void *), void *wake_context);
void bridge_viewers_destroy(struct bridge_viewers *viewers);

/* New tokens (32 hex digits, 128 bits each); any old ones stop working and
 * their viewers are disconnected. */
void bridge_viewers_new_tokens(struct bridge_viewers *viewers, char control[33], char view[33]);
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

#endif
