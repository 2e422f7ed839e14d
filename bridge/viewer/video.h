/* SPDX-License-Identifier: MIT */
/* WebRTC video for viewers (the webrtc/ layer): a session's stream, fed
 * from its framebuffer by a thread that pushes a frame only when the
 * picture changed (at most VIDEO_MAX_FPS a second), and each viewer's
 * peer, signalled over the viewer's own socket. A viewer receiving video
 * gets no rectangles; when its video stops it is repainted whole.
 *
 * The page's messages ("webrtc-start", "-answer", "-candidate", "-stop")
 * and the server's ("webrtc-offer", "-candidate", "-failed") are in
 * wire.h. Video is there only when the daemon was started with it
 * (bridge_video_init) and GStreamer has what it needs. */
#ifndef LIZARD_BRIDGE_VIEWER_VIDEO_H
#define LIZARD_BRIDGE_VIEWER_VIDEO_H

#include "util/error.h"

#include <stdbool.h>
#include <stddef.h>

struct bridge_video;
struct bridge_viewer;
struct bridge_viewer_message;
struct vnc_framebuffer;

/* Once, from main: video is offered to viewers from then on. False, with
 * why, when this machine cannot (viewers then get rectangles only). */
bool bridge_video_init(struct error *err);
bool bridge_video_available(void);
/* At exit, once every session has ended: lets go of what video holds for
 * the process (GStreamer's own). */
void bridge_video_finish(void);

/* A session's video; nothing runs until a viewer asks for it. NULL when
 * video is not available or memory ran out. */
struct bridge_video *bridge_video_create(struct vnc_framebuffer *fb);
/* After every viewer's video has stopped. NULL is accepted. */
void bridge_video_destroy(struct bridge_video *video);

/* A page's "webrtc-..." message (JSON, len bytes): starts, signals or
 * stops the viewer's video. A bad one is answered with "webrtc-failed"
 * and the viewer goes on with rectangles. On the network loop's thread. */
void bridge_viewer_video_message(struct bridge_viewer *viewer, const char *json, size_t len);
/* The viewer's next signalling message for its page, or NULL. Under the
 * hub's lock. */
struct bridge_viewer_message *bridge_viewer_video_next(struct bridge_viewer *viewer);
/* The next message a control viewer's page sent over its video's input
 * channel (JSON as on the socket, NUL-terminated, *len bytes; the caller
 * frees it and handles it as it would the socket's), or NULL. View-only
 * viewers have no such channel. On the network loop's thread. */
char *bridge_viewer_video_next_input(struct bridge_viewer *viewer, size_t *len);
/* Stops the viewer's video (it left). Not under the hub's lock. */
void bridge_viewer_video_stop(struct bridge_viewer *viewer);

#endif
